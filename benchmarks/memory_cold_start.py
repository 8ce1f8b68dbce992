"""What decoding with a memory costs when the memory was filled before this process started (issue 45's time
goal as a user meets it: `translate --memory M` on a file, a fresh process), against decoding without one.

`adaptive.py` measures the `--learn` protocol, where each confirmed segment's decoder states are made when it is
confirmed (`Translator.remember`) and kept in the process, so a later sentence pays only the lookup and the
mixture. Here the memory holds `--memory-segments` pairs of the domain added beforehand (as `tm import` or an
earlier `--learn` run leaves it), and a fresh `Translator` translates `--sentences` other sentences of the domain
in batches of `--batch-size` (as the CLI does) twice: cold (every matched segment force-decoded at its first use)
and warm (the same translator again: the states kept). CPU seconds, 1 torch thread, the static model timed in
the same round; `--profile` adds cProfile's split of the cold run (forced states, mixture, lookups).

    nice -n 0 .venv/bin/python benchmarks/memory_cold_start.py --rounds 2
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv: list[str] | None = None) -> int:
    import torch

    import adaptive
    from nmt_desktop.core.adaptation.settings import Adaptation
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.memory import Entry, Pair, TranslationMemory

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "en-de"))
    parser.add_argument("--data", type=Path, default=ROOT / "data_local" / "opennmt",
                        help="OpenNMT-py's sample data (adaptive.py's parliament-en-de)")
    parser.add_argument("--sentences", type=int, default=150)
    parser.add_argument("--memory-segments", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pairs = adaptive.parliament(args.data, "test")
    sources = [s for s, _ in pairs[: args.sentences]]
    folder = Path(tempfile.mkdtemp(prefix="memory_cold_start_"))
    memory, pair = TranslationMemory(folder / "memory.sqlite"), Pair.of("en", "de")
    memory.add([Entry(s, t, pair, origin="confirmed")
                for s, t in pairs[args.sentences: args.sentences + args.memory_segments]])
    cfg = DecodeConfig()
    static = Translator.load(args.model)
    static.translate_batch(sources[:args.batch_size], cfg, batch_size=args.batch_size)  # warm-up

    def timed(translator: Translator) -> float:
        start = time.process_time()
        translator.translate_batch(sources, cfg, batch_size=args.batch_size)
        return time.process_time() - start

    for r in range(args.rounds):
        base = timed(static)
        adapted = Translator.load(args.model)
        adapted.adaptation = Adaptation(memory, pair)
        if args.profile and r == 0:
            profile = cProfile.Profile()
            profile.enable()
        cold = timed(adapted)
        if args.profile and r == 0:
            profile.disable()
        warm = timed(adapted)
        print(f"round {r + 1}: static {base:.2f} s; with the memory cold {cold:.2f} s ({cold / base:.2f}x), warm "
              f"{warm:.2f} s ({warm / base:.2f}x)", flush=True)
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats("forced_states|mix|lookup|run_compiled_step", 6)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
