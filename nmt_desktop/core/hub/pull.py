"""`pull`: download an OPUS-MT (Marian) model from the Hugging Face Hub and install it as a model folder.

Only the files the converter needs are fetched (config.json, the two SentencePiece models, the
vocabularies, and model.safetensors, else pytorch_model.bin, which `core/formats/marian.py` reads with
`torch.load(weights_only=True)` only). Downloads go through `hf_hub_download` into a staging folder
in the user data folder (`downloads/`): within a pull, a connection that breaks mid-file resumes
from the last chunk received (huggingface_hub's Range retry); a pull that was killed skips the files
it had finished. Every file is checked against the
Hub's checksum (sha256 for LFS files, the git blob id for the rest) before conversion; conversion
writes into a hidden temporary folder that is renamed into `models/NAME` only when complete, so a
failure or a Cancel leaves nothing half-installed.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from nmt_desktop.core.hub.catalogue import parse_opus_repo
from nmt_desktop.core.hub.client import (OPUS_MT_AUTHOR, HubError, HubUnreachableError, explain, hub_api, hub_endpoint,
                                        hub_offline, license_of)
from nmt_desktop.core.hub.files import REQUIRED_FILES, WEIGHT_FILES, wanted_files
from nmt_desktop.core.locations import user_data_dir, user_models_dir

__all__ = ["PullCancelled", "PullProgress", "PullResult", "pull_model", "normalise_repo"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_EMIT_EVERY_S = 0.1


class PullCancelled(Exception):
    """The user cancelled the pull; nothing was installed."""


@dataclass
class PullProgress:
    """Where a pull stands, as reported to the progress callback (at most ~10 times a second)."""

    stage: str  # "resolve", "download", "verify", "convert", "done"
    done_bytes: int = 0
    total_bytes: int = 0
    file: str = ""
    speed: float = 0.0  # bytes per second, smoothed
    eta_s: float | None = None  # seconds left in the download, when known


@dataclass
class PullResult:
    path: Path  # the installed model folder
    name: str
    repo: str
    revision: str  # the commit hash that was downloaded
    license: str
    downloaded_bytes: int


ProgressCallback = Callable[[PullProgress], None]


def normalise_repo(repo: str) -> str:
    """ "opus-mt-en-de" -> "Helsinki-NLP/opus-mt-en-de"; a full "owner/name" is kept."""
    repo = repo.strip().strip("/")
    if repo.startswith(("http://", "https://")):
        repo = "/".join(repo.split("/")[3:5])
    if "/" not in repo:
        repo = f"{OPUS_MT_AUTHOR}/{repo}"
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise HubError(f"{repo!r} is not a Hub model name; expected OWNER/NAME, e.g. Helsinki-NLP/opus-mt-en-de")
    return repo


class _Meter:
    """Counts downloaded bytes for the callback, smooths the speed, and stops the pull on Cancel."""

    def __init__(self, total: int, done: int, callback: ProgressCallback | None, cancel: threading.Event | None):
        self.total, self.done, self.file = total, done, ""
        self.callback, self.cancel = callback, cancel
        self.speed = 0.0
        self._last_t = self._emit_t = time.monotonic()
        self._last_done = done

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise PullCancelled("cancelled")

    def add(self, n: int) -> None:
        self.done += n
        self.check()
        now = time.monotonic()
        if now - self._emit_t >= _EMIT_EVERY_S:
            rate = (self.done - self._last_done) / max(now - self._last_t, 1e-6)
            self.speed = rate if self.speed == 0 else 0.7 * self.speed + 0.3 * rate
            self._last_t, self._last_done, self._emit_t = now, self.done, now
            self.emit("download")

    def emit(self, stage: str) -> None:
        if self.callback is None:
            return
        left = max(self.total - self.done, 0)
        eta = left / self.speed if self.speed > 0 else None
        self.callback(PullProgress(stage, self.done, self.total, self.file, self.speed, eta))


def _bar_class(meter: _Meter) -> type:
    """A tqdm class for hf_hub_download that shows nothing itself and feeds `meter` (progress, Cancel)."""
    from tqdm import tqdm

    class _MeterBar(tqdm):
        def __init__(self, *args: Any, **kwargs: Any):
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            meter.add(int(n or 0))
            return super().update(n)

    return _MeterBar


def _digest(path: Path, h: Any) -> str:
    """`h` (a hashlib object, maybe already fed a header) updated with the file's bytes: its hex digest."""
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _checksum_problem(path: Path, sibling: Any) -> str | None:
    """Why `path` is not the Hub's file `sibling` (size, then sha256 or git blob id); None if it is."""
    lfs = getattr(sibling, "lfs", None)
    size = getattr(lfs, "size", None) if lfs is not None else getattr(sibling, "size", None)
    if size is not None and path.stat().st_size != size:
        return f"has {path.stat().st_size:,} bytes where the Hub lists {size:,}"
    if lfs is not None and getattr(lfs, "sha256", None):
        got = _digest(path, hashlib.sha256())
        return None if got == lfs.sha256 else f"has sha256 {got[:12]}… where the Hub lists {lfs.sha256[:12]}…"
    blob = getattr(sibling, "blob_id", None)
    if blob:
        got = _digest(path, hashlib.sha1(f"blob {path.stat().st_size}\0".encode()))
        return None if got == blob else f"has git blob id {got[:12]}… where the Hub lists {blob[:12]}…"
    return None


