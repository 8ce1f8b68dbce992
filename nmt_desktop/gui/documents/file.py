"""Reading a text file to translate and writing its translation (File > Translate text file…), without Qt.

A file is read as UTF-8 (a byte-order mark is dropped); a binary or non-UTF-8 file is refused with one
sentence naming it. The translation is written a line per source line ("\\n" line ends, a final line end),
through a temporary file renamed into place, so a failed or cancelled save never leaves half a file.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_BYTES = 20_000_000  # a text file to translate in the app; larger ones are for `nmt-desktop translate`


class DocumentFileError(ValueError):
    """A file that cannot be translated or saved; the message is one sentence naming the file."""


def read_document(path: str | os.PathLike) -> str:
    """The text of a UTF-8 .txt file, or DocumentFileError saying what is wrong with it."""
    path = Path(path)
    if path.is_dir():
        raise DocumentFileError(f"{path.name} is a folder: choose a .txt file to translate")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise DocumentFileError(f"{path.name} is {size // 1_000_000} MB: the app translates files up to "
                                    f"{MAX_BYTES // 1_000_000} MB (use `nmt-desktop translate` for larger ones)")
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentFileError(f"{path} does not exist") from None
    except OSError as exc:
        raise DocumentFileError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise DocumentFileError(f"{path.name} is not a text file (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DocumentFileError(f"{path.name} is not UTF-8 text: save it as UTF-8 and open it again") from None
    if not text.strip():
        raise DocumentFileError(f"{path.name} has no text to translate")
    return text


def write_translation(path: str | os.PathLike, lines: list[str]) -> Path:
    """Write `lines` (one per source line, blank ones blank) as a UTF-8 text file; returns the path."""
    path = Path(path)
    part = path.with_name(path.name + ".part")
    try:
        part.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        os.replace(part, path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise DocumentFileError(f"cannot save {path.name}: {exc.strerror or exc}") from None
    return path


def translation_name(source: str | os.PathLike, target_lang: str = "") -> str:
    """The suggested file name for a translation: "letter.txt" -> "letter.de.txt" ("letter.translated.txt")."""
    source = Path(source)
    return f"{source.stem}.{target_lang or 'translated'}.txt"
