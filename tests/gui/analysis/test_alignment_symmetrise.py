"""Symmetrising in the Alignments view (pytest-qt, offscreen): a tiny seeded model (en -> xx) and a tiny model
trained the other way (xx -> en), both saved as model folders that state their languages. The reverse model
is chosen by installed name, folder or .zip (file dialogs patched) and loaded on its own thread; the links
shown are core's `symmetrise(forward, flipped backward, how)` for each combination; a model of the wrong
direction is refused with one sentence, and one that stops fitting the main model is dropped."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

from nmt_desktop.core.analysis.alignment import align, default_method, symmetrise  # noqa: E402
from nmt_desktop.core.analysis.pharaoh import to_pharaoh  # noqa: E402
from nmt_desktop.core.analysis.words import words_of  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.formats.model_folder import save_model, zip_model  # noqa: E402
from nmt_desktop.gui.analysis.panel import AnalysisPanel  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

CFG = DecodeConfig(attention=True, alternatives=3)
SENTENCES = [("red cat runs big dog", None), ("red cat runs big dog", "katze rot rennt gross hund"),
             ("small bird eats water", "klein vogel wasser isst"), ("green tree sun", "gruen sonne baum mond")]
HOWS = ("intersection", "union", "grow-diag-final")


def _with_languages(folder: Path, src: str, tgt: str) -> Path:
    """The saved model folder with its config stating `src` -> `tgt`."""
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**config, "src_lang": src, "tgt_lang": tgt}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def folders(tiny_trained, tmp_path_factory) -> dict[str, Path]:
    """Model folders: "forward" (en -> xx, the session's tiny model), "reverse" (xx -> en, 200 steps)."""
    from tiny_models import build_model, tiny_config, train_tiny

    model, tokenizers = tiny_trained  # a joint vocabulary: it reads both languages
    reverse = train_tiny(build_model(tiny_config(tokenizers), seed=1), tokenizers, steps=200, seed=1, reverse=True)
    root = tmp_path_factory.mktemp("symmetrise")
    return {"forward": _with_languages(save_model(root / "tiny-en-xx", model, tokenizers, {"name": "tiny"}),
                                       "en", "xx"),
            "reverse": _with_languages(save_model(root / "tiny-xx-en", reverse, tokenizers, {"name": "tiny back"}),
                                       "xx", "en")}


@pytest.fixture(scope="module")
def forward(folders) -> Translator:
    return Translator.load(folders["forward"])


@pytest.fixture(scope="module")
def backward(folders) -> Translator:
    return Translator.load(folders["reverse"])


@pytest.fixture(scope="module")
def translations(forward) -> list:
    return [forward.translate(s, CFG) if t is None else forward.score(s, t, CFG) for s, t in SENTENCES]


@pytest.fixture
def panel(qtbot, forward, tmp_path, monkeypatch):
    """A shown Analysis panel on its Alignments page with the forward model (no user-installed models)."""
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "user-data"))
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    panel.set_translator(forward)
    panel.resize(1100, 700)
    panel.show()
    panel.tabs.setCurrentWidget(panel.alignment)
    yield panel
    panel.shutdown()


def expected_links(translation, forward: Translator, backward: Translator, how: str | None) -> list:
    """Core's links for the view's words: the forward model's, symmetrised with the reverse model's (the pair
    read the other way, given the same words) flipped to (source, target)."""
    links = align(translation, default_method(forward.card, 2), translator=forward)
    if how is None:
        return links
    src, tgt = words_of(translation.source_tokens), words_of(translation.target_tokens)
    scored = backward.score(" ".join(tgt), " ".join(src), DecodeConfig(attention=True, alternatives=0))
    back = align(scored, default_method(backward.card, 2), tgt, src, translator=backward)
    return symmetrise(links, [(i, j) for j, i in back], how)


def pick(qtbot, box, text: str) -> None:
    """Choose the reverse-model combo's item `text` as a person would (then wait for the load)."""
    index = box.model.findText(text)
    assert index >= 0, [box.model.itemText(i) for i in range(box.model.count())]
    box.model.setCurrentIndex(index)
    box.model.activated.emit(index)
    qtbot.waitUntil(lambda: not box.running, timeout=TIMEOUT_MS)


