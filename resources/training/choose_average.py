"""Which export of a run scores best on dev: its best checkpoint, or the average of its last K snapshots?

    .venv/bin/python resources/training/choose_average.py en-de --k 4,8,12 [--beam 1] [--sentences 0]

Reads runs/PAIR/best and runs/PAIR/checkpoints/step-* (kept by `keep_checkpoints`), exports each
candidate as the shipped model would be (float16, `nmt-desktop export`'s code path) into a
temporary folder, scores it with `nmt-desktop eval`'s code on ../shared/data/tatoeba/PAIR/dev.tsv
and prints one line per candidate (and a JSON object with --json). Dev is the model-selection set.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nmt_desktop.cli.evaluate import evaluate_model  # noqa: E402
from nmt_desktop.core.formats.averaging import average_models  # noqa: E402
from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus  # noqa: E402
from nmt_desktop.core.formats.model_folder import load_model, save_model  # noqa: E402
from nmt_desktop.core.training.checkpoint import snapshots  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pair", help="en-de or en-fr (runs/PAIR, ../shared/data/tatoeba/PAIR/dev.tsv)")
    p.add_argument("--k", default="4,8,12", help="comma-separated numbers of last snapshots to average")
    p.add_argument("--beam", type=int, default=1, help="beam size for scoring (default 1: greedy)")
    p.add_argument("--sentences", type=int, default=0, help="score only the first N dev rows (0 = all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    run = ROOT / "runs" / args.pair
    kept = snapshots(run)
    dev = read_corpus(CorpusSpec(path=str(ROOT.parent / "shared/data/tatoeba" / args.pair / "dev.tsv"))).pairs
    dev = dev[: args.sentences] if args.sentences else dev
    candidates: dict[str, list[Path]] = {"best": [run / "best"], "last": [run / "last"]}
    for k in (int(x) for x in args.k.split(",")):
        if 1 < k <= len(kept):
            candidates[f"avg{k} ({kept[-k].name}..{kept[-1].name})"] = kept[-k:]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, paths in candidates.items():
            loaded = load_model(paths[0]) if len(paths) == 1 else average_models(paths)
            folder = Path(tmp) / "candidate"
            save_model(folder, loaded.model, loaded.tokenizers, loaded.card, dtype=torch.float16)
            r = evaluate_model(folder, dev, beam=args.beam)
            rows.append({"candidate": name, "bleu": r["bleu"], "chrf": r["chrf"], "sentences": r["sentences"],
                         "steps": loaded.card.get("training", {}).get("steps")})
            if not args.json:
                print(f"{args.pair} {name:40s} BLEU {r['bleu']:6.2f}  chrF {r['chrf']:6.2f}  "
                      f"({r['sentences']} sentences, beam {args.beam})", flush=True)
    if args.json:
        print(json.dumps({"pair": args.pair, "beam": args.beam, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
