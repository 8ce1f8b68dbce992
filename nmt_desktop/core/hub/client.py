"""The one place nmt-desktop talks to the Hugging Face Hub: endpoint, offline switch, and turning
the Hub client's exceptions into one sentence.

All network work goes through `huggingface_hub` (resumable downloads, tokens, proxies, its
`HF_ENDPOINT`); this module reads `HF_ENDPOINT` and `HF_HUB_OFFLINE` at call time rather than at
import time (huggingface_hub's constants freeze them when it is first imported), so a test or a
user who sets them later is still honoured.
"""

from __future__ import annotations

import errno
import os
from typing import Any

DEFAULT_ENDPOINT = "https://huggingface.co"
OPUS_MT_AUTHOR = "Helsinki-NLP"


class HubError(ValueError):
    """A Hub search or download failed for a reason the user can act on; the message is one sentence."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()).rstrip(".") + ".")


class HubUnreachableError(HubError):
    """The Hub could not be reached at all (no network, offline mode, a refused connection)."""


def hub_endpoint() -> str:
    """The Hub's base URL: `HF_ENDPOINT` when set (a mirror, or a test's local stand-in)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """True when `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) asks for no network access."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in ("1", "ON", "YES", "TRUE")


def hub_api() -> Any:
    """A `huggingface_hub.HfApi` for `hub_endpoint()` (token from the usual places, if any)."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub_endpoint())


def probe_reachable(timeout_s: float = 8.0) -> None:
    """Raise HubUnreachableError unless the Hub answers one request (any HTTP status will do).

    huggingface_hub's listing retries a refused connection with backoff for ~20 s; one probe
    first lets an offline search fall back to the shipped catalogue at once.
    """
    from huggingface_hub import get_session

    try:
        # the listing endpoint itself, one entry: any server that can answer a search answers this
        get_session().get(hub_endpoint() + "/api/models", params={"author": OPUS_MT_AUTHOR, "limit": 1},
                          timeout=timeout_s)
    except Exception as exc:  # noqa: BLE001 - any transport failure means "not reachable"
        raise HubUnreachableError(f"cannot reach the Hugging Face Hub at {hub_endpoint()} ({_first_line(exc)}); "
                                  "check the network connection or proxy settings") from None


def license_of(tags: Any) -> str:
    """The license id in a Hub model's tags ("license:cc-by-4.0" -> "cc-by-4.0"); "" when none."""
    for tag in tags or ():
        if isinstance(tag, str) and tag.startswith("license:"):
            return tag.split(":", 1)[1]
    return ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def explain(exc: BaseException, repo: str = "") -> HubError:
    """The one-sentence HubError for an exception raised by huggingface_hub or the network."""
    import httpx2
    from huggingface_hub import errors

    where = hub_endpoint()
    if isinstance(exc, HubError):
        return exc
    if isinstance(exc, errors.LocalEntryNotFoundError) and exc.__cause__ is not None:
        return explain(exc.__cause__, repo)  # "not in the cache": the reason is the Hub's own answer
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return HubUnreachableError("HF_HUB_OFFLINE is set, so the Hugging Face Hub is not contacted; unset it to "
                                   "search or download models")
    if isinstance(exc, errors.GatedRepoError):
        return HubError(f"{repo or 'this model'} is gated on the Hub: accept its terms on the model page and log in "
                        "with `hf auth login`")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"{repo or 'the model'} was not found on the Hub at {where} (check the name, e.g. "
                        "Helsinki-NLP/opus-mt-en-de; a private model needs `hf auth login`)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"{repo or 'the model'}: that revision does not exist on the Hub")
    if isinstance(exc, errors.EntryNotFoundError) and not isinstance(exc, errors.LocalEntryNotFoundError):
        return HubError(f"{repo or 'the model'}: a file it lists is missing on the Hub ({_first_line(exc)})")
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        return HubError(f"the Hugging Face Hub at {where} answered with an error"
                        f"{f' (HTTP {status})' if status else ''}: {_first_line(exc)}")
    if isinstance(exc, (httpx2.TransportError, errors.LocalEntryNotFoundError, ConnectionError, TimeoutError)):
        return HubUnreachableError(f"cannot reach the Hugging Face Hub at {where} ({_first_line(exc)}); check the "
                                   "network connection or proxy settings")
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return HubError(f"the disk is full{f' ({exc.filename})' if exc.filename else ''}; free some space and "
                        "pull again (finished files are kept and not downloaded twice)")
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return HubError(f"cannot write {exc.filename or 'the models folder'} ({exc.strerror}); choose a writable "
                        "data folder (NMT_DESKTOP_DATA_DIR)")
    return HubError(f"{type(exc).__name__}: {_first_line(exc)}")
