"""What the Translate tab's parts (the "Your translation" box, the linked views) use of the tab: they take the
panel as a `TranslateTab`, so neither imports panel.py, which builds them (TranslatePanel satisfies it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QListWidget

    from nmt_desktop.core.decoding.results import Step

    from ..attention.grid import AttentionView
    from .document_model import UnitProgress, TranslationDocument
    from .output_pane import OutputBrowser
    from .source_edit import SourceEdit


class TranslateTab(Protocol):
    translationStarted: SignalInstance  # noqa: N815 - Qt signal name
    source: SourceEdit
    output: OutputBrowser
    view: AttentionView
    document: TranslationDocument
    sentence_list: QListWidget
    nbest_list: QListWidget
    inspect_box: Any  # the InspectBox (inspect_box.py), which takes the tab as this protocol

    @property
    def running(self) -> bool: ...

    @property
    def sentences(self) -> list[UnitProgress]: ...

    def output_text(self) -> str: ...

    def select_sentence(self, index: int) -> None: ...

    def show_alternatives(self, step: Step) -> None: ...
