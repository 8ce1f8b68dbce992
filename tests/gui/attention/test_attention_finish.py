"""The Translate tab's finished translation extends the attention that streamed (issue 30, point 2): from the
grid's first build for a sentence to the end of its translation, the attention view repaints no cell whole."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nmt_desktop.core.config import DecodeConfig  # noqa: E402

from limits import TIMEOUT_MS  # noqa: E402


@pytest.mark.parametrize("text", ["red cat runs", "red cat runs.\ncat dog red."])
def test_full_repaints_none_from_the_streamed_grid_to_the_finished_translation(qtbot, panel, tiny_translator,
                                                                               monkeypatch, text):
    panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    view = panel.view
    after_begin = []
    begin = view.begin

    def counted_begin(*args, **kwargs):
        begin(*args, **kwargs)
        after_begin.append(view.full_repaints)

    monkeypatch.setattr(view, "begin", counted_begin)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate(text, DecodeConfig())
    assert after_begin, "the translation streamed into the view"
    assert view.full_repaints == after_begin[-1]  # the finish kept the streamed rows
    shown = panel.document.current().translation
    assert not view.streaming and view.painted_rows() == len(shown.best.tokens)
    np.testing.assert_array_equal(view.data().weights, shown.best.attention)
