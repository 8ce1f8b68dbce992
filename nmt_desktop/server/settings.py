"""What `nmt-desktop serve` was asked for: address, keys, limits, CORS and logging, as one frozen value the
app and its parts read (the CLI builds it; the GUI's Tools > Local server… passes the same flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nmt_desktop.server.errors import ApiError


@dataclass(frozen=True)
class Limits:
    """Per-request limits (LibreTranslate's --char-limit and --batch-limit) and the decode queue's bound.

    max_chars: characters of one text (`q` item, OPUS-CAT input); max_list: items of a `q` list;
    max_file_bytes: an uploaded document; max_queue: segments waiting for the decode threads before new
    requests get 429; timeout_s: how long a request waits for its translation before 503."""
    max_chars: int = 5000
    max_list: int = 128
    max_file_bytes: int = 20 * 1024 * 1024
    max_queue: int = 1024
    timeout_s: float = 120.0

    def check(self, texts: list[Any], listed: bool) -> None:
        """ApiError 400 in LibreTranslate's words for a list too long or a text too long (`listed`: the
        texts came as a list, whose length counts), and for anything in it that is not a text."""
        if not all(isinstance(t, str) for t in texts):
            raise ApiError(400, "Invalid request: q must be a text or a list of texts")
        if listed and len(texts) > self.max_list:
            raise ApiError(400, f"Invalid request: request ({len(texts)}) exceeds text limit ({self.max_list})")
        for text in texts:
            if len(text) > self.max_chars:
                raise ApiError(400, f"Invalid request: request ({len(text)}) exceeds text limit ({self.max_chars})")

    @property
    def max_body_bytes(self) -> int:
        """The most a translation request's body may hold: every list item at the character limit, each
        character up to 4 UTF-8 bytes (or 6 as a JSON escape), plus room for the other fields."""
        return self.max_list * self.max_chars * 6 + 64 * 1024


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 5000
    keys: dict[str, float | None] = field(default_factory=dict)  # API key -> its requests per minute (None: the default)
    rate_per_minute: float | None = None  # requests per minute per key (per client address without keys); None: no limit
    cors: tuple[str, ...] = ("*",)
    log_json: bool = False
    limits: Limits = field(default_factory=Limits)
    file_ttl_s: float = 600.0  # uploaded and translated files are deleted this long after they were written
    batch_size: int = 32  # segments decoded together by one model's thread
    window_s: float = 0.05  # the longest a batch waits for the clients the last batches served (batcher.py)
    halves: bool = False  # a decode process's batches hold half the clients at work (batcher.DecodeWorker._half)
    continuous: bool = True  # plain greedy lines join the running search (continuous_decoding.py); False: whole batches
    upload_dir: Path | None = None  # None: a fresh temporary folder, removed at shutdown
    beam_size: int = 1  # the decoding the server uses (alternatives widen the beam for their request)
