"""Slow adaptation (issue 45): the bundled en-de model fine-tuned on a grown memory of a domain it never saw
(Multi30k image captions), with its own Tatoeba training data replayed, and what that does beside instant
adaptation.

1. A memory of the first --memory-segments Multi30k train pairs (confirmed), in a fresh SQLite file.
2. `nmt-desktop train --from models/en-de --memory M --pair en-de` (a child process, as a user runs it): the
   replay and the general dev text are the parent's own (its card's Tatoeba train and dev files), a tenth of the
   memory is held out as the memory's dev set. Its card's before/after scores are printed.
3. The adaptation curves with and without the fine-tune: benchmarks/adaptive.py's protocol (translate each
   Multi30k test segment with the memory as it stands, then confirm its reference; a fresh, empty memory) for
   the parent and for the fine-tuned model, adaptive and static; chrF per block of 50 segments.

    nice -n 19 python benchmarks/memory_finetune.py [--memory-segments 1000 --steps 150 --test-segments 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from adaptive import DATA, REPO, curve, multi30k, protocol, scores  # noqa: E402
from nmt_desktop.core.adaptation.settings import Adaptation  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory  # noqa: E402

PAIR = Pair.of("en", "de")


def grown_memory(path: Path, segments: int) -> int:
    folder = DATA / "multi30k"
    en = (folder / "train.en").read_text(encoding="utf-8").splitlines()[:segments]
    de = (folder / "train.de").read_text(encoding="utf-8").splitlines()[:segments]
    with TranslationMemory(path) as memory:
        memory.add(Entry(s, t, PAIR, origin="confirmed") for s, t in zip(en, de))
        return memory.count(PAIR)


def fine_tune(memory: Path, run: Path, args: argparse.Namespace) -> tuple[dict, float]:
    command = [sys.executable, "-m", "nmt_desktop", "train", "--from", "models/en-de", "--memory", str(memory),
               "--pair", "en-de", "--out", str(run), "--max-steps", str(args.steps),
               "--eval-every", str(max(1, args.steps // 3)), "--eval-sentences", str(args.eval_sentences),
               "--lr", "1e-4", "--warmup-steps", "30", "--schedule", "constant", "--threads", str(args.threads),
               "--progress", "json"]
    print("$", " ".join(command), flush=True)
    t0 = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    return json.loads((run / "best" / "card.json").read_text(encoding="utf-8")), wall


def curves(model: Path, pairs: list[tuple[str, str]]) -> dict:
    tr = Translator.load(model)
    refs = [t for _, t in pairs]
    half = len(pairs) // 2
    with tempfile.TemporaryDirectory() as work, TranslationMemory(Path(work) / "memory.sqlite") as memory:
        run = protocol(tr, pairs, Adaptation(memory, PAIR), None)
    return {"curve_static": curve(run.static, refs), "curve_adaptive": curve(run.adaptive, refs),
            "segments_with_matches": run.used, "adaptation": repr(Adaptation(None, PAIR)),
            "static_second_half": scores(run.static[half:], refs[half:]),
            "adaptive_second_half": scores(run.adaptive[half:], refs[half:])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memory-segments", type=int, default=1000)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--eval-sentences", type=int, default=300)
    p.add_argument("--test-segments", type=int, default=300)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "memory_finetune")
    p.add_argument("--reuse", type=Path, help="a run folder this script made: its model, no new fine-tune")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    memory, run = args.out / "memory.sqlite", args.out / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    if args.reuse:
        run, wall = args.reuse, float("nan")
        card = json.loads((run / "best" / "card.json").read_text(encoding="utf-8"))
    else:
        memory.unlink(missing_ok=True)
        print(f"memory: {grown_memory(memory, args.memory_segments)} Multi30k en-de segments", flush=True)
        card, wall = fine_tune(memory, run, args)
    note = card["memory"]
    for domain in ("memory", "general"):
        b, a = note["scores"][domain]["before"], note["scores"][domain]["after"]
        print(f"{domain:8s} dev ({a['sentences']} sentences): chrF {b['chrf']:.2f} -> {a['chrf']:.2f}, "
              f"BLEU {b['bleu']:.2f} -> {a['bleu']:.2f}", flush=True)
    print(f"fine-tune: {card['training']['steps']} steps, best at step {note['scores']['step']}, "
          f"{note['replay']['pairs']} replayed pairs, {wall:.0f} s wall", flush=True)
    pairs = multi30k("de", "test")[: args.test_segments]
    results = {"memory_card": note, "wall_s": wall, "run": str(run)}
    for name, model in (("parent", REPO / "models" / "en-de"), ("fine-tuned", run / "best")):
        results[name] = c = curves(model, pairs)
        print(f"{name:10s} Multi30k test 2nd half chrF: static {c['static_second_half'][0]:.2f}, adaptive "
              f"{c['adaptive_second_half'][0]:.2f} (matches in {c['segments_with_matches']}); curves static {c['curve_static']} adaptive "
              f"{c['curve_adaptive']}", flush=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
