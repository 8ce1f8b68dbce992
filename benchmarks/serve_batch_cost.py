"""What a batch of whatever arrives costs the server's decoder (issue 43), in one process, no HTTP: CPU seconds
for the same sentences decoded

* offline: `Translator.translate_batch`, batches of 32 sorted by length (serve_load.py's baseline);
* as the server's decoder does with whole batches (`serve --whole-batches`; `DecodeWorker._results`: the
  document pipeline, or the plain-text fast path), in batches of 32, 16 and 8 sentences in arrival order (a
  seeded shuffle): what 32, 16 or 8 closed-loop clients of one sentence each can give it at most;
* with continuous batching (the server's default, `server/continuous_decoding.py`): 32 closed-loop clients in
  arrival order, each sending its next sentence the step its last one ended; sentences tokenized as the server
  does, encoded together by its rule (at least 4, or within 2 steps, or when the search is under half full),
  each answer's text assembled.

So it says how near offline a server can come at a given client count even if its HTTP side cost nothing and
its decoder never waited. Sentences: serve_load.py's (Tatoeba en-de dev, first 300 unique); 1 torch thread.

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

    def continuous(size: int) -> float:
        from nmt_desktop.core.decoding.continuous import ContinuousGreedy
        from nmt_desktop.server import continuous_decoding as rule
        from nmt_desktop.server.plain_text import plain_results, plain_units

        translator = offline.translator
        start = time.process_time()
        search = ContinuousGreedy(translator, rule.PLAIN_CONFIG, size)
        blocks = [text_segment(s).blocks for s in order]
        queue, arrived, held, left, done = list(range(size, len(order))), list(range(size)), 0, {}, {}
        units: dict = {}  # each arrived line's sentences, per block
        waiting: list = []  # (prepared, tags) encoded, waiting for free rows (a line may hold several sentences)
        while arrived or waiting or search.rows:
            for i in arrived:  # (the list grows while it is read: a client answered at once sends its next)
                if i in units:  # tokenized when it arrived
                    continue
                units[i] = [plain_units(translator, b, [], True) for b in blocks[i]]
                if any(u is None for u in units[i]):  # as the server: the document pipeline between two steps
                    worker._results(blocks[i], DecodeKey())
                    if queue:
                        arrived.append(queue.pop(0))
            arrived = [i for i in arrived if all(u is not None for u in units[i])]
            if arrived and (len(arrived) >= rule._ENCODE_TOGETHER or len(search.rows) * 2 < size
                            or held >= rule._ENCODE_WITHIN):
                tags = [(i, j) for i in arrived for j in range(sum(map(len, units[i])))]
                waiting.append((search.prepare([u for i in arrived for block in units[i] for u in block]), tags))
                left.update({i: (units[i], sum(map(len, units[i]))) for i in arrived})
                arrived, held = [], 0
            elif arrived:
                held += 1
            while waiting and search.free:
                prepared, tags = waiting[0]
                part, rest = prepared.split(min(search.free, len(prepared.units)), search.n_heads)
                search.join(part, tags[: len(part.units)])
                waiting[0] = (rest, tags[len(part.units):])
                if not rest.units:
                    waiting.pop(0)
            for (i, j), translation in search.step():
                done.setdefault(i, {})[j] = translation
                units_i, count = left[i]
                if len(done[i]) == count:
                    plain_results(blocks[i], units_i, [done[i][k] for k in range(count)])
                    if queue:
                        arrived.append(queue.pop(0))
        return time.process_time() - start

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
