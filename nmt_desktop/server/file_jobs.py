"""Uploaded documents (POST /translate_file) and their translations (GET /download_file/<name>).

An upload is written under a fresh random name in the folder's uploads/ (never served), opened by the documents'
adapters after their safety checks (core/documents/safety.py: zip bombs, encryption, entities, binary
text), translated on the model's decode thread with its glossary, saved beside it and deleted; the
translation is deleted `ttl` seconds after it was written (a sweep runs while the server is up, and the
folder is removed at shutdown when the server made it). A download name is checked against the one
pattern the server gives out before any path is built from it, and the path must stay inside the folder."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from nmt_desktop.server.errors import ApiError

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary

# translate-file's formats (core/documents/formats FORMATS); LibreTranslate's "supportedFilesFormat"
SUPPORTED = (".docx", ".odt", ".pptx", ".xlsx", ".html", ".htm", ".md", ".markdown", ".srt", ".vtt", ".epub", ".txt")
_NAME = re.compile(r"^[0-9a-f]{32}\.[A-Za-z0-9_-]{1,80}(\.[A-Za-z0-9_-]{1,16}){1,2}$")


def safe_stem(filename: str) -> str:
    """A client's file name reduced to letters, digits, _ and - (never a path)."""
    stem = Path(filename.replace("\\", "/")).stem
    return re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_")[:80] or "document"


class FileStore:
    """The folder of uploads and translations, and their deletion after `ttl` seconds."""

    def __init__(self, folder: Path | None, ttl_s: float):
        self.owned = folder is None
        self.folder = Path(tempfile.mkdtemp(prefix="nmt-desktop-serve-")) if folder is None else Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.ttl_s = ttl_s

    def upload_path(self, filename: str) -> Path:
        """Where an upload is written: a folder of its own, never a name /download_file serves."""
        uploads = self.folder / "uploads"
        uploads.mkdir(exist_ok=True)
        return uploads / f"{uuid.uuid4().hex}.{safe_stem(filename)}{Path(filename).suffix.lower()}"

    def translate(self, translator: "Translator", glossary: "Glossary | None", upload: Path, filename: str,
                  target: str, batch_size: int) -> str:
        """Translate the uploaded file (on the decode thread); the download name of its translation.
        ApiError 400 for a document the safety checks or the adapters refuse."""
        from nmt_desktop.core.config import DecodeConfig
        from nmt_desktop.core.documents.blocks import DocumentError
        from nmt_desktop.core.documents.formats import open_document
        from nmt_desktop.core.documents.translate_document import (DocumentOptions, save_translation,
                                                                   translate_document)

        suffix, source = Path(filename).suffix.lower(), upload
        name = f"{uuid.uuid4().hex}.{safe_stem(filename)}.{re.sub(r'[^A-Za-z0-9_-]', '', target) or 'translated'}{suffix}"
        try:
            document = open_document(source)
            cfg = DecodeConfig(attention=True, alternatives=0)
            result = translate_document(translator, document, cfg, DocumentOptions(glossary=glossary,
                                                                                 batch_size=batch_size))
            save_translation(result, self.folder / name)
        except DocumentError as exc:  # said of the client's file name, not of the folder's
            raise ApiError(400, f"Invalid request: {str(exc).replace(source.name, Path(filename).name)}") from None
        finally:
            source.unlink(missing_ok=True)
        return name

    def download(self, name: str) -> tuple[Path, str]:
        """The translation's path and the name a browser saves it as (without the random part); 400 for a
        name the server never gives out, 404 for one deleted or never written."""
        if not _NAME.match(name) or ".." in name:
            raise ApiError(400, "Invalid filename")
        path = (self.folder / name).resolve()
        if path.parent != self.folder.resolve():
            raise ApiError(400, "Invalid filename")
        if not path.is_file():
            raise self._gone(name)
        return path, name.split(".", 1)[1]

    def read(self, name: str) -> tuple[bytes, str]:
        """The translation's bytes and save-as name (`download`'s checks), read whole before the answer starts:
        streamed from its path, a sweep deleting it between the headers and the body dropped the connection
        (seen in tests/server/test_server_files.py); now that is a 404."""
        path, saved = self.download(name)
        try:
            return path.read_bytes(), saved
        except FileNotFoundError:
            raise self._gone(name) from None

    def _gone(self, name: str) -> ApiError:
        return ApiError(404, f"{name} does not exist: translations are deleted {self.ttl_s:g} s after they are made")

    def sweep(self, now: float | None = None) -> int:
        """Delete the translations older than the ttl; how many were deleted. Uploads are deleted by
        `translate` once their translation is saved."""
        now = time.time() if now is None else now
        deleted = 0
        for path in self.folder.iterdir():  # not uploads/: a document being translated is read again at its save
            try:
                if path.is_file() and now - path.stat().st_mtime >= self.ttl_s:
                    path.unlink()
                    deleted += 1
            except OSError:
                continue
        return deleted

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)
