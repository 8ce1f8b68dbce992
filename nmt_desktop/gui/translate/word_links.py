"""Linked views on the Translate tab: the source box, the translation, the attention grid and focus view and
the Alternatives tab point at one token pair (`LinkedTokens`, gui/linked_tokens.py).

- hovering a word of the source box, a token of the translation, or a cell or token label of a heatmap
  lights up that source column / target row in every heatmap, the word in the source box, the token in the
  translation, and shows the target token's alternatives; the Analysis tab's alignment links follow
  (`analysis/panel.py` listens to `tokens.changed`);
- a click on a token of the translation or in the focus view selects it: the highlight stays when the
  pointer leaves and across views, until another click (the same token again clears it) or a new
  translation, sentence or hypothesis.

Indices are those of the unit (sentence) the attention view shows. While the views show an inspected
translation (Your translation), its tokens are not the translation pane's: nothing is linked then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QUrl
from PySide6.QtGui import QColor, QMouseEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from nmt_desktop.core.analysis.words import word_spans

from .. import theme
from ..attention.linked_tokens import Highlight, LinkedTokens
from .output_html import parse_token_link, token_link

if TYPE_CHECKING:
    from .document_model import UnitProgress
    from .tab_api import TranslateTab

LIT = {False: "#fde68a", True: "#854d0e"}  # a linked word's background, light / dark theme (text stays legible)


def _selection(edit: QTextEdit, start: int, end: int) -> QTextEdit.ExtraSelection:
    """A highlight of characters start..end of the editor's text, in the theme's selection-like colour."""
    chosen = QTextEdit.ExtraSelection()
    cursor = QTextCursor(edit.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    chosen.cursor = cursor
    look = theme.current()
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(LIT[look.dark]))
    fmt.setForeground(QColor(look.text))
    chosen.format = fmt
    return chosen


def anchor_span(edit: QTextEdit, href: str) -> tuple[int, int] | None:
    """The characters of the link `href` in a rich-text editor (the translation pane's token)."""
    block = edit.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid() and fragment.charFormat().anchorHref() == href:
                return fragment.position(), fragment.position() + fragment.length()
            it += 1
        block = block.next()
    return None


def unit_spans(text: str, units: list[UnitProgress]) -> list[list[tuple[int, int] | None]]:
    """Each unit's source tokens as character spans of `text` (the source box); a unit whose text is no longer
    there (edited since it was translated) has no spans."""
    starts = [0]
    for part in text.split("\n"):
        starts.append(starts[-1] + len(part) + 1)
    searched_from: dict[int, int] = {}  # line -> where its next sentence is looked for
    out: list[list[tuple[int, int] | None]] = []
    for unit in units:
        line = unit.unit.line
        found = -1
        if line < len(starts) - 1:
            found = text.find(unit.text, searched_from.get(line, starts[line]))
            found = found if found >= 0 and found + len(unit.text) <= starts[line + 1] else -1
        if found < 0:
            out.append([None] * len(unit.source_tokens))
            continue
        searched_from[line] = found + len(unit.text)
        out.append([None if span is None else (found + span[0], found + span[1])
                    for span in word_spans(unit.text, unit.source_tokens)])
    return out


class TranslateLinks(QObject):
    """Connects the Translate panel's views to `tokens` (a LinkedTokens) both ways."""

    def __init__(self, panel: TranslateTab):
        super().__init__(panel)
        self.panel = panel
        self.tokens = LinkedTokens(self)
        self._spans_key: tuple[str, int, int] | None = None
        self._spans: list[list[tuple[int, int] | None]] = []
        view, output, source = panel.view, panel.output, panel.source
        view.pointerMoved.connect(lambda row, col: self._linked() and self.tokens.hover(row, col))
        view.cellSelected.connect(lambda row, col: self._linked() and self.tokens.select(row, col))
        output.highlighted.connect(self._output_hovered)
        output.anchorClicked.connect(self._output_clicked)
        output.textChanged.connect(lambda: self._show_in_output(self.tokens.current))
        source.viewport().setMouseTracking(True)
        source.viewport().installEventFilter(self)
        self.tokens.changed.connect(self._show)
        panel.translationStarted.connect(lambda *_: self.tokens.clear())
        panel.sentence_list.currentRowChanged.connect(lambda *_: self.tokens.clear())
        panel.nbest_list.currentRowChanged.connect(lambda *_: self.tokens.clear())
        panel.inspect_box.showTranslation.connect(lambda *_: self.tokens.clear())
        theme.follow(self, lambda _look: self._show(self.tokens.current))

    def _linked(self) -> bool:
        """The attention view shows the translation pane's unit (not an inspected translation)."""
        return not self.panel.inspect_box.shown and self._unit() is not None

    def _unit(self) -> UnitProgress | None:
        return self.panel.document.current()

    # -- pointing ---------------------------------------------------------------------------------

    def _output_hovered(self, url: QUrl) -> None:
        where = parse_token_link(url.toString())
        if where is None:
            self.tokens.hover()
        elif where[0] == self.panel.document.shown and self._linked():
            self.tokens.hover(where[1], -1)

    def _output_clicked(self, url: QUrl) -> None:
        """A click on a token selects it; a token of another sentence shows that sentence first."""
        where = parse_token_link(url.toString())
        if where is None or self.panel.inspect_box.shown:
            return
        if where[0] != self.panel.document.shown and self._finished(where[0]):
            self.panel.select_sentence(where[0])
        if where[0] == self.panel.document.shown and self._linked():
            self.tokens.select(where[1], -1)

    def _finished(self, index: int) -> bool:
        units = self.panel.document.units
        return 0 <= index < len(units) and units[index].translation is not None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt name)
        """The source box's viewport: the word under the pointer names its first token."""
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent) and self._linked():
            at = self.panel.source.cursorForPosition(event.position().toPoint()).position()
            unit, token = self.token_at(at)
            if unit >= 0 and unit != self.panel.document.shown and self._finished(unit):
                self.panel.select_sentence(unit)  # a word of another sentence: its attention is shown
            self.tokens.hover(-1, token if unit == self.panel.document.shown else -1)
        elif event.type() == QEvent.Type.Leave:
            self.tokens.hover()
        return False

    def token_at(self, position: int) -> tuple[int, int]:
        """(unit, source token) whose word holds character `position` of the source box; (-1, -1) if none."""
        for index, spans in enumerate(self._all_spans()):
            token = next((i for i, span in enumerate(spans) if span is not None and span[0] <= position < span[1]), -1)
            if token >= 0:
                return index, token
        return -1, -1

    def source_spans(self, index: int | None = None) -> list[tuple[int, int] | None]:
        """Where each source token of unit `index` (default: the shown one) is in the source box (its word's
        characters)."""
        index = self.panel.document.shown if index is None else index
        spans = self._all_spans()
        return spans[index] if 0 <= index < len(spans) else []

    def _all_spans(self) -> list[list[tuple[int, int] | None]]:
        """Every unit's token spans in the source box, in one pass over the text; kept until the text or the
        units change (the pointer moves over the box far more often than either)."""
        text, units = self.panel.source.toPlainText(), self.panel.document.units
        key = (text, id(units), len(units))
        if self._spans_key != key:
            self._spans_key, self._spans = key, unit_spans(text, units)
        return self._spans

    # -- showing ----------------------------------------------------------------------------------

    def _show(self, highlight: Highlight) -> None:
        if self._linked() or highlight.empty:
            self.panel.view.show_highlight(highlight.row, highlight.col)
        self._show_in_output(highlight)
        spans = self.source_spans() if self._linked() else []
        span = spans[highlight.col] if 0 <= highlight.col < len(spans) else None
        self.panel.source.setExtraSelections([_selection(self.panel.source, *span)] if span else [])
        unit = self._unit()
        step = unit.step(highlight.row) if unit is not None and highlight.row >= 0 and self._linked() else None
        if step is not None:
            self.panel.show_alternatives(step)

    def _show_in_output(self, highlight: Highlight) -> None:
        output = self.panel.output
        span = None
        if highlight.row >= 0 and self._linked():
            span = anchor_span(output, token_link(self.panel.document.shown, highlight.row))
        output.setExtraSelections([_selection(output, *span)] if span else [])

    def highlighted_text(self) -> tuple[str, str]:
        """(source box, translation) text lit up now: what tests and screenshots check."""
        def lit(edit: QTextEdit) -> str:
            return "".join(s.cursor.selectedText() for s in edit.extraSelections())
        return lit(self.panel.source), lit(self.panel.output)
