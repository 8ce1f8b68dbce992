"""The Translate tab applies the model's glossary: typing a sentence and clicking Translate gives the
glossary's term, with attention for every token of the forced translation."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from nmt_desktop.core.documents.glossary import Glossary, Term


def test_typed_text_gets_the_glossary_term(qtbot):
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir
    from nmt_desktop.gui.translate.panel import TranslatePanel

    translator = Translator.load(bundled_models_dir() / "en-de")
    translator.glossary = Glossary([Term("garden", "Hof")])
    panel = TranslatePanel()
    qtbot.addWidget(panel)
    panel.set_translator(translator)
    panel.source.setPlainText("I saw the dog in the garden.")
    with qtbot.waitSignal(panel.translationDone, timeout=60_000) as done:
        qtbot.mouseClick(panel.translate_button, Qt.LeftButton)
    translations = done.args[0]
    assert "Hof" in translations[0].text and "Hof" in panel.output_text()
    attention = np.asarray(translations[0].attention)
    assert attention.shape[2] == len(translations[0].target_tokens)


def test_saved_model_glossary_is_used_by_the_translate_tab(qtbot, open_main_window, config_dir):
    from nmt_desktop.core.locations import bundled_models_dir
    from nmt_desktop.gui.documents.glossary_editor import GlossaryEditor

    window = open_main_window(bundled_models_dir() / "en-de")
    assert window.translate_panel.translator.glossary is None
    window.menus.actions["glossary"].trigger()  # Tools > Glossary…
    editor = window.findChild(GlossaryEditor)
    editor.set_glossary(Glossary([Term("garden", "Hof")]))
    qtbot.mouseClick(editor.save_model_button, Qt.LeftButton)
    editor.close()
    panel = window.translate_panel
    assert [t.target for t in panel.translator.glossary.terms] == ["Hof"]
    panel.source.setPlainText("I saw the dog in the garden.")
    with qtbot.waitSignal(panel.translationDone, timeout=60_000):
        qtbot.mouseClick(panel.translate_button, Qt.LeftButton)
    assert "Hof" in panel.output_text()
    # loading the model again keeps its glossary
    before = panel.translator
    window.load_model(bundled_models_dir() / "en-de")
    qtbot.waitUntil(lambda: panel.translator is not before, timeout=60_000)
    assert [t.target for t in panel.translator.glossary.terms] == ["Hof"]
