"""What a batch of whatever arrives costs the server's decoder (issue 43), in one process, no HTTP: CPU seconds
for the same sentences decoded

* offline: `Translator.translate_batch`, batches of 32 sorted by length (serve_load.py's baseline);
* as the server's decoder does with whole batches (`serve --whole-batches`; `DecodeWorker._results`: the
  document pipeline, or the plain-text fast path), in batches of 32, 16 and 8 sentences in arrival order (a
  seeded shuffle): what 32, 16 or 8 closed-loop clients of one sentence each can give it at most;
* with continuous batching (the server's default): the server's own decode thread (`DecodeWorker` running
  `server/continuous_decoding.py`, its encoding thread beside it) with 32 closed-loop clients on an event loop
  in this process, in arrival order, each sending its next sentence when its answer came.

So it says how near offline a server can come at a given client count even if its HTTP side cost nothing.
CPU seconds of the whole process (continuous batching's two threads together). Sentences: serve_load.py's (Tatoeba en-de dev, first 300 unique); 1 torch thread.

    nice -n 0 .venv/bin/python benchmarks/serve_batch_cost.py --rounds 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv: list[str] | None = None) -> int:
    import torch

    import serve_load
    from nmt_desktop.server.batcher import DecodeWorker
    from nmt_desktop.server.decode_requests import DecodeKey
    from nmt_desktop.server.segments import text_segment

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "en-de"))
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sentences = serve_load.read_sentences(serve_load.DATA, args.sentences)
    offline = serve_load.Offline(args.model, 1)
    offline.batched(sentences[:32])  # warm-up
    worker = DecodeWorker(offline.translator, None, "cost", batch_size=32, window_s=0.0)
    order = sentences[:]
    random.Random(1).shuffle(order)

    def continuous(clients: int) -> float:
        """The server's own continuous decode thread (and its encoding thread) with `clients` closed-loop clients
        on an event loop in this process: each sends its next sentence when its answer came."""
        import asyncio

        looped = DecodeWorker(offline.translator, None, "cost", batch_size=32, window_s=0.0, continuous=True)
        queue = list(order)

        async def client() -> None:
            while queue:
                await looped.translate(text_segment(queue.pop(0)).blocks, DecodeKey(), lambda r: r[0].target)

        async def all_clients() -> None:
            await asyncio.gather(*[client() for _ in range(clients)])

        start = time.process_time()
        asyncio.run(all_clients())
        used = time.process_time() - start
        looped.stop()
        return used

    def served(size: int, fast: bool) -> float:
        worker.fast = fast
        start = time.process_time()
        for i in range(0, len(order), size):
            worker._results([b for s in order[i: i + size] for b in text_segment(s).blocks], DecodeKey())
        return time.process_time() - start

    runs: dict[str, list[float]] = {}
    for r in range(args.rounds):
        runs.setdefault("offline sorted 32", []).append(offline.batched(sentences)[1])
        for size in (32, 16, 8):
            for fast in (False, True):
                runs.setdefault(f"served {size}{' fast path' if fast else ''}", []).append(served(size, fast))
        runs.setdefault("continuous 32 clients", []).append(continuous(32))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in runs.items()), flush=True)
    worker.stop()
    base = statistics.median(runs["offline sorted 32"])
    print(f"medians of {args.rounds} rounds, CPU seconds for {len(sentences)} sentences (offline / it):")
    for name, values in runs.items():
        print(f"  {name:>26}: {statistics.median(values):.3f} s  ({base / statistics.median(values):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
