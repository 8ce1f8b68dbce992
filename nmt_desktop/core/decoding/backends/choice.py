"""Which `StepBackend` decodes: chosen once per `Translator` (or per direct search call).

"auto" takes the compiled backend where it applies (library loaded, model on the CPU in float32 or
int8), else the Python one; `NMT_DESKTOP_BACKEND` names a backend when the caller leaves it to
"auto", so the CLI and the GUI can be switched without code; `NMT_DESKTOP_NATIVE=0` switches the
compiled library off (auto then takes Python). A search with an intervention (head mask, head
override) runs on the reference backend, the only one that has them.
"""

from __future__ import annotations

import os

from torch import Tensor

from nmt_desktop.core.decoding.backends.step_backend import StepBackend
from nmt_desktop.core.decoding.backends.compiled import CompiledBackend
from nmt_desktop.core.decoding.backends.compiled_step import compiled_step_applies
from nmt_desktop.core.decoding.backends.python import PythonBackend
from nmt_desktop.core.decoding.backends.reference import ReferenceBackend
from nmt_desktop.core.model.transformer import HeadOverride, Transformer

__all__ = ["BACKENDS", "BackendUnavailableError", "backend_for_search", "choose_backend"]

BACKENDS = ("auto", "reference", "python", "compiled")
ENVIRONMENT = "NMT_DESKTOP_BACKEND"


class BackendUnavailableError(ValueError):
    """The backend asked for cannot run here (the compiled library is not available)."""


def choose_backend(model: Transformer, name: str | None = "auto") -> StepBackend:
    """The backend called `name` (see BACKENDS) for `model`; None or "auto" as the module doc says."""
    if name in (None, "auto"):
        name = os.environ.get(ENVIRONMENT, "").strip().lower() or "auto"
    if name not in BACKENDS:
        raise ValueError(f"unknown decoding backend {name!r} (choose one of {', '.join(BACKENDS)})")
    applies = compiled_step_applies(model.tgt_embed.weight)
    if name == "auto":
        name = "reference" if model.training else "compiled" if applies else "python"
    if name == "compiled" and not applies:
        raise BackendUnavailableError(
            "the compiled decoding backend needs the compiled library (built by `python -m "
            "nmt_desktop.core.decoding.backends.native_library`, not switched off by NMT_DESKTOP_NATIVE=0) and a model "
            "on the CPU in float32 or int8")
    return {"reference": ReferenceBackend, "python": PythonBackend, "compiled": CompiledBackend}[name](model)


def backend_for_search(model: Transformer, backend: StepBackend | None, head_mask: Tensor | None = None,
                       head_override: HeadOverride | None = None) -> StepBackend:
    """The backend one search runs on: the reference one with the interventions when there are any,
    else `backend` (chosen now when None)."""
    if head_mask is not None or head_override is not None:
        return ReferenceBackend(model, head_mask, head_override)
    return backend if backend is not None else choose_backend(model)