def _writable_models_dir(models_dir: Path) -> None:
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        probe = models_dir / f".write-test-{uuid.uuid4().hex[:8]}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise HubError(f"cannot write to the models folder {models_dir} ({exc.strerror or exc}); make it writable "
                       "or point NMT_DESKTOP_DATA_DIR at a writable folder") from None


def _check_space(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise HubError(f"not enough free disk space in {folder}: the download and conversion need about "
                       f"{needed / 1e6:,.0f} MB, but only {free / 1e6:,.0f} MB are free")


def _read_model_type(path: Path, repo: str) -> str:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise HubError(f"{repo}: config.json is not readable JSON") from None
    return str(config.get("model_type", "")) if isinstance(config, dict) else ""


def _not_marian(repo: str, why: str) -> HubError:
    return HubError(f"{repo} is not a Marian translation model ({why}); only Marian models such as the "
                    "Helsinki-NLP OPUS-MT ones can be pulled")


def _attribution(repo: str, license_id: str) -> str:
    who = ("OPUS-MT by the Language Technology Research Group at the University of Helsinki "
           "(Tiedemann & Thottingal, 2020), trained on OPUS data" if repo.startswith(f"{OPUS_MT_AUTHOR}/")
           else f"{repo.split('/')[0]} on the Hugging Face Hub")
    return f"{repo}: {who}; license {license_id or 'as stated on the model page'}"


def _download(api_repo: str, filename: str, revision: str, staging: Path, bar: type) -> Path:
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(api_repo, filename, revision=revision, local_dir=staging, tqdm_class=bar,
                                endpoint=hub_endpoint()))


