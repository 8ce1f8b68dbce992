"""A second model beside the loaded one, for the Analysis views that need two (Compare's model B, the
Alignments view's reverse model): loaded on a view's worker thread, from a folder, a .zip or an installed
model's name, with its card (its recommended alignment reading) as the main model loader gives it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QWidget

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


def load_second_model(path: str) -> tuple[Translator, str]:
    """A model folder, zip or installed model's name as a Translator (card set) and the model's name; run it on
    a worker thread. Raises ModelNotFoundError / ModelFolderError (one sentence) for what cannot be loaded."""
    from nmt_desktop.core.decoding.translator import Translator

    translator = Translator.load(path)  # a bare name: an installed or bundled model
    return translator, translator.name


def languages(translator: Translator) -> tuple[str, str]:
    """The (source, target) languages the model's config states ("" where it does not)."""
    config = translator.config
    return str(getattr(config, "src_lang", "") or ""), str(getattr(config, "tgt_lang", "") or "")


def ask_model_path(parent: QWidget, title: str, zipped: bool = False) -> str:
    """A model folder (or, `zipped`, a model .zip) the person picks; "" when they cancel."""
    if zipped:
        return QFileDialog.getOpenFileName(parent, title, "", "Model zip (*.zip)")[0]
    return QFileDialog.getExistingDirectory(parent, title)