def shown(qtbot, view) -> list:
    qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT_MS)
    return view.links


def test_symmetrised_links_are_cores_for_each_combination(qtbot, panel, forward, backward, translations, folders,
                                                          monkeypatch, tmp_path) -> None:
    view, box = panel.alignment, panel.alignment.reverse
    assert not box.how.isVisibleTo(view)  # no reverse model: nothing to symmetrise
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folders["reverse"])))
    pick(qtbot, box, "Model folder…")
    assert box.reverse is not None and box.name == "tiny-xx-en" and box.model.currentText() == "tiny-xx-en"
    assert box.how.isVisibleTo(view) and box.how.currentText() == "grow-diag-final"  # the default once chosen
    differ = 0
    for translation in translations:
        panel.set_translation(translation, CFG)
        seen = {}
        for how in HOWS:
            box.how.setCurrentIndex(box.how.findText(how))
            seen[how] = shown(qtbot, view)
            assert seen[how] == expected_links(translation, forward, backward, how), how
            assert len(view.lines) == len(seen[how])
            assert view.picker.description.text().endswith(f"  (recommended); symmetrised with tiny-xx-en ({how})")
            assert "aligns the pair the other way" in view.picker.description.toolTip()
        differ += seen["union"] != seen["intersection"]
        view.copy_pharaoh()  # what is shown is what is copied and exported
        assert QGuiApplication.clipboard().text() == to_pharaoh(seen["grow-diag-final"])
        view.export(tmp_path / "a.txt")
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == to_pharaoh(seen["grow-diag-final"]) + "\n"
        box.how.setCurrentIndex(box.how.findText("off"))
        assert shown(qtbot, view) == expected_links(translation, forward, backward, None)
        assert "symmetrised" not in view.picker.description.text()
        box.how.setCurrentIndex(box.how.findText("grow-diag-final"))
    assert differ > 0  # the two directions disagree somewhere: the combinations are told apart

    view.picker.decision.setCurrentIndex(view.picker.decision.findData("argmax"))  # the forward reading changes
    links = shown(qtbot, view)
    method = replace(default_method(forward.card, 2), decision="argmax")
    forward_links = align(translations[-1], method, translator=forward)
    src, tgt = words_of(translations[-1].source_tokens), words_of(translations[-1].target_tokens)
    scored = backward.score(" ".join(tgt), " ".join(src), DecodeConfig(attention=True, alternatives=0))
    back = align(scored, default_method(backward.card, 2), tgt, src, translator=backward)
    assert links == symmetrise(forward_links, [(i, j) for j, i in back], "grow-diag-final")


def test_a_reverse_model_by_installed_name_or_zip(qtbot, panel, folders, monkeypatch, tmp_path) -> None:
    installed = tmp_path / "user-data" / "models" / "tiny-xx-en"
    shutil.copytree(folders["reverse"], installed)
    view, box = panel.alignment, panel.alignment.reverse
    panel.set_translator(panel.translator)  # the list is read again
    pick(qtbot, box, "tiny-xx-en (xx → en)")
    assert box.reverse is not None and box.path == str(installed)
    assert box.model.currentText() == "tiny-xx-en (xx → en)"

    zipped = zip_model(folders["reverse"], tmp_path / "back.zip")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(zipped), "")))
    pick(qtbot, box, "Model .zip…")
    assert box.name == "back" and box.model.currentText() == "back"

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    pick(qtbot, box, "Model .zip…")  # cancelled: the model in use stays
    assert box.name == "back" and box.model.currentText() == "back"

    pick(qtbot, box, "None")
    assert box.reverse is None and box.symmetrisation() is None and not box.how.isVisibleTo(view)


