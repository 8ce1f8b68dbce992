"""Excel workbooks (.xlsx) through openpyxl: the text of string cells, nothing else.

Blocks, in order: the workbook's title and subject, then every string cell of every worksheet, row by
row (a merged range's text is its top-left cell). Formulas, numbers, dates and booleans are not text
and stay as they are; sheet names are not translated because formulas refer to them by name. A cell of
rich text is a block with one run per differently formatted stretch (moved like any run); a plain cell
is one run. openpyxl rewrites the whole file on save, so what it does not read (shapes, text boxes,
some chart details) is lost, which the formats table says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import openpyxl
from openpyxl.cell.cell import Cell
from openpyxl.cell.rich_text import CellRichText, TextBlock

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock, check_translated
from nmt_desktop.core.documents.formats.ooxml_runs import is_monospace

Writer = Callable[[TranslatedBlock], None]


def _runs(value: str | CellRichText) -> list[Run]:
    if isinstance(value, str):
        return [Run(value)]
    return [Run(item, None) if isinstance(item, str) else
            Run(item.text, repr(item.font), is_monospace(item.font.rFont)) for item in value]


def _set(cell: Cell, value: str | CellRichText) -> None:
    cell.value = value
    cell.data_type = "s"  # a translation that starts with "=" is text, not a formula


def _writer(cell: Cell) -> Writer:
    source = cell.value

    def write(translated: TranslatedBlock) -> None:
        if isinstance(source, str):
            _set(cell, "".join(run.text for run in translated))
            return
        items = list(source)
        _set(cell, CellRichText([run.text if isinstance(items[run.index], str)
                                 else TextBlock(items[run.index].font, run.text) for run in translated]))
    return write


@dataclass
class _Reader:
    """Reads one workbook's blocks, with a writer per block that puts a translation back."""
    workbook: openpyxl.Workbook
    blocks: list[Block] = field(default_factory=list)
    writers: list[Writer] = field(default_factory=list)

    def read(self) -> None:
        props = self.workbook.properties
        for name in ("title", "subject"):
            if (getattr(props, name) or "").strip():
                self.blocks.append(Block([Run(getattr(props, name))], f"workbook {name}"))
                self.writers.append(lambda t, name=name: setattr(props, name, "".join(r.text for r in t)))
        for sheet in self.workbook.worksheets:
            for row in sheet.iter_rows():
                for cell in row:
                    if cell.data_type == "s" and isinstance(cell.value, (str, CellRichText)) \
                            and str(cell.value).strip():
                        self.blocks.append(Block(_runs(cell.value), f"{sheet.title}!{cell.coordinate}"))
                        self.writers.append(_writer(cell))


def _load(path: Path) -> _Reader:
    try:
        reader = _Reader(openpyxl.load_workbook(path, rich_text=True))
        reader.read()
    except Exception as error:  # openpyxl raises InvalidFileException, KeyError, zipfile errors alike
        raise DocumentError(f"{path.name} cannot be read as an Excel workbook: {error}") from error
    return reader


class ExcelDocument:
    """An open .xlsx: its blocks; `save` re-reads the source so the open copy is never modified."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.blocks = _load(path).blocks

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        reader = _load(self.path)
        if len(translated) != len(reader.blocks):
            raise DocumentError(f"{self.path.name}: {len(translated)} translated blocks for "
                                f"{len(reader.blocks)} blocks")
        for block, runs in zip(reader.blocks, translated):
            check_translated(block, runs)
        for write, runs in zip(reader.writers, translated):
            write(runs)
        reader.workbook.save(path)


def open_document(path: Path) -> ExcelDocument:
    return ExcelDocument(Path(path))
