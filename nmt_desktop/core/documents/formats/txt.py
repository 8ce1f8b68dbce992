"""Plain text: one block per line, so the translation keeps the text's line structure.

The file is read in whatever encoding it is (text_encoding.py) and written back in it, with its BOM.
Line ends ("\\n", "\\r\\n", "\\r") and whether the file ends with one are kept; an empty line is an empty
block (no runs) written back empty. A translated line that holds a line break is joined with spaces, so
the line count never changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nmt_desktop.core.documents.blocks import (
    Block,
    Run,
    TranslatedBlock,
    check_translated,
)
from nmt_desktop.core.documents.safety import read_decoded
from nmt_desktop.core.documents.text_encoding import TextEncoding

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


@dataclass
class TextDocument:
    path: Path
    blocks: list[Block] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)  # each line's line end ("" for a last line without one)
    encoding: TextEncoding = TextEncoding("utf-8")

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise ValueError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} lines")
        out = []
        for block, runs, end in zip(self.blocks, translated, self.ends):
            check_translated(block, runs)
            text = "".join(run.text for run in runs)
            out.append(" ".join(text.splitlines()) + end)
        Path(path).write_bytes(self.encoding.encode("".join(out)))


def open_document(path: Path) -> TextDocument:
    decoded = read_decoded(path)
    text = decoded.text
    document = TextDocument(Path(path), encoding=decoded.encoding)
    for number, match in enumerate(_LINE.finditer(text), 1):
        line, end = match.groups()
        if not end and match.start() == len(text):  # past the final line end (or an empty file)
            break
        document.blocks.append(Block([Run(line)] if line else [], where=f"line {number}"))
        document.ends.append(end)
    return document
