"""What Tools > Local server… starts: host, port, models and API key, as the `nmt-desktop serve` arguments,
checked before anything starts and remembered in the app's settings (key "server").

Qt-free, so the rule "another host than loopback needs a key" is one function the dialog and its tests share.
The key itself is remembered too: it is what the user pasted into Weblate or Trados, and a new one each start
would break those tools' saved settings. The child gets it in a file only this user can read (`--api-keys`),
never on its command line, which every local user can read (/proc/PID/cmdline, ps).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SETTINGS_KEY = "server"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5000
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Only this machine can reach a server bound here (127.0.0.0/8, localhost, ::1)."""
    host = host.strip().strip("[]").lower()
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def generate_key() -> str:
    """A fresh API key: 32 URL-safe characters (192 random bits), easy to paste into a tool's settings."""
    return secrets.token_urlsafe(24)


@dataclass
class ServerOptions:
    """One start of the server; `models` are model folders, zips or installed names, as `-m` takes them."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT  # 0: any free port (the child says which in its "listening" line)
    models: list[str] = field(default_factory=list)
    api_key: str = ""

    def problem(self) -> str | None:
        """Why these options cannot start a server, in one sentence; None when they can."""
        if not self.host.strip():
            return "Enter a host to listen on (127.0.0.1 keeps the server to this computer)."
        if not 0 <= self.port <= 65535:
            return f"The port must be between 0 and 65535, not {self.port}."
        if not self.models:
            return "Tick at least one model for the server to translate with."
        if any(c.isspace() or c == "#" for c in self.api_key.strip()):
            return "The API key may not hold spaces or #: generate one instead."
        if not is_loopback(self.host) and not self.api_key.strip():
            return (f"Listening on {self.host.strip()} lets other computers use the server, so it needs an API key: "
                    "generate one, or listen on 127.0.0.1.")
        return None

    def serve_arguments(self, key_file: Path | None = None) -> list[str]:
        """The arguments after `nmt-desktop`: JSON lines on stdout for the request log; the key as `key_file`
        (write_key_file), which must be given when there is a key."""
        args = ["serve", "--host", self.host.strip(), "--port", str(self.port), "--log-json"]
        for model in self.models:
            args += ["-m", model]
        if self.api_key.strip():
            if key_file is None:
                raise ValueError("a key goes to the server in a file: write_key_file() first")
            args += ["--api-keys", str(key_file)]
        return args

    def write_key_file(self, path: Path) -> Path:
        """The key alone in `path`, readable by this user only (created 0600 before anything is written)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            os.fchmod(file.fileno(), 0o600)  # an older file of other permissions is narrowed too
            file.write(self.api_key.strip() + "\n")
        return path

    def to_settings(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "models": list(self.models), "api_key": self.api_key}

    @classmethod
    def from_settings(cls, value: Any) -> ServerOptions:
        """The remembered options; a missing or mistyped field falls back to its default."""
        value = value if isinstance(value, dict) else {}
        host, port, models, key = (value.get("host"), value.get("port"), value.get("models"),
                                   value.get("api_key"))
        return cls(host=host if isinstance(host, str) and host.strip() else DEFAULT_HOST,
                   port=port if isinstance(port, int) and 0 <= port <= 65535 else DEFAULT_PORT,
                   models=[m for m in models if isinstance(m, str)] if isinstance(models, list) else [],
                   api_key=key if isinstance(key, str) else "")
