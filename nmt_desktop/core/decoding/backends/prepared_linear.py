"""A linear layer's weights laid out once for fast inference on a few rows at a time.

Decoding multiplies 1 (greedy) to a few dozen (beam, batches) rows by each weight matrix per step.
For that shape the layout of the weights matters more than the arithmetic (measured by
`benchmarks/linear_layouts.py`, figures in benchmarks/RESULTS.md):

* one row: `addmm` on a contiguous (in, out) copy is fastest with one thread (a oneDNN call has a
  fixed cost), except for matrices far larger than the last-level cache, such as a 58k-word output
  projection, where oneDNN's blocked layout wins at one row too; with several threads oneDNN splits
  a large product over them and MKL does not;
* two or more rows times a large enough matrix: oneDNN's blocked weight format
  (`mkldnn::_linear_pointwise`) beats MKL's `addmm`, and applies the activation or adds the
  residual in the same call. Its copy is made at the first such product (beam search, batches), so
  greedy single-sentence decoding never holds it;
* int8 models (core/decoding/int8.py) keep fbgemm's packed int8 weights and their own kernel.

The rule is decided here only, once per layer, as `blocked_from_rows`: the row counts from which the
blocked layout serves a product, on one thread and on several. The compiled step
(native/decode_step.cpp) obeys the same numbers instead of repeating the rule.

A `PreparedLinear` is a snapshot: it does not follow later changes of the layer's weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["PreparedLinear", "prepare_linear", "prepare_weight"]


def _op(namespace: str, name: str, overload: str):
    """An operator overload (calling it skips the packet's Python checks), or None in a build without it."""
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except (AttributeError, RuntimeError):
        return None


_LINEAR_DYNAMIC = _op("quantized", "linear_dynamic", "default")
_ONEDNN = _op("mkldnn", "_linear_pointwise", "default")
_ONEDNN_ADD = _op("mkldnn", "_linear_pointwise", "binary")
_ONEDNN_ACTIVATIONS = {"relu": ("relu", ""), "silu": ("swish", ""), "gelu": ("gelu", "none")}
_ACTIVATIONS = {"relu": torch.relu_, "silu": lambda h: F.silu(h, inplace=True), "gelu": F.gelu}
_BLOCKING_ROWS = 16  # the row count oneDNN's weight layout is chosen for; any count works with it
NEVER = 1 << 62  # a row count no product reaches: the blocked layout is never used
_ONEDNN_MIN_WEIGHTS = 1 << 17  # smaller matrices are faster through addmm at any row count
_ONEDNN_THREADED_MIN_WEIGHTS = 1 << 19  # one row: oneDNN splits these over threads, MKL's addmm does not
_ONEDNN_ONE_ROW_MIN_WEIGHTS = 1 << 23  # one row, any thread count: 32 MiB of float32, past the last-level cache


@dataclass
class PreparedLinear:
    """`x (N, in) -> (N, out)` for one layer: float weights (`weight_t`) or int8 (`int8`)."""

    bias: Tensor | None  # (out,); None for int8 (inside its packed params)
    weight_t: Tensor | None = None  # (in, out) contiguous
    int8: object | None = None  # fbgemm packed params of an int8 dynamic Linear
    blocked_from_rows: tuple[int, int] = (NEVER, NEVER)  # oneDNN's layout from this many rows (1 thread, several)
    _onednn: Tensor | None = None  # oneDNN blocked weight, made at the first product that uses it

    def _blocked(self, x: Tensor) -> Tensor | None:
        """The oneDNN weight when it serves x better than addmm, else None."""
        if x.shape[0] < self.blocked_from_rows[torch.get_num_threads() > 1]:
            return None
        if self._onednn is None:
            with torch.no_grad():
                self._onednn = torch.ops.mkldnn._reorder_linear_weight(self.weight_t.t(), _BLOCKING_ROWS)
        return self._onednn

    def __call__(self, x: Tensor) -> Tensor:
        if self.int8 is not None:
            return _LINEAR_DYNAMIC(x, self.int8, True)
        blocked = self._blocked(x)
        if blocked is not None:
            return _ONEDNN(x, blocked, self.bias, "none", [], "")
        return torch.mm(x, self.weight_t) if self.bias is None else torch.addmm(self.bias, x, self.weight_t)

    def add(self, x: Tensor, residual: Tensor) -> Tensor:
        """`residual + self(x)`."""
        blocked = self._blocked(x)
        if blocked is not None:
            return _ONEDNN_ADD(x, residual, blocked, self.bias, "add")
        return torch.add(residual, self(x))

    def activated(self, x: Tensor, activation: str) -> Tensor:
        """`activation(self(x))` for "relu", "silu" or "gelu"."""
        blocked = self._blocked(x)
        if blocked is not None:
            attr, algorithm = _ONEDNN_ACTIVATIONS[activation]
            return _ONEDNN(x, blocked, self.bias, attr, [], algorithm)
        return _ACTIVATIONS[activation](self(x))


def onednn_available(device: torch.device) -> bool:
    return device.type == "cpu" and torch.backends.mkldnn.is_available() and None not in (_ONEDNN, _ONEDNN_ADD)


def prepare_linear(layer: nn.Module, scale: float = 1.0, rows: slice | None = None) -> PreparedLinear:
    """Prepare an `nn.Linear` (or an int8 dynamic Linear, which keeps its kernel and ignores `scale`).

    scale: multiplies output rows `rows` (all when None) of the weight and bias, e.g. to fold the
    attention's 1/sqrt(dh) into a query projection.
    """
    if type(layer) is not nn.Linear:
        return PreparedLinear(None, int8=layer._packed_params._packed_params)
    return prepare_weight(layer.weight, layer.bias, scale, rows)


def prepare_weight(weight: Tensor, bias: Tensor | None, scale: float = 1.0,
                   rows: slice | None = None) -> PreparedLinear:
    """`prepare_linear` for a bare (out, in) weight and optional bias."""
    with torch.no_grad():
        weight = weight.detach()
        bias = None if bias is None else bias.detach()
        if scale != 1.0:
            part = rows if rows is not None else slice(None)
            weight, bias = weight.clone(), None if bias is None else bias.clone()
            weight[part] *= scale
            if bias is not None:
                bias[part] *= scale
        return PreparedLinear(bias, weight.t().contiguous(), blocked_from_rows=_blocked_from_rows(weight))


def _blocked_from_rows(weight: Tensor) -> tuple[int, int]:
    """From how many rows oneDNN's blocked layout serves products with `weight` (V, D): on one
    thread and on several (see the module doc)."""
    n = weight.numel()
    if weight.dtype != torch.float32 or n < _ONEDNN_MIN_WEIGHTS or not onednn_available(weight.device):
        return NEVER, NEVER
    one_thread = 1 if n >= _ONEDNN_ONE_ROW_MIN_WEIGHTS else 2
    return one_thread, 1 if n >= _ONEDNN_THREADED_MIN_WEIGHTS else one_thread
