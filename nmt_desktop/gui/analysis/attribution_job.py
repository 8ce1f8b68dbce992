"""What the Attribution view runs on its worker thread, Qt-free: one method's attribution (or its faithfulness)
with progress and a Cancel that really stops it, the per-target-token source share, and the exported record.

Why hooks on the model: the core's `attribute` and `faithfulness` take no progress callback and cannot be
interrupted, and one call costs from one forward pass (rollout) to T backward passes or hundreds of perturbed
passes. A forward pre-hook on the first decoder layer runs once per decoder pass, so it counts passes (progress
against `expected_passes`) and, when Cancel is pressed, raises `Cancelled` out of the core (which removes its own
hooks and restores the model's mode in `finally` blocks). The hook acts only on the job's own thread: the
Translate tab may decode with the same model meanwhile.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.attribution import Attribution, Faithfulness
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

# one line per method; a method the core adds later gets FALLBACK until it has its own line here
DESCRIPTIONS = {
    "saliency": "Gradient norm: how sensitive log p(token) is to each input embedding (unsigned).",
    "input_x_gradient": "Embedding × gradient, summed: a first-order estimate of each input's effect (signed).",
    "integrated_gradients": "Gradients integrated from an all-zero input (16 steps): effects that add up (signed).",
    "leave_one_out": "Replace one input token by <unk> and measure the drop of log p(token) (signed).",
    "attention_rollout": "Encoder self-attention rolled out through the last layer's cross-attention (unsigned).",
    "alti_plus": "ALTI+: each input's contribution through every layer's residual stream; its source share is the "
                 "model's reliance on the source.",
    "value_zeroing": "Zero one input's value vectors in every layer and measure how the final state changes.",
    "attention": "Cross-attention averaged over every decoder layer and head: the plain baseline (unsigned).",
}
FALLBACK = "Token attribution by {method}."
ROW_CHUNK = 64  # the core's batch of perturbed rows (attribution.ROW_CHUNK)
PROGRESS_EVERY_S = 0.05


class Cancelled(Exception):
    """The job was cancelled (Cancel, a new model or sentence); never shown."""


def description(method: str) -> str:
    return DESCRIPTIONS.get(method, FALLBACK.format(method=method.replace("_", " ")))


def method_title(method: str) -> str:
    """How the picker names a method: "leave one out", "ALTI+"."""
    return {"alti_plus": "ALTI+", "alti": "ALTI+", "input_x_gradient": "input × gradient"}.get(
        method, method.replace("_", " "))


def expected_passes(method: str, sources: int, targets: int) -> int | None:
    """Decoder passes one attribution takes (None: not known for this method; the bar then only moves)."""
    if method in ("saliency", "input_x_gradient", "integrated_gradients"):
        return targets  # one forward/backward per target token (the scales batched)
    if method == "leave_one_out":
        return math.ceil((sources + 1) / ROW_CHUNK) + (math.ceil((targets - 1) / ROW_CHUNK) if targets > 1 else 0)
    if method in ("attention_rollout", "attention"):
        return 1
    return None


def faithfulness_passes(targets: int, fractions: int = 5) -> int:
    """The unperturbed pass, then removal and keeping for the attribution's ranking and for the random one."""
    return 1 + 2 * math.ceil(2 * fractions * targets / ROW_CHUNK)


class Progress:
    """`report(done, expected)` from the worker thread, at most every PROGRESS_EVERY_S; `cancel` stops the job."""

    def __init__(self, report: Callable[[int, int], None] | None = None):
        self.cancel_event = threading.Event()
        self.report = report
        self.done = 0
        self._last = 0.0

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def tick(self, expected: int | None) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.report is not None and now - self._last >= PROGRESS_EVERY_S:
            self._last = now
            self.report(self.done, expected or 0)


@contextmanager
def watched(translator: Translator, progress: Progress, expected: int | None) -> Iterator[None]:
    """Count the decoder passes this thread makes, and raise `Cancelled` in the next one once cancelled."""
    model = translator.model
    layers = getattr(model, "decoder_layers", None)
    if not layers:  # not the core's Transformer: no progress, cancel only between calls
        yield
        return
    thread = threading.get_ident()

    def before(_module: Any, _args: Any) -> None:
        if threading.get_ident() != thread:
            return
        if progress.cancelled:
            raise Cancelled()
        progress.tick(expected)

    handle = layers[0].register_forward_pre_hook(before)
    try:
        yield
    finally:
        handle.remove()


