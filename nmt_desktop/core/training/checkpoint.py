"""Training checkpoints: a model folder plus `trainer_state/`, written so a kill never corrupts.

A checkpoint is first written complete under `NAME.tmp` (files fsynced, a `COMPLETE` marker
last), then swapped in: `NAME` -> `NAME.old`, `NAME.tmp` -> `NAME`, `NAME.old` removed. Whatever
instant a kill lands on, at least one complete copy exists and `find_checkpoint` picks the newest.
Optimizer tensors and RNG states go to safetensors, the rest to JSON: nothing is pickled.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any, Sequence

import torch
from safetensors.torch import load_file, save_file

from nmt_desktop.core.formats.model_folder import save_model
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.model.transformer import Transformer

STATE_DIR = "trainer_state"
STATE_FILE = "state.json"
TENSORS_FILE = "tensors.safetensors"
COMPLETE = "COMPLETE"
CHECKPOINTS_DIR = "checkpoints"  # the kept snapshots (keep_checkpoints), one model folder per evaluation


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())
    for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        try:
            fd = os.open(d, os.O_RDONLY)
        except OSError:  # pragma: no cover - platforms without directory fds
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(folder: Path) -> None:
    """Delete a checkpoint copy, its COMPLETE marker first, so a kill mid-way never leaves a
    half-deleted folder that still claims to be complete."""
    if folder.exists():
        (folder / COMPLETE).unlink(missing_ok=True)
        shutil.rmtree(folder)


def _swap_in(tmp: Path, final: Path) -> None:
    """Replace `final` by the complete folder `tmp`, leaving a complete copy at every instant."""
    old = final.with_name(final.name + ".old")
    _remove(old)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    _remove(old)


def write_model_atomically(folder: Path, model: Transformer, tokenizers: TokenizerPair, card: dict,
                           extra: dict[str, Any] | None = None, files: Sequence[Path] = ()) -> Path:
    """Save a model folder via NAME.tmp and a swap; `extra` adds trainer state (see save_checkpoint), `files`
    are copied in as they are (the glossary kept from the parent model)."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    _remove(tmp)
    save_model(tmp, model, tokenizers, card)
    for path in files:
        shutil.copyfile(path, tmp / Path(path).name)
    if extra is not None:
        state_dir = tmp / STATE_DIR
        state_dir.mkdir()
        save_file(extra["tensors"], str(state_dir / TENSORS_FILE))
        (state_dir / STATE_FILE).write_text(json.dumps(extra["state"], indent=1), encoding="utf-8")
    (tmp / COMPLETE).write_text("ok\n", encoding="utf-8")
    _fsync_tree(tmp)
    _swap_in(tmp, folder)
    return folder


def optimizer_to_safe(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state dict into named tensors and JSON-able param groups."""
    sd = optimizer.state_dict()
    tensors = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, per_param in sd["state"].items():
        for key, value in per_param.items():
            if torch.is_tensor(value):
                tensors[f"optim.{idx}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(idx), {})[key] = value
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in sd["param_groups"]]
    return tensors, {"param_groups": groups, "scalars": scalars}


def optimizer_from_safe(optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor],
                        meta: dict[str, Any]) -> None:
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        if name.startswith("optim."):
            _, idx, key = name.split(".", 2)
            state.setdefault(int(idx), {})[key] = value
    for idx, values in meta.get("scalars", {}).items():
        state.setdefault(int(idx), {}).update(values)
    groups = []
    for g in meta["param_groups"]:
        g = dict(g)
        if "betas" in g:
            g["betas"] = tuple(g["betas"])
        groups.append(g)
    optimizer.load_state_dict({"state": state, "param_groups": groups})


def rng_to_safe() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors = {"rng.torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = s
    version, internal, gauss = random.getstate()
    return tensors, {"python": [version, list(internal), gauss]}


def rng_from_safe(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    torch.set_rng_state(tensors["rng.torch"])
    cuda = [tensors[k] for k in sorted(k for k in tensors if k.startswith("rng.cuda."))]
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(cuda[: torch.cuda.device_count()])
    version, internal, gauss = meta["python"]
    random.setstate((version, tuple(internal), gauss))


def save_checkpoint(folder: Path, model: Transformer, tokenizers: TokenizerPair, card: dict,
                    optimizer: torch.optim.Optimizer, state: dict[str, Any], files: Sequence[Path] = ()) -> Path:
    """Model folder + optimizer, RNG and loop state (`state` must be JSON-able); `files` as write_model_atomically."""
    opt_tensors, opt_meta = optimizer_to_safe(optimizer)
    rng_tensors, rng_meta = rng_to_safe()
    full_state = dict(state, optimizer=opt_meta, rng=rng_meta)
    return write_model_atomically(folder, model, tokenizers, card,
                                  {"tensors": {**opt_tensors, **rng_tensors}, "state": full_state}, files)


def is_complete(folder: Path) -> bool:
    return (folder / COMPLETE).is_file() and (folder / STATE_DIR / STATE_FILE).is_file()


def read_state(folder: Path) -> dict[str, Any]:
    return json.loads((folder / STATE_DIR / STATE_FILE).read_text(encoding="utf-8"))


def find_checkpoint(folder: Path) -> Path | None:
    """The newest complete copy among NAME, NAME.tmp and NAME.old (by step), or None."""
    folder = Path(folder)
    candidates = [p for p in (folder, folder.with_name(folder.name + ".tmp"), folder.with_name(folder.name + ".old"))
                  if is_complete(p)]
    if not candidates:
        return None
    return max(candidates, key=lambda p: read_state(p).get("step", -1))


def promote_checkpoint(folder: Path) -> Path | None:
    """Make the newest complete copy (NAME, NAME.tmp or NAME.old) be NAME itself, then return NAME.

    Run before resuming, so the next save's clean-up of NAME.tmp / NAME.old can never delete the
    copy the run resumed from.
    """
    folder = Path(folder)
    newest = find_checkpoint(folder)
    if newest is None:
        return None
    if newest != folder:
        if folder.exists() and not is_complete(folder):
            _remove(folder)
        _swap_in(newest, folder)
    for stale in (folder.with_name(folder.name + ".tmp"), folder.with_name(folder.name + ".old")):
        _remove(stale)
    return folder


def load_trainer_state(folder: Path, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore optimizer and RNG states from a checkpoint; return the loop state."""
    state = read_state(folder)
    tensors = load_file(str(folder / STATE_DIR / TENSORS_FILE))
    optimizer_from_safe(optimizer, tensors, state["optimizer"])
    rng_from_safe(tensors, state["rng"])
    return state


def snapshots(run: str | os.PathLike) -> list[Path]:
    """The kept snapshots of a run folder (RUN/checkpoints/step-NNNNNNN), oldest first."""
    folder = Path(run) / CHECKPOINTS_DIR
    return sorted(p for p in folder.glob("step-*") if p.is_dir() and p.name[5:].isdigit())
