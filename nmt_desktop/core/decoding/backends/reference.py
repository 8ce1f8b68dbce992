"""The reference backend: every step through the model's own modules (`Transformer.decode`).

Slowest, and the one the others are checked against. The only backend that takes interventions,
because they live inside the modules: a head mask (cross-attention heads switched off, per search or
per row) and a head override (mean ablation).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from nmt_desktop.core.decoding.backends.step_backend import DecoderState, StepOutput
from nmt_desktop.core.decoding.selection import PythonSelection
from nmt_desktop.core.model.transformer import EncoderOutput, HeadOverride, Transformer

__all__ = ["ReferenceBackend"]


@dataclass
class ReferenceState(DecoderState):
    head_mask: Tensor | None = None  # (L, H), or (B, L, H) following the rows


class ReferenceBackend(PythonSelection):
    """head_mask: (L, H) or (B, L, H) per source (replicated to each source's rows);
    head_override: mean ablation of cross-attention heads (see `HeadOverride`)."""

    name = "reference"

    def __init__(self, model: Transformer, head_mask: Tensor | None = None,
                 head_override: HeadOverride | None = None):
        self.model, self.head_mask, self.head_override = model, head_mask, head_override

    def start(self, enc: EncoderOutput, capacity: int) -> ReferenceState:
        mask = self.head_mask
        rows = enc.memory.shape[0]
        if mask is not None and mask.dim() == 3 and mask.shape[0] != rows:  # per source -> per row (beams)
            mask = mask.repeat_interleave(rows // mask.shape[0], 0)
        return ReferenceState(self.model.start_cache(enc, capacity), mask)

    def step(self, state: ReferenceState, tokens: Tensor, need_cross: bool, need_self: bool,
             need_hidden: bool = False) -> StepOutput:
        out = self.model.decode(tokens[:, None], cache=state.cache, need_cross=need_cross, need_self=need_self,
                                head_mask=state.head_mask, head_override=self.head_override, need_hidden=need_hidden)
        return StepOutput(out.logits[:, -1],  # (B, V)
                          None if out.cross_attention is None else out.cross_attention[:, :, :, -1],  # (B, L, H, S)
                          None if out.self_attention is None else out.self_attention[:, :, :, -1],
                          None if out.hidden is None else out.hidden[:, -1])  # (B, D)

    def reorder(self, state: ReferenceState, indices: Tensor, cross: bool = True) -> None:
        state.cache.reorder(indices, cross)
        if state.head_mask is not None and state.head_mask.dim() == 3:
            state.head_mask = state.head_mask.index_select(0, indices)