def test_a_wrong_direction_or_broken_model_is_refused_in_one_sentence(qtbot, panel, forward, backward, folders,
                                                                       translations, monkeypatch, tmp_path) -> None:
    view, box = panel.alignment, panel.alignment.reverse
    panel.set_translation(translations[1], CFG)
    before = shown(qtbot, view)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folders["forward"])))
    pick(qtbot, box, "Model folder…")  # en -> xx again: not the reverse of en -> xx
    assert box.reverse is None and box.model.currentText() == "None" and not box.how.isVisibleTo(view)
    assert box.status.text() == ("tiny-en-xx cannot align the other way: it translates en → xx, and a reverse model "
                                 "of the loaded en → xx model must translate xx → en.")
    assert shown(qtbot, view) == before and "symmetrised" not in view.picker.description.text()

    broken = tmp_path / "not-a-model"
    broken.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(broken)))
    pick(qtbot, box, "Model folder…")
    message = box.status.text()
    assert message.startswith("Cannot load the reverse model: ") and "\n" not in message and "Traceback" not in message
    assert box.reverse is None and box.model.isEnabled()

    view.picker.decision.setCurrentIndex(view.picker.decision.findData("argmax"))  # the view still works
    method = replace(default_method(forward.card, 2), decision="argmax")
    assert shown(qtbot, view) == align(translations[1], method, translator=forward)


def test_switching_the_main_model_drops_a_reverse_that_no_longer_fits(qtbot, panel, forward, backward, translations,
                                                                      tiny_translator) -> None:
    view, box = panel.alignment, panel.alignment.reverse
    assert box.set_reverse(backward, "tiny-xx-en") and box.model.currentText() == "tiny-xx-en"
    panel.set_translator(forward)  # the same direction again: kept
    assert box.reverse is backward and box.model.currentText() == "tiny-xx-en"
    panel.set_translation(translations[0], CFG)
    assert shown(qtbot, view) == expected_links(translations[0], forward, backward, "grow-diag-final")
    assert view.picker.description.text().endswith("; symmetrised with tiny-xx-en (grow-diag-final)")

    panel.set_translator(backward)  # now xx -> en is the main model: the reverse model no longer fits
    assert box.reverse is None and not box.how.isVisibleTo(view)
    assert box.status.text() == ("Reverse model dropped: tiny-xx-en cannot align the other way: it translates "
                                 "xx → en, and a reverse model of the loaded xx → en model must translate en → xx.")
    assert "symmetrised" not in view.picker.description.text()

    assert not tiny_translator.config.src_lang and not tiny_translator.config.tgt_lang
    panel.set_translator(tiny_translator)  # a model that states no languages: any reverse model is taken
    assert box.set_reverse(backward, "tiny-xx-en") and box.status.text() == ""


def test_a_pair_the_reverse_model_cannot_read_keeps_the_forward_links(qtbot, panel, forward, backward, translations,
                                                                      monkeypatch) -> None:
    def too_long(*_a, **_k):
        raise ValueError("the source is too long for tiny-xx-en (70 tokens, at most 64).")

    view, box = panel.alignment, panel.alignment.reverse
    assert box.set_reverse(backward, "tiny-xx-en")
    monkeypatch.setattr(backward, "score", too_long)
    panel.set_translation(translations[2], CFG)
    assert shown(qtbot, view) == expected_links(translations[2], forward, backward, None)
    assert view.pharaoh_label.text().endswith("  (not symmetrised: the reverse model cannot read this pair (the "
                                              "source is too long for tiny-xx-en (70 tokens, at most 64)))")
    assert view.copy_button.isEnabled()


def test_the_reverse_model_reads_the_words_as_text() -> None:
    """Bytes a byte-level vocabulary shows as "<C3>" reach the reverse model as the characters they spell."""
    from nmt_desktop.gui.analysis.reverse_model import plain_words

    pieces = ["▁katze", "▁", "<C3>", "<9F>", "▁<F0 9F>", "<98 80>", "!", "</s>"]
    assert plain_words(pieces) == ["katze", "", "ß", "😀!"]
    assert len(plain_words(pieces)) == len(words_of(pieces))  # numbered as the view numbers them
