"""Opt-in int8 inference: dynamic quantisation of the linear layers and of the output projection.

`quantize_int8(model)` returns a copy of a float32 model whose `nn.Linear` layers (encoder and
decoder) are `torch.ao.nn.quantized.dynamic.Linear` modules: int8 weights (one scale per output
row), activations quantised on the fly per call (fbgemm / x86 kernels). The tied output projection
(the target embedding matrix, plus the logits bias) gets an int8 copy too (`Transformer.int8_output`);
the embeddings, layer norms and attention stay float32, so attention weights are still computed
exactly as before and returned the same way.

At batch 1 a decoding step is bound by reading the weights, so a quarter of the bytes makes the
large products several times faster (benchmarks/RESULTS.md). Logits move a little; greedy outputs
of a trained model mostly stay the same. It is CPU-only and inference-only: a quantised model
cannot be trained or saved.
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from nmt_desktop.core.model.transformer import Transformer

__all__ = ["quantize_int8", "is_int8"]


def _dynamic_linear(weight: torch.Tensor, bias: torch.Tensor | None) -> nn.Module:
    """An int8 dynamic `Linear` with per-output-row scales for a float (out, in) weight."""
    from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear
    from torch.ao.quantization import per_channel_dynamic_qconfig

    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    with torch.no_grad():
        lin.weight.copy_(weight)
        if bias is not None:
            lin.bias.copy_(bias)
    lin.qconfig = per_channel_dynamic_qconfig
    return DynamicLinear.from_float(lin)


def quantize_int8(model: Transformer) -> Transformer:
    """An int8 copy of `model` (CPU, eval mode); `model` itself is left unchanged."""
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("int8 decoding runs on the CPU only")
    if "fbgemm" not in torch.backends.quantized.supported_engines and \
            "x86" not in torch.backends.quantized.supported_engines:
        raise ValueError("int8 decoding needs PyTorch's x86/fbgemm quantized kernels, which this build lacks")
    q = copy.deepcopy(model).eval()
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
        warnings.simplefilter("ignore")
        with torch.no_grad():
            weight = q.output_weight  # (V, D)
            q.int8_output = _dynamic_linear(weight.detach(), q.logits_bias)
            for parent in list(q.modules()):
                for name, child in list(parent.named_children()):
                    if type(child) is nn.Linear:
                        setattr(parent, name, _dynamic_linear(child.weight, child.bias))
    return q


def is_int8(model: nn.Module) -> bool:
    return getattr(model, "int8_output", None) is not None
