"""The Python backend: the fused single-position step (fused_step.py) over weights prepared once.

The weights are prepared at the first search and kept: a snapshot, so after changing the model's
weights make a new backend (a new `Translator`, as the trainer does per evaluation).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from nmt_desktop.core.decoding.backends.step_backend import DecoderState, StepOutput
from nmt_desktop.core.decoding.backends.fused_step import CrossState, FusedStep, cross_state, fused_step, prepare_fused_step
from nmt_desktop.core.decoding.selection import PythonSelection
from nmt_desktop.core.model.transformer import EncoderOutput, Transformer

__all__ = ["PythonBackend"]


@dataclass
class FusedState(DecoderState):
    cross: CrossState | None = None  # the cache's cross-attention K/V in the fused layout, made when needed


class PythonBackend(PythonSelection):
    name = "python"

    def __init__(self, model: Transformer):
        self.model = model
        self._prepared: FusedStep | None = None

    @property
    def prepared(self) -> FusedStep:
        """The model's weights laid out for the step, made once (at the first search)."""
        if self._prepared is None:
            self._prepared = prepare_fused_step(self.model)
        return self._prepared

    def start(self, enc: EncoderOutput, capacity: int) -> FusedState:
        return FusedState(self.model.start_cache(enc, capacity))

    def step(self, state: FusedState, tokens: Tensor, need_cross: bool, need_self: bool,
             need_hidden: bool = False) -> StepOutput:
        cache, limit = state.cache, self.model.config.max_positions
        if cache.length >= limit:
            raise ValueError(f"sequence of {cache.length + 1} tokens exceeds the model's max_positions ({limit})")
        if state.cross is None:
            state.cross = cross_state(cache, self.prepared.n_heads)
        return StepOutput(*self._run(state, tokens, need_cross, need_self, need_hidden))

    def _run(self, state: FusedState, tokens: Tensor, need_cross: bool, need_self: bool, need_hidden: bool
             ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
        return fused_step(self.prepared, state.cache, state.cross, tokens, need_cross, need_self, need_hidden)

    def reorder(self, state: FusedState, indices: Tensor, cross: bool = True) -> None:
        state.cache.reorder(indices, cross)
        if cross:
            state.cross = None

