"""A model's name as the window shows it (Models list, model picker, window title, status bar).

A training run keeps its models as `RUN/best` and `RUN/last`, so the folder's own name said only "best";
such a model is named after its run, the folder the user chose or the Train tab named.
"""

from __future__ import annotations

import os
from pathlib import Path

RUN_MODELS = {"best": "", "last": " (last checkpoint)"}  # a run's model folder: what its name adds to the run's


def run_model_name(path: str | os.PathLike) -> str | None:
    """"RUN" for a training run's `RUN/best`, "RUN (last checkpoint)" for `RUN/last`; None for other models."""
    p = Path(path)
    if p.name in RUN_MODELS and p.parent.name:
        return p.parent.name + RUN_MODELS[p.name]
    return None
