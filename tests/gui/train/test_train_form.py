"""The Train tab's form and plots with real widgets (offscreen): the direction prefilled from the loaded model,
the plot legends outside the data."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nmt_desktop.gui.train.device_detection import Device  # noqa: E402
from nmt_desktop.gui.train.form import TrainForm  # noqa: E402
from nmt_desktop.gui.train.plots import LivePlots  # noqa: E402
from nmt_desktop.gui.models.loader import ModelInfo  # noqa: E402


def model(src: str, tgt: str) -> ModelInfo:
    return ModelInfo(Path("/models/m"), "m", src, tgt, 0, 1, 1)


def test_direction_prefilled_when_fine_tuning_the_loaded_model(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path))
    form = TrainForm([Device("cpu", "CPU")])
    qtbot.addWidget(form)
    form.set_model(model("en", "de"))
    assert (form.src_lang.text(), form.tgt_lang.text()) == ("", "")  # from scratch: nothing assumed
    form.finetune_radio.setChecked(True)
    assert (form.src_lang.text(), form.tgt_lang.text()) == ("en", "de")
    assert form.form_config().src_lang == "en" and form.form_config().tgt_lang == "de"
    form.set_model(model("en", "fr"))  # another model: what the form put in follows it
    assert (form.src_lang.text(), form.tgt_lang.text()) == ("en", "fr")
    form.tgt_lang.setText("fr-CA")  # typed: kept
    form.set_model(model("de", "en"))
    assert (form.src_lang.text(), form.tgt_lang.text()) == ("de", "fr-CA")
    form.scratch_radio.setChecked(True)
    form.finetune_radio.setChecked(True)
    assert form.tgt_lang.text() == "fr-CA"


def test_legends_do_not_cover_the_data(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(900, 420)
    plots.show()
    for step in range(1, 500, 10):
        for key in ("train_loss", "dev_loss", "bleu", "chrf"):
            plots.add_point(key, step, 5.0 - step / 200)
    from qt_layout import wait_laid_out

    wait_laid_out(qtbot, plots)  # the legends placed and the plots laid out
    for key in ("loss", "quality"):
        item = plots.plots[key].getPlotItem()
        legend, data = item.legend, item.getViewBox()
        assert len(legend.items) == 2
        box = legend.mapRectToScene(legend.boundingRect())
        assert box.height() > 0 and not box.intersects(data.mapRectToScene(data.boundingRect()))
