"""What an attribution costs per sentence (issue 31): each method of core/analysis/attribution.py, and the
faithfulness of its result, in seconds and as a multiple of the greedy translation of the same sentence
(the peer in the same run: these machines are noisy, a ratio travels better than a time). One thread, CPU.

    python benchmarks/attribution_cost.py -m en-de            # the bundled model
    python benchmarks/attribution_cost.py -m /path/to/opus    # an OPUS-MT-size model (opus_size_app.py --opus)
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
    a = p.parse_args()
    import torch

    from nmt_desktop.core.analysis.attribution import METHODS, attribute, faithfulness
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator

    torch.set_num_threads(1)
    tr = Translator.load(a.model)
    cfg = DecodeConfig(max_len_a=0.0, max_len_b=24)  # a random OPUS-size model never stops: keep T comparable
    translations = [tr.translate(s, cfg) for s in SENTENCES]

    def timed(fn) -> float:
        times = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    decode = statistics.median([timed(lambda s=s: tr.translate(s, cfg)) for s in SENTENCES])
    rows = {}
    for method in METHODS:
        per = [timed(lambda t=t: attribute(tr, t, method)) for t in translations]
        attrs = [attribute(tr, t, method) for t in translations]
        faith = [timed(lambda t=t, at=at: faithfulness(tr, t, at)) for t, at in zip(translations, attrs)]
        rows[method] = {"seconds": round(statistics.median(per), 4), "x_decode": round(statistics.median(per) / decode, 2),
                        "faithfulness_seconds": round(statistics.median(faith), 4)}
    out = {"model": a.model, "layers": tr.config.decoder_layers, "heads": tr.config.n_heads,
           "target_tokens": [len(t.target_tokens) for t in translations], "decode_seconds": round(decode, 4),
           "methods": rows}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{a.model}: greedy decode {decode * 1000:.1f} ms per sentence (target tokens {out['target_tokens']})")
        print("| method | seconds / sentence | x greedy decode | faithfulness seconds |")
        print("|---|---:|---:|---:|")
        for m, r in rows.items():
            print(f"| {m} | {r['seconds']} | {r['x_decode']} | {r['faithfulness_seconds']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
