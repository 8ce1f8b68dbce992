"""Who may call: API keys (compared in constant time), the loopback rule, and a token bucket per key.

Binding anywhere but loopback without a key is refused by the CLI (`needs_key`): a translation server
open to a network would translate for anyone on it. Keys are read from --api-key or a file of one key per
line, optionally followed by that key's requests per minute; `#` starts a comment."""

from __future__ import annotations

import hmac
import ipaddress
import threading
import time
from dataclasses import dataclass
from pathlib import Path


class KeyFileError(ValueError):
    """A bad line in the keys file (one sentence naming the file and line)."""


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or "localhost": reachable from this machine only."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_keys(path: str | Path) -> dict[str, float | None]:
    """Keys from a file: `KEY [REQUESTS_PER_MINUTE]` per line; blank lines and `#` comments skipped."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    keys: dict[str, float | None] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) > 2:
            raise KeyFileError(f"{path}, line {number}: expected a key and at most a rate, got {len(fields)} fields")
        rate = None
        if len(fields) == 2:
            try:
                rate = float(fields[1])
            except ValueError:
                rate = -1.0
            if rate <= 0:
                raise KeyFileError(f"{path}, line {number}: the rate must be a positive number of requests "
                                   f"per minute, got {fields[1]!r}")
        keys[fields[0]] = rate
    if not keys:
        raise KeyFileError(f"{path}: holds no key")
    return keys


def matching_key(given: str | None, keys: dict[str, float | None]) -> str | None:
    """The configured key equal to `given`, compared with hmac.compare_digest against every key (the time
    taken says nothing about how much of a key was right); None when none is."""
    if not given:
        return None
    found = None
    for key in keys:
        if hmac.compare_digest(given.encode("utf-8"), key.encode("utf-8")):
            found = key
    return found


@dataclass
class TokenBucket:
    """`rate` requests per minute, bursts of up to `rate` (at least 1)."""
    rate: float
    tokens: float = -1.0  # full at the first take
    stamp: float | None = None  # when it was last taken from

    def take(self, now: float) -> bool:
        capacity = max(1.0, self.rate)
        if self.tokens < 0 or self.stamp is None:
            self.tokens, self.stamp = capacity, now
        self.tokens = min(capacity, self.tokens + max(0.0, now - self.stamp) * self.rate / 60.0)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class RateLimiter:
    """One token bucket per caller (its key, else its address); `allow` is False when its bucket is empty."""

    def __init__(self, default_rate: float | None, key_rates: dict[str, float | None]):
        self.default_rate, self.key_rates = default_rate, key_rates
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def allow(self, caller: str, key: str | None) -> bool:
        rate = self.key_rates.get(key) if key is not None else None
        rate = rate if rate is not None else self.default_rate
        if rate is None:
            return True
        with self._lock:
            bucket = self._buckets.setdefault(caller, TokenBucket(rate))
            return bucket.take(time.monotonic())
