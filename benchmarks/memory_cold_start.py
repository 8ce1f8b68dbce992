"""What decoding with a memory costs when the memory was filled before this process started (issue 45's time
goal as a user meets it: `translate --memory M` on a file, a fresh process), against decoding without one.

`adaptive.py` measures the `--learn` protocol, where each confirmed segment's decoder states are made when it is
confirmed (`Translator.remember`) and kept in the process, so a later sentence pays only the lookup and the
mixture. Here the memory holds `--memory-segments` pairs of the domain added beforehand (as `tm import` or an
earlier `--learn` run leaves it), and a fresh `Translator` translates `--sentences` other sentences of the domain
in batches of `--batch-size` (as the CLI does): cold (nothing kept beside the memory: every matched segment
force-decoded at its first use), warm (the same translator again: the states in the process) and fresh with the
states kept (a new translator reading what the cold run kept beside the memory, core/adaptation/kept_states.py).
CPU seconds, 1 torch thread, the static model timed in the same round; `--profile` adds cProfile's split of the cold run (forced states, mixture, lookups).

`--cli` times the command itself instead, as the goal is checked: `nmt-desktop translate -m MODEL --memory M` on
the sentences' file (a fresh process, the CLI's batches of 16) against `nmt-desktop translate -m MODEL` on it, in
the same round: without, then with nothing kept beside the memory, then again with what that run kept; each
child's user + system CPU seconds (getrusage of the children) and wall seconds, the process start and model load
included (both commands pay them).

    nice -n 0 .venv/bin/python benchmarks/memory_cold_start.py --rounds 2
    nice -n 0 .venv/bin/python benchmarks/memory_cold_start.py --cli --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import shutil
import subprocess
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
    parser.add_argument("--cli", action="store_true", help="time `nmt-desktop translate` with and without --memory")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pairs = adaptive.parliament(args.data, "test")
    sources = [s for s, _ in pairs[: args.sentences]]
    folder = Path(tempfile.mkdtemp(prefix="memory_cold_start_"))
    memory, pair = TranslationMemory(folder / "memory.sqlite"), Pair.of("en", "de")
    memory.add([Entry(s, t, pair, origin="confirmed")
                for s, t in pairs[args.sentences: args.sentences + args.memory_segments]])
    if args.cli:
        return cli_rounds(args, sources, memory.path, folder)
    cfg = DecodeConfig()
    static = Translator.load(args.model)
    static.translate_batch(sources[:args.batch_size], cfg, batch_size=args.batch_size)  # warm-up

    def timed(translator: Translator) -> float:
        start = time.process_time()
        translator.translate_batch(sources, cfg, batch_size=args.batch_size)
        return time.process_time() - start

    def fresh() -> Translator:
        translator = Translator.load(args.model)
        translator.adaptation = Adaptation(memory, pair)
        return translator

    for r in range(args.rounds):
        base = timed(static)
        forget_kept(memory.path)
        adapted = fresh()
        if args.profile and r == 0:
            profile = cProfile.Profile()
            profile.enable()
        cold = timed(adapted)
        if args.profile and r == 0:
            profile.disable()
        warm = timed(adapted)
        kept = timed(fresh())
        print(f"round {r + 1}: static {base:.2f} s; with the memory cold {cold:.2f} s ({cold / base:.2f}x), warm "
              f"{warm:.2f} s ({warm / base:.2f}x), fresh with the states kept {kept:.2f} s ({kept / base:.2f}x)",
              flush=True)
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats("forced_states|mix|lookup|run_compiled_step", 6)
    return 0


def forget_kept(memory: Path) -> None:
    """Delete the forced states an earlier run kept beside the memory (core/adaptation/kept_states.py)."""
    for folder in memory.parent.glob(f"{memory.name}.states-*"):
        shutil.rmtree(folder)


def cli_rounds(args: argparse.Namespace, sources: list[str], memory: Path, folder: Path) -> int:
    """`translate` with the memory against without, each a fresh process on the same file, per round."""
    text = folder / "input.en"
    text.write_text("".join(s.replace("\n", " ") + "\n" for s in sources), encoding="utf-8")
    command = [str(Path(sys.executable).with_name("nmt-desktop")), "translate", "-m", args.model,
               "--batch-size", str(args.batch_size)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def timed(extra: list[str]) -> tuple[float, float, str]:
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        with open(text, "rb") as stdin:
            child = subprocess.run(command + extra, stdin=stdin, capture_output=True, env=env)
        wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
        if child.returncode:
            raise SystemExit(f"{' '.join(command + extra)} failed: {child.stderr.decode()[-500:]}")
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return cpu, wall, child.stdout.decode()

    for r in range(args.rounds):
        base_cpu, base_wall, base_out = timed([])
        forget_kept(memory)
        first_cpu, first_wall, first_out = timed(["--memory", str(memory)])
        later_cpu, later_wall, later_out = timed(["--memory", str(memory)])
        differ = sum(a != b for a, b in zip(base_out.splitlines(), first_out.splitlines()))
        print(f"round {r + 1}: translate {base_cpu:.2f} s CPU ({base_wall:.2f} s wall); --memory, nothing kept "
              f"{first_cpu:.2f} s ({first_wall:.2f} s wall): {first_cpu / base_cpu:.2f}x CPU, "
              f"{first_wall / base_wall:.2f}x wall; --memory again, the states kept {later_cpu:.2f} s "
              f"({later_wall:.2f} s wall): {later_cpu / base_cpu:.2f}x CPU, {later_wall / base_wall:.2f}x wall; "
              f"{differ} of {len(sources)} lines differ from the static model's, "
              f"{sum(a != b for a, b in zip(first_out.splitlines(), later_out.splitlines()))} between the two "
              f"--memory runs", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
