"""What an attribution costs per sentence (issue 31): each method of core/analysis/attribution.py, and the
faithfulness of its result, in seconds and as a multiple of the greedy translation of the same sentence
(the peer in the same run: these machines are noisy, a ratio travels better than a time). One thread, CPU.

    python benchmarks/attribution_cost.py -m en-de            # the bundled model
    python benchmarks/attribution_cost.py -m /path/to/opus    # an OPUS-MT-size model (opus_size_app.py --opus)
    python benchmarks/attribution_cost.py --opus-size --sentences 2 --repeats 1 --ig-steps 8

`--opus-size` builds, in memory, a random model of Helsinki-NLP/opus-mt-en-de's size (6+6 layers, 8 heads,
d_model 512, ffn 2048, SiLU, shared vocabulary 58,101, final logits bias) with the bundled model's tokenizer:
the ids the tokenizer lacks (8,000 and up) get a logits bias of -30 so that greedy decoding never emits them.
Random weights give random attributions, but the cost is the architecture's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

SENTENCES = ["The old man walked slowly to the small station near the river.",
             "She told me that the meeting would start an hour later than planned.",
             "We did not expect so many people to come to the concert on a Monday."]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", default="en-de")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--opus-size", action="store_true", help="a random OPUS-MT-size model (module docstring)")
    p.add_argument("--sentences", type=int, default=len(SENTENCES), help="the first N of the three sentences")
    p.add_argument("--ig-steps", type=int, default=16, help="integrated gradients' steps (default 16)")
    p.add_argument("--methods", default=None, help="comma-separated (default: every method)")
    a = p.parse_args()
    import torch

    from nmt_desktop.core.analysis.attribution import METHODS, attribute, faithfulness
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator

    torch.set_num_threads(1)
    tr = opus_size(a.model) if a.opus_size else Translator.load(a.model)
    name = "random OPUS-MT-size (6+6, 8 heads, d 512, 58,101 words)" if a.opus_size else a.model
    cfg = DecodeConfig(max_len_a=0.0, max_len_b=24)  # a random OPUS-size model never stops: keep T comparable
    sentences = SENTENCES[:a.sentences]
    methods = a.methods.split(",") if a.methods else list(METHODS)
    translations = [tr.translate(s, cfg) for s in sentences]

    def timed(fn) -> float:
        times = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    decode = statistics.median([timed(lambda s=s: tr.translate(s, cfg)) for s in sentences])
    rows = {}
    for method in methods:
        options = {"steps": a.ig_steps} if method == "integrated_gradients" else {}
        per = [timed(lambda t=t: attribute(tr, t, method, **options)) for t in translations]
        attrs = [attribute(tr, t, method, **options) for t in translations]
        faith = [timed(lambda t=t, at=at: faithfulness(tr, t, at)) for t, at in zip(translations, attrs)]
        rows[method] = {"seconds": round(statistics.median(per), 4), "x_decode": round(statistics.median(per) / decode, 2),
                        "faithfulness_seconds": round(statistics.median(faith), 4)}
    out = {"model": name, "layers": tr.config.decoder_layers, "ig_steps": a.ig_steps, "heads": tr.config.n_heads,
           "target_tokens": [len(t.target_tokens) for t in translations], "decode_seconds": round(decode, 4),
           "methods": rows}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{name}: greedy decode {decode * 1000:.1f} ms per sentence (target tokens {out['target_tokens']}, "
              f"source tokens {[len(t.source_ids) for t in translations]}); integrated gradients: {a.ig_steps} steps; "
              f"median of {a.repeats}")
        print("| method | seconds / sentence | x greedy decode | faithfulness seconds |")
        print("|---|---:|---:|---:|")
        for m, r in rows.items():
            print(f"| {m} | {r['seconds']} | {r['x_decode']} | {r['faithfulness_seconds']} |")
    return 0


def opus_size(tokenizer_model: str):
    """A Translator on a random model of OPUS-MT en-de's size with `tokenizer_model`'s tokenizers (docstring)."""
    import dataclasses

    import torch

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.model.transformer import build_model

    small = Translator.load(tokenizer_model)
    cfg = dataclasses.replace(small.config, d_model=512, n_heads=8, encoder_layers=6, decoder_layers=6,
                              ffn_dim=2048, activation="silu", src_vocab_size=58101, tgt_vocab_size=58101,
                              final_logits_bias=True, dropout=0.0, max_positions=512)
    model = build_model(cfg, seed=0).eval()
    with torch.no_grad():
        model.logits_bias[small.config.tgt_vocab_size:] = -30.0  # ids the tokenizer lacks are never emitted
    return Translator(model, small.tokenizers, name="opus-size-random")


if __name__ == "__main__":
    raise SystemExit(main())
