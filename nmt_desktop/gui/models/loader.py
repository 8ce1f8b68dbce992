"""Loading a model on a worker thread for the window: `ModelLoader` (through `Translator.load`, the one way
the CLI, the GUI and an analysis's second model load one) and `ModelInfo`, what the app shows of it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ..workers import one_line
from .names import run_model_name

log = logging.getLogger(__name__)


@dataclass
class ModelInfo:
    """What the app shows about a loaded model."""

    path: Path
    name: str
    src_lang: str
    tgt_lang: str
    size_bytes: int
    layers: int
    heads: int
    card: dict = field(default_factory=dict)
    int8: bool = False  # decoding with int8 linear layers (core/decoding/int8.py)

    @property
    def languages(self) -> str:
        if self.src_lang or self.tgt_lang:
            return f"{self.src_lang or '?'} → {self.tgt_lang or '?'}"
        return ""


class ModelLoader(QObject):
    """Loads a model folder or zip: `finished(request_id, (translator, ModelInfo))` or `failed`.

    With int8 the translator decodes with an int8 copy of the linear layers (faster on CPU)."""

    started = Signal(int, str)
    finished = Signal(int, object)
    failed = Signal(int, str)

    @Slot(int, str)
    @Slot(int, str, bool)
    def load(self, request_id: int, path: str, int8: bool = False) -> None:
        from nmt_desktop.core.decoding.source_language import warm_up
        from nmt_desktop.core.decoding.translator import Translator
        from nmt_desktop.core.formats.model_folder import model_size_bytes

        self.started.emit(request_id, path)
        try:
            translator = Translator.load(path, int8=int8)  # a training run's folder opens its best model (logged)
            loaded_from, cfg = translator.path, translator.config
            assert loaded_from is not None  # load() sets it
            name = run_model_name(loaded_from) or translator.name  # a run's RUN/best is named after the run
            info = ModelInfo(loaded_from, name, cfg.src_lang, cfg.tgt_lang, model_size_bytes(str(loaded_from)),
                             cfg.decoder_layers, cfg.n_heads, dict(translator.card), int8)
        except Exception as exc:  # noqa: BLE001 - a bad model is reported, never raised
            log.warning("cannot load model %s: %s", path, exc)
            self.failed.emit(request_id, one_line(exc))
            return
        warm_up()  # the language identifier's 0.4 s load, here and not on the GUI thread at the first translation
        log.info("loaded model %s", path)
        self.finished.emit(request_id, (translator, info))