def explain(translator: Translator, translation: Translation, method: str, progress: Progress) -> Attribution:
    """`attribute(translator, translation, method)` (token level), counted and cancellable."""
    from nmt_desktop.core.analysis.attribution import attribute

    if progress.cancelled:
        raise Cancelled()
    expected = expected_passes(method, len(translation.source_ids), len(translation.target_ids))
    with watched(translator, progress, expected):
        return attribute(translator, translation, method)


def faithful(translator: Translator, translation: Translation, attribution: Attribution,
             progress: Progress) -> Faithfulness:
    """`faithfulness(...)` of a token-level attribution, counted and cancellable."""
    from nmt_desktop.core.analysis.attribution import faithfulness

    if progress.cancelled:
        raise Cancelled()
    with watched(translator, progress, faithfulness_passes(len(translation.target_ids))):
        return faithfulness(translator, translation, attribution)


@dataclass(frozen=True)
class Share:
    """Per target token (or word): how much of its explanation is on the source, 0..1, and what that number is."""

    values: np.ndarray  # (rows,)
    label: str
    own: bool  # the method's own measure (ALTI+), not |attribution| summed here


def source_share(attribution: Attribution) -> Share:
    """The method's own source share when its Attribution has one (`Attribution.source_share`: ALTI+, value
    zeroing), else sum |source row| / (sum |source row| + sum |prefix row|): the share of |attribution| there."""
    rows = attribution.source.shape[0]
    own = getattr(attribution, "source_share", None)
    if own is not None and np.shape(own) == (rows,):
        return Share(np.clip(np.asarray(own, dtype=np.float64), 0.0, 1.0),
                     f"{method_title(attribution.method)} source contribution", True)
    on_source = np.abs(attribution.source).sum(1).astype(np.float64)
    on_prefix = np.abs(attribution.prefix).sum(1).astype(np.float64)
    total = on_source + on_prefix
    values = np.divide(on_source, total, out=np.zeros_like(total), where=total > 0)
    return Share(values, "share of |attribution| on the source", False)


def record(attribution: Attribution, share: Share, faith: Faithfulness | None = None) -> dict[str, Any]:
    """What the JSON export writes: the matrices with their raw tokens (rows: target, columns: source / prefix)."""
    out: dict[str, Any] = {
        "method": attribution.method, "level": attribution.level, "signed": bool(attribution.signed),
        "seconds": float(attribution.seconds), "source_tokens": list(attribution.source_tokens),
        "target_tokens": list(attribution.target_tokens),
        "index": "source[target][source], prefix[target][earlier target], each counted from 0",
        "source": np.asarray(attribution.source, np.float32).astype(np.float64).tolist(),
        "prefix": np.asarray(attribution.prefix, np.float32).astype(np.float64).tolist(),
        "logprobs": np.asarray(attribution.logprobs, np.float32).astype(np.float64).tolist(),
        "source_share": share.values.tolist(), "source_share_is": share.label,
    }
    if faith is not None:
        out["faithfulness"] = {
            "fractions": list(faith.fractions), "seconds": faith.seconds, "seed": faith.seed,
            "aopc_comprehensiveness": faith.aopc_comprehensiveness, "aopc_sufficiency": faith.aopc_sufficiency,
            "random_aopc_comprehensiveness": faith.random_aopc_comprehensiveness,
            "random_aopc_sufficiency": faith.random_aopc_sufficiency}
    return out


def faithfulness_line(faith: Faithfulness) -> str:
    """"Comprehensiveness AOPC 0.83 (random 0.41, higher is better) · Sufficiency …"."""
    return (f"Comprehensiveness AOPC {faith.aopc_comprehensiveness:.3f} "
            f"(random {faith.random_aopc_comprehensiveness:.3f}; higher is more faithful) · Sufficiency AOPC {faith.aopc_sufficiency:.3f} (random "
            f"{faith.random_aopc_sufficiency:.3f}; lower is more faithful) · {faith.seconds:.2f} s")
