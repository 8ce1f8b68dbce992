"""Checkpoint averaging: one model whose weights are the element-wise mean of several snapshots.

Vaswani et al. (2017, section 6.1) averaged the last 5 or 20 checkpoints of a run; the mean of
nearby points on the slowly decaying learning-rate tail usually scores a little better than any of
them. The snapshots must come from one run: same architecture and same vocabulary. Training keeps
them with `keep_checkpoints = N` (`OUT/checkpoints/step-NNNNNNN`); `nmt-desktop export A B C ...`
averages what it is given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import torch

from nmt_desktop.core.formats.model_folder_layout import ModelFolderError
from nmt_desktop.core.formats.model_folder import LoadedModel, load_model


class AveragingError(ValueError):
    """The models cannot be averaged; the message is one sentence naming the odd one out."""


def _vocabulary(loaded: LoadedModel) -> tuple[str, str]:
    return loaded.tokenizers.source.to_str(), loaded.tokenizers.target.to_str()


def average_models(paths: Sequence[str | os.PathLike]) -> LoadedModel:
    """Load each model folder and return the first with every floating weight replaced by the mean.

    The card is the newest-named snapshot's (its training steps and time), without that snapshot's
    own dev scores, plus `averaged_from` (the folder names). Raises AveragingError when the
    architectures or vocabularies differ, ModelFolderError when one does not load.
    """
    if not paths:
        raise AveragingError("no models to average")
    first = load_model(paths[0])
    vocab = _vocabulary(first)
    cards = {Path(paths[0]).name: first.card}
    total = {k: v.detach().to(torch.float64).clone() for k, v in first.model.state_dict().items()}
    for path in paths[1:]:
        other = load_model(path)
        for what, same in (("architecture", other.config == first.config), ("vocabulary", _vocabulary(other) == vocab)):
            if not same:
                raise AveragingError(f"{path}: its {what} differs from that of {paths[0]}; only snapshots of "
                                     f"one training run can be averaged")
        for k, v in other.model.state_dict().items():
            total[k] += v.detach().to(torch.float64)
        cards[Path(path).name] = other.card
    state = first.model.state_dict()
    first.model.load_state_dict({k: (total[k] / len(paths)).to(v.dtype) if v.is_floating_point() else v
                                 for k, v in state.items()})
    card = {k: v for k, v in cards[max(cards)].items() if k != "dev"}
    card["averaged_from"] = [Path(p).name for p in paths]
    first.card = card
    return first


__all__ = ["AveragingError", "ModelFolderError", "average_models"]