def pull_model(repo: str, *, int8: bool = False, name: str | None = None, revision: str | None = None,
               force: bool = False, progress: ProgressCallback | None = None,
               cancel: threading.Event | None = None, models_dir: Path | None = None) -> PullResult:
    """Download `repo` from the Hub, verify it, convert it and install it as `models_dir/NAME`.

    int8: store the weights as int8 (under half the float32 folder). name: the installed folder's
    name (default: the repo's name, e.g. opus-mt-en-de). force: replace an installed model of that
    name. cancel: set it (from any thread) to stop; PullCancelled is raised and nothing is installed.
    Raises HubError (one sentence) for anything the user can act on.
    """
    from nmt_desktop.core.formats.marian import MarianImportError, import_marian

    repo = normalise_repo(repo)
    name = name or repo.rsplit("/", 1)[-1]
    if not _NAME.fullmatch(name):
        raise HubError(f"{name!r} cannot name a model folder: use letters, digits, '.', '_' and '-'")
    models_dir = Path(models_dir) if models_dir is not None else user_models_dir()
    target = models_dir / name
    if target.exists() and not force:
        raise HubError(f"a model named {name} is already installed ({target}); use --force to replace it, or "
                       f"'nmt-desktop models remove {name}' first")
    _writable_models_dir(models_dir)
    if hub_offline():
        raise HubUnreachableError("HF_HUB_OFFLINE is set, so models cannot be downloaded; unset it to pull")
    meter = _Meter(0, 0, progress, cancel)
    meter.emit("resolve")
    try:
        info = hub_api().model_info(repo, revision=revision, files_metadata=True)
    except Exception as exc:  # noqa: BLE001 - one sentence for every failure
        raise explain(exc, repo) from None
    sha = str(info.sha or revision or "main")
    siblings = {s.rfilename: s for s in (info.siblings or [])}
    if "config.json" not in siblings:
        raise _not_marian(repo, "it has no config.json")
    wanted = wanted_files(siblings)  # config.json first: a repo that is not Marian is refused before the rest
    weights = next((w for w in wanted if w in WEIGHT_FILES), None)
    license_id = license_of(info.tags) or str(getattr(info.card_data, "license", "") or "")

    staging = user_data_dir() / "downloads" / repo.replace("/", "--")
    meter.total = sum(int(getattr(siblings[f], "size", 0) or 0) for f in wanted)
    bar = _bar_class(meter)
    try:
        staging.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        for filename in wanted:
            meter.check()
            meter.file = filename
            before = meter.done
            paths[filename] = _download(repo, filename, sha, staging, bar)
            # a file finished by an earlier, interrupted pull is not downloaded again: count it
            meter.done = before + int(getattr(siblings[filename], "size", 0) or 0)
            meter.emit("download")
            if filename == "config.json":
                model_type = _read_model_type(paths[filename], repo)
                if model_type != "marian":
                    raise _not_marian(repo, f"its config.json says model_type {model_type!r}")
                missing = [f for f in REQUIRED_FILES if f not in siblings] + ([] if weights else [WEIGHT_FILES[0]])
                if missing:
                    raise HubError(f"{repo} lacks {missing[0]}, which the Marian converter needs")
                weight_bytes = int(getattr(siblings[weights], "size", 0) or 0)
                _check_space(models_dir, meter.total - meter.done + weight_bytes // (3 if int8 else 1))
        meter.emit("verify")
        for filename, path in paths.items():
            problem = _checksum_problem(path, siblings[filename])
            if problem:
                path.unlink(missing_ok=True)
                raise HubError(f"{repo}: the downloaded {filename} {problem}, so it is corrupt; nothing was "
                               "installed (pull again to download it anew)")
        meter.emit("convert")
        meter.check()
        src, tgt = parse_opus_repo(repo)
        card = {"name": name, "source": "Hugging Face Hub", "hub_repo": repo, "revision": sha,
                "url": f"{hub_endpoint()}/{repo}", "license": license_id,
                "attribution": _attribution(repo, license_id),
                "downloaded": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "weights": "int8 (per-row scales)" if int8 else "float32",
                "note": f"Pulled with nmt-desktop pull {repo}{' --int8' if int8 else ''}; converted from "
                        f"{weights} without transformers or pickle."}
        partial = models_dir / f".partial-{name}-{uuid.uuid4().hex[:8]}"
        old = models_dir / f".removed-{name}-{uuid.uuid4().hex[:8]}"
        try:
            import_marian(staging, partial, src_lang=src if len(src) <= 3 else "",
                          tgt_lang=tgt if len(tgt) <= 3 else "", int8=int8, card=card)
            meter.check()
            if target.exists():  # --force: the old folder is deleted only once the new one is in place
                target.rename(old)
            try:
                partial.rename(target)
            except OSError:
                if old.exists():
                    old.rename(target)
                raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(old, ignore_errors=True)
    except PullCancelled:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except (HubError, MarianImportError):
        raise
    except Exception as exc:  # noqa: BLE001 - network, disk and Hub errors become one sentence
        raise explain(exc, repo) from None
    shutil.rmtree(staging, ignore_errors=True)
    meter.done = meter.total
    meter.emit("done")
    return PullResult(target, name, repo, sha, license_id, meter.total)
