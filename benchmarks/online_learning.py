"""Online learning from each confirmed segment (issue 45): does updating the weights on every confirmed pair reach
+3 chrF on parliamentary text, at what cost on everyday sentences and in time?

The protocol is benchmarks/adaptive.py's (`translate --memory M --learn`): an empty memory; each segment is
translated with the memory and the weights as they stand (greedy, batch 1), then its reference is confirmed into
the memory and the learner takes `steps` optimizer steps on that pair (plus `replay` earlier memory pairs, drawn
at random, in the same batch), with an optional L2-SP pull toward the parent weights (`l2sp` * sum (w - w0)^2).
After an update the backend's prepared weights and the memory's cached forced states are stale: both are made
anew (their cost counts as learning time, the next sentence's re-decoded memory matches as decode time).

`instance` (ModernMT-style) instead tunes on THIS sentence's best memory matches (at least the kNN min score)
before decoding it and restores the parent weights after: a sentence without such a match decodes with the
parent, bit for bit; the tuning counts as decode time there.

Reported per setting: 2nd-half chrF / BLEU against the static model (its output computed once), the Tatoeba dev
chrF with the adapted weights and the filled memory against the parent without one (the cost), and the time per
segment: decode (adaptive; static: the parent, a second copy that never learns, decoding the same segment right
before, so both share the machine's load; the first runs of RESULTS' grid timed the static pass apart, before) and
learning, apart. `--cli` checks the goals through `nmt-desktop translate` itself (`cli_check`). `--counts N...`
scores, from one run, the count gates (the learned weights only for a text with at least N memory matches, else
the parent's weights with kNN), each also with the length rule the shipped gate adds ("and long": at least as many
words as the memory's shortest tenth of segments, `OnlineLearner.wants_learned`); the setting then decodes every
segment both ways, and `--json` keeps every line (benchmarks/online_learning_curve.py reads them).

    nice -n 19 .venv/bin/python benchmarks/online_learning.py --split dev --segments 150 --tatoeba 300 --grid
    nice -n 19 .venv/bin/python benchmarks/online_learning.py --split test --tatoeba 500 --set '{"lr": 1e-4}'
    nice -n 19 .venv/bin/python benchmarks/online_learning.py --split test --segments 0 --tatoeba 500 --cli
    nice -n 19 .venv/bin/python benchmarks/online_learning.py --split test --segments 0 --tatoeba 500 \
        --set '{"replay": 3, "l2sp": 3e-2, "stale_keys": true, "seed": 1}' --counts 1 4 9
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from adaptive import CFG, DATA, REPO, curve, domain_pairs, scores, tatoeba  # noqa: E402
from nmt_desktop.core.adaptation.memory_use import MemorySource  # noqa: E402
from nmt_desktop.core.adaptation.settings import Adaptation  # noqa: E402
from nmt_desktop.core.decoding.backends.choice import choose_backend  # noqa: E402
from nmt_desktop.core.decoding.memory_states import MemoryKeys  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory  # noqa: E402
from nmt_desktop.core.training.metrics import corpus_chrf  # noqa: E402

PAIR = Pair.of("en", "de")  # main() sets the domain's


def tatoeba_train(n: int) -> list[tuple[str, str]]:
    """The bundled model's own training data (the first n pairs), replayed so it does not forget."""
    rows = (DATA / "tatoeba" / str(PAIR) / "train.tsv").read_text(encoding="utf-8").splitlines()[:n]
    return [tuple(r.split("\t")[:2]) for r in rows]  # type: ignore[misc]


@dataclass(frozen=True)
class Learning:
    """One setting. params: "all", "decoder" (decoder layers) or "norms" (layer norms and biases)."""

    lr: float = 1e-4
    steps: int = 1
    optimizer: str = "adam"
    params: str = "all"
    l2sp: float = 0.0
    replay: int = 0
    general: int = 0  # everyday pairs (Tatoeba train) mixed into each step's batch
    smoothing: float = 0.1
    knn: bool = True
    instance: bool = False  # tune on this sentence's matches before decoding it, then restore (ModernMT)
    matches: int = 4  # instance: how many of the sentence's matches
    gate: bool = False  # a sentence without a memory match (>= the kNN min score) decodes with the parent weights
    fresh_everyday: bool = False  # the everyday cost with the memory's states decoded anew (as a later CLI run does)
    seed: int = 0  # of the replay's draws (order "cycle": where the cycle starts)
    order: str = "random"  # "cycle": the earlier pairs replayed in turn, each as often as the others (no draws)
    ema: float = 0.0  # > 0: decode with an exponential moving average of the learned weights (this decay per step)
    decay_after: int = 0  # > 0: after this many confirmations the lr falls as 1/t (lr * decay_after / t)
    stale_keys: bool = False  # keep the memory's forced states of older weights (each decoded on confirming)
    interp: float = 1.0  # < 1: decode w0 + interp * (w - w0), the weights Adam moves pulled back (WiSE-FT)


def chosen(model: torch.nn.Module, which: str) -> list[torch.nn.Parameter]:
    named = list(model.named_parameters())
    if which == "decoder":
        return [p for n, p in named if n.startswith("decoder_layers.")]
    if which == "norms":
        return [p for n, p in named if ".norm." in n or n.endswith(".bias")]
    return [p for _n, p in named]


class Learner:
    """Optimizer steps on confirmed pairs for a Translator's model, in place; the decoding caches made anew."""

    def __init__(self, tr: Translator, learning: Learning):
        self.tr, self.learning = tr, learning
        self.params = chosen(tr.model, learning.params)
        self.parent = [p.detach().clone() for p in self.params]
        opt = torch.optim.Adam if learning.optimizer == "adam" else torch.optim.SGD
        self.optimizer = opt(self.params, lr=learning.lr)
        self.seen: list[tuple[str, str]] = []
        self.rng = random.Random(learning.seed)
        self.everyday = tatoeba_train(20000) if learning.general else []
        self.turn = learning.seed  # order "cycle": the next earlier pair to replay
        self.average = [p.detach().clone() for p in self.params] if learning.ema else []  # ema: decoded
        # ema, interp: what Adam moves (the model decodes their average, or their interpolation with the parent)
        self.live = [p.detach().clone() for p in self.params] if learning.ema or learning.interp < 1 else []

    def replayed(self) -> list[tuple[str, str]]:
        n = min(self.learning.replay, len(self.seen))
        if self.learning.order != "cycle":
            return self.rng.sample(self.seen, n)
        picked = [self.seen[(self.turn + j) % len(self.seen)] for j in range(n)]
        self.turn += n
        return picked

    def batch(self, pairs: list[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        tr, cfg = self.tr, self.tr.config
        src = tr.batch_ids([tr.source_ids(s) for s, _ in pairs])  # (B, S)
        targets = [tr._target_ids(t) + [cfg.eos_id] for _, t in pairs]
        width = max(len(t) for t in targets)
        tgt_in = torch.full((len(pairs), width), cfg.pad_id, dtype=torch.long)  # (B, T)
        tgt_out = torch.full((len(pairs), width), cfg.pad_id, dtype=torch.long)  # (B, T)
        for r, t in enumerate(targets):
            tgt_in[r, : len(t)] = torch.tensor([cfg.decoder_start_id, *t[:-1]])
            tgt_out[r, : len(t)] = torch.tensor(t)
        return src, tgt_in, tgt_out

    def tune(self, pairs: list[tuple[str, str]]) -> None:
        """`steps` steps on pairs (mean token loss + L2-SP), then fresh decoding caches."""
        model, pad = self.tr.model, self.tr.config.pad_id
        src, tgt_in, tgt_out = self.batch(pairs)
        if self.live:  # Adam moves the live weights; the model decodes their average or interpolation
            with torch.no_grad():
                for p, live in zip(self.params, self.live):
                    p.copy_(live)
        for _ in range(self.learning.steps):
            keep = tgt_out != pad  # (B, T)
            logits = model(src, tgt_in, keep)  # (N, V)
            loss = F.cross_entropy(logits.float(), tgt_out[keep], label_smoothing=self.learning.smoothing)
            if self.learning.l2sp:
                loss = loss + self.learning.l2sp * sum(((p - p0) ** 2).sum() for p, p0 in zip(self.params, self.parent))
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
        if self.learning.ema:
            with torch.no_grad():
                for p, live, avg in zip(self.params, self.live, self.average):
                    live.copy_(p)
                    avg.mul_(self.learning.ema).add_(p, alpha=1 - self.learning.ema)
                    p.copy_(avg)
        elif self.live:
            with torch.no_grad():
                for p, live, p0 in zip(self.params, self.live, self.parent):
                    live.copy_(p)
                    p.copy_(p0 + self.learning.interp * (p - p0))
        self.refresh()

    def refresh(self) -> None:
        self.tr.model.eval()
        backend = self.tr.backend = choose_backend(self.tr.model, "auto")
        # prepared now, not in the next decode
        _ = backend.compiled if hasattr(type(backend), "compiled") else getattr(backend, "prepared", None)
        if not self.learning.stale_keys:
            self.tr._memory_keys = MemoryKeys()
        else:  # as Translator.weights_changed: an exact match's states are decoded anew
            self.tr._memory_keys.generation += 1

    def confirmed(self, source: str, reference: str) -> None:
        """Continuous learning: the confirmed pair, with `replay` earlier ones."""
        extra = self.replayed()
        if self.learning.decay_after:
            for group in self.optimizer.param_groups:
                group["lr"] = self.learning.lr * min(1.0, self.learning.decay_after / (len(self.seen) + 1))
        extra += self.rng.sample(self.everyday, self.learning.general) if self.learning.general else []
        self.seen.append((source, reference))
        self.tune([(source, reference), *extra])
        if self.learning.stale_keys and self.tr.adaptation is not None:  # as translate --learn's _confirm does
            self.tr.remember([MemorySource(int(m.entry.id), m.entry.source, m.entry.target, 1.0)
                              for m in self.tr.adaptation.memory.exact(source, PAIR) if m.entry.target == reference])

    def restore(self) -> None:
        with torch.no_grad():
            for p, p0 in zip(self.params, self.parent):
                p.copy_(p0)
            for p0, live in zip(self.parent, self.live):
                live.copy_(p0)
            for p0, avg in zip(self.parent, self.average):
                avg.copy_(p0)
        self.optimizer.state.clear()
        self.refresh()


@dataclass
class Run:
    adaptive: list[str] = field(default_factory=list)
    decode_s: float = 0.0
    learn_s: float = 0.0
    static_s: float = 0.0  # the parent decoding the same segment right before: the ratio under the same load
    counts: list[int] = field(default_factory=list)  # --counts: each segment's memory matches (>= the min score)
    parent_knn: list[str] = field(default_factory=list)  # --counts: the parent's weights with the kNN mixture


def translate(tr: Translator, learner: Learner, adaptation: Adaptation, source: str, parent: Translator) -> str:
    """One sentence as the setting decodes it (instance: tuned on its matches first, restored after; gate: the
    parent's weights when it has no match)."""
    if learner.learning.gate and not adaptation.lookup(source):
        return parent.translate(source, CFG).text
    if not learner.learning.instance:
        return tr.translate(source, CFG).text
    found = adaptation.lookup(source)[: learner.learning.matches]
    if not found:
        return tr.translate(source, CFG).text
    learner.tune([(m.entry.source, m.entry.target) for m in found])
    text = tr.translate(source, CFG).text
    learner.restore()
    return text


def protocol(tr: Translator, pairs: list[tuple[str, str]], learning: Learning, adaptation: Adaptation,
             learner: Learner, parent: Translator, counts: bool = False) -> Run:
    """counts: also each segment's match count and the parent-with-kNN output, so that `gated` can score every
    count gate from one run (the adaptive output is then ungated: the learned weights for every segment)."""
    run = Run()
    tr.adaptation = adaptation if learning.knn else None
    for source, reference in pairs:
        t0 = time.perf_counter()
        parent.translate(source, CFG)
        run.static_s += time.perf_counter() - t0
        if counts:
            run.counts.append(len(adaptation.lookup(source)))
            parent.adaptation = adaptation
            run.parent_knn.append(parent.translate(source, CFG).text)
            parent.adaptation = None
        t0 = time.perf_counter()
        run.adaptive.append(translate(tr, learner, adaptation, source, parent))
        run.decode_s += time.perf_counter() - t0
        source, reference = source.strip(), reference.strip()
        adaptation.memory.add([Entry(source, reference, PAIR, origin="confirmed")])
        t0 = time.perf_counter()
        if not learning.instance and learning.steps:
            learner.confirmed(source, reference)
        run.learn_s += time.perf_counter() - t0
    return run


def tenth(words: list[int]) -> float:
    """The 10th percentile of segment lengths in words."""
    ordered = sorted(words)
    return ordered[int(0.1 * (len(ordered) - 1))] if ordered else 0


def gated(learned: list[str], parent_knn: list[str], counts: list[int], at_least: int) -> list[str]:
    """The output of the count gate: the learned weights where a text has `at_least` memory matches, else the
    parent's weights (with the kNN mixture of the matches it has)."""
    return [a if c >= at_least else b for a, b, c in zip(learned, parent_knn, counts)]


def everyday(tr: Translator, learner: Learner, adaptation: Adaptation, learning: Learning,
             sources: list[str], plain: list[str]) -> list[str]:
    tr.adaptation = adaptation if learning.knn else None
    if learning.fresh_everyday:
        tr._memory_keys = MemoryKeys()
    if learning.instance:
        out = [translate(tr, learner, adaptation, s, tr) for s in sources]
    else:
        out = [t.text for t in tr.translate_batch(sources, CFG)]
    if learning.gate:  # the parent's output (`plain`: the same greedy decode) where no match is found
        out = [o if adaptation.lookup(s) else p for s, o, p in zip(sources, out, plain)]
    tr.adaptation = None
    return out


def evaluate(tr: Translator, pairs: list[tuple[str, str]], static: list[str], learning: Learning,
             general: list[tuple[str, str]], plain: list[str], parent: Translator, counts: list[int] = ()) -> dict:
    refs, half = [t for _, t in pairs], len(pairs) // 2
    learner = Learner(tr, learning)
    with tempfile.TemporaryDirectory() as work, TranslationMemory(Path(work) / "memory.sqlite") as memory:
        adaptation = Adaptation(memory, PAIR)
        run = protocol(tr, pairs, learning, adaptation, learner, parent, counts=bool(counts))
        out = {"setting": asdict(learning), "adaptive_second_half": scores(run.adaptive[half:], refs[half:]),
               "static_second_half": scores(static[half:], refs[half:]),
               "curve_adaptive": curve(run.adaptive, refs), "curve_static": curve(static, refs),
               "decode_s_per_segment": run.decode_s / len(pairs), "learn_s_per_segment": run.learn_s / len(pairs),
               "static_s_per_segment": run.static_s / len(pairs)}
        if general:
            grefs = [t for _, t in general]
            adapted = everyday(tr, learner, adaptation, learning, [s for s, _ in general], plain)
            out["everyday"] = (corpus_chrf(plain, [grefs]), corpus_chrf(adapted, [grefs]))
        if counts:  # every count gate from this one run: (n, 2nd-half chrF, BLEU, Tatoeba chrF, lines it passes)
            gates = []
            sources = [s for s, _ in general]
            every_counts = [len(adaptation.lookup(s)) for s in sources]
            parent.adaptation = adaptation
            every_knn = [t.text for t in parent.translate_batch(sources, CFG)] if sources else []
            parent.adaptation = None
            # the length gate: a text at least as long (in words) as the memory's shortest tenth of segments
            words = [len(s.split()) for s, _ in pairs]
            long_domain = [i < 10 or words[i] >= tenth(words[:i]) for i in range(len(pairs))]
            long_every = [len(s.split()) >= tenth(words) for s in sources]
            for n in counts:
                for length in (False, True):
                    seg = [c if ok or not length else -1 for c, ok in zip(run.counts, long_domain)]
                    every = [c if ok or not length else -1 for c, ok in zip(every_counts, long_every)]
                    chrf, bleu = scores(gated(run.adaptive, run.parent_knn, seg, n)[half:], refs[half:])
                    lines = gated(adapted, every_knn, every, n) if general else []
                    gates.append((f"{n}{' and long' if length else ''}", chrf, bleu,
                                  corpus_chrf(lines, [[t for _, t in general]]) if general else 0.0,
                                  sum(c >= n for c in every)))
            out["gates"] = gates
            out["lines"] = {"adaptive": run.adaptive, "parent_knn": run.parent_knn, "counts": run.counts,
                            "everyday_adapted": adapted, "everyday_knn": every_knn, "everyday_counts": every_counts}
    learner.restore()
    tr.adaptation = None
    return out


def line(r: dict) -> str:
    a, s, static_s = r["adaptive_second_half"], r["static_second_half"], r["static_s_per_segment"]
    set_ = {k: v for k, v in r["setting"].items() if v != getattr(Learning(), k)}
    text = (f"{json.dumps(set_)}: 2nd half chrF {a[0]:.2f} vs {s[0]:.2f} ({a[0] - s[0]:+.2f}), BLEU {a[1]:.2f} vs "
            f"{s[1]:.2f} ({a[1] - s[1]:+.2f}); decode {r['decode_s_per_segment']:.3f} s/seg (static {static_s:.3f},"
            f" x{r['decode_s_per_segment'] / static_s:.2f}), learning {r['learn_s_per_segment']:.3f} s/seg")
    if "everyday" in r:
        p, ad = r["everyday"]
        text += f"; Tatoeba chrF {ad:.2f} vs {p:.2f} ({ad - p:+.2f})"
    for n, chrf, bleu, every, passed in r.get("gates", []):
        text += (f"\n    learned weights at >= {n} matches: 2nd half chrF {chrf - s[0]:+.2f}, BLEU {bleu - s[1]:+.2f}"
                 + (f"; Tatoeba {every - r['everyday'][0]:+.2f} ({passed} lines pass)" if "everyday" in r else ""))
    return text


def L(**kw) -> Learning:  # noqa: N802
    return Learning(**kw)


GRID = [L(lr=0.0, steps=0, knn=True),  # kNN alone (the current default), through this loop
        L(lr=1e-4), L(lr=3e-4), L(lr=3e-5), L(lr=1e-4, steps=3), L(lr=1e-4, knn=False),
        L(lr=1e-4, params="decoder"), L(lr=1e-3, params="norms"), L(lr=1e-4, replay=3),
        L(lr=1e-4, l2sp=1e-2), L(lr=3e-4, l2sp=1e-1), L(lr=1e-2, optimizer="sgd"), L(lr=3e-2, optimizer="sgd"),
        L(lr=1e-4, steps=3, instance=True), L(lr=3e-4, steps=2, instance=True),
        # round 2 (replay of earlier memory pairs pays; all 300 dev segments)
        L(lr=1e-4, replay=3, knn=False), L(lr=1e-4, replay=7), L(lr=1e-4, replay=7, knn=False),
        L(lr=1e-4, replay=3, general=2), L(lr=1e-4, replay=7, general=4), L(lr=1e-4, replay=3, steps=2),
        L(lr=5e-5, replay=7), L(lr=1e-4, replay=3, l2sp=1e-2), L(lr=1e-4, replay=3, params="decoder"),
        # round 3 (the L2-SP pull keeps everyday text; kNN's memory states re-decoded after each update double the
        # decode time: without kNN, or with the states of the weights they were confirmed under)
        L(lr=1e-4, replay=3, l2sp=1e-2, knn=False), L(lr=1e-4, replay=3, l2sp=1e-2, stale_keys=True),
        L(lr=1e-4, replay=7, l2sp=1e-2, knn=False), L(lr=1e-4, replay=3, l2sp=3e-2, knn=False),
        L(lr=5e-5, replay=7, knn=False), L(lr=5e-5, replay=7, stale_keys=True),
        L(lr=1e-4, replay=3, l2sp=1e-2, general=2, knn=False)]


def cli(command: list[str], stdin: str) -> tuple[list[str], float]:
    """`nmt-desktop translate ...` in a child process, as a user runs it: its output lines and wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", "translate", *command], input=stdin, text=True,
                          capture_output=True, cwd=REPO, check=True)
    return proc.stdout.splitlines(), time.perf_counter() - t0


def cli_check(args: argparse.Namespace, pairs: list[tuple[str, str]], general: list[tuple[str, str]]) -> None:
    """The goals through the command line (`translate --memory M --learn --learn-weights`, the defaults): 2nd-half
    chrF over `translate` alone; Tatoeba dev with the filled memory (and what it learned) against without; the
    time of `translate --memory M` of the domain's sources (the filled memory) against without."""
    model = ["-m", str(REPO / "models" / str(PAIR)), "--threads", str(args.threads)]
    refs, half = [t for _, t in pairs], len(pairs) // 2
    sources = "".join(s + "\n" for s, _ in pairs)
    with tempfile.TemporaryDirectory() as work:
        memory = str(Path(work) / "memory.sqlite")
        static, static_s = cli(model, sources)
        tsv = "".join(f"{s}\t{t}\n" for s, t in pairs)
        adaptive, learn_s = cli([*model, "--memory", memory, "--learn", "--learn-weights"], tsv)
        a, b = scores(adaptive[half:], refs[half:]), scores(static[half:], refs[half:])
        print(f"CLI {args.domain} {args.split} {len(pairs)}: 2nd half chrF {a[0]:.2f} vs {b[0]:.2f} "
              f"({a[0] - b[0]:+.2f}), BLEU {a[1]:.2f} vs {b[1]:.2f} ({a[1] - b[1]:+.2f}); --learn {learn_s:.1f} s, "
              f"translate {static_s:.1f} s",
              flush=True)
        if general:
            text, grefs = "".join(s + "\n" for s, _ in general), [t for _, t in general]
            plain, plain_s = cli(model, text)
            filled, filled_s = cli([*model, "--memory", memory], text)
            p, f = corpus_chrf(plain, [grefs]), corpus_chrf(filled, [grefs])
            print(f"CLI Tatoeba dev {len(general)}: chrF {f:.2f} with the filled memory vs {p:.2f} ({f - p:+.2f}); "
                  f"{filled_s:.1f} s vs {plain_s:.1f} s", flush=True)
        ratios = []
        for _ in range(max(1, args.time_runs)):  # alternated, each ratio from neighbouring runs (a noisy machine)
            with_memory, with_s = cli([*model, "--memory", memory], sources)
            again, without_s = cli(model, sources)
            ratios.append(with_s / without_s)
            print(f"CLI decode time of the {len(pairs)} sources, filled memory / none: {with_s:.1f} s / "
                  f"{without_s:.1f} s = x{ratios[-1]:.2f}", flush=True)
        if len(ratios) > 1:
            print(f"CLI decode time ratio, median of {len(ratios)}: x{statistics.median(ratios):.2f}", flush=True)
        if args.keep:  # the filled memory and what was learned beside it, for profiling
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in Path(work).iterdir():
                (shutil.copytree if path.is_dir() else shutil.copy2)(path, args.keep / path.name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--domain", default="parliament-en-de", help="a domain of benchmarks/adaptive.py")
    p.add_argument("--split", choices=("dev", "test", "holdout"), default="dev")
    p.add_argument("--segments", type=int, default=150, help="at most this many segments (0: all)")
    p.add_argument("--tatoeba", type=int, default=300, help="Tatoeba dev sentences for the everyday cost (0: none)")
    p.add_argument("--parliament", type=Path, default=REPO / "data_local" / "opennmt")
    p.add_argument("--grid", action="store_true", help="every setting of GRID")
    p.add_argument("--only", type=int, nargs="*", help="with --grid: only these indices of GRID")
    p.add_argument("--set", action="append", default=[], help='a setting as JSON, e.g. \'{"lr": 1e-4}\'')
    p.add_argument("--json", type=Path, help="append the results here (JSON lines)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--time-runs", type=int, default=1, help="with --cli: decode-time ratios measured (median shown)")
    p.add_argument("--keep", type=Path, help="with --cli: copy the filled memory (and what was learned) here")
    p.add_argument("--counts", type=int, nargs="*", default=[],
                   help="score these count gates too (learned weights only for a text with at least N memory "
                        "matches); run the setting without its own gate")
    p.add_argument("--cli", action="store_true", help="check the goals through `nmt-desktop translate` (cli_check)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    global PAIR
    source, target = args.domain.split("-")[-2:]
    PAIR = Pair.of(source, target)
    tr = Translator.load(REPO / "models" / f"{source}-{target}")
    parent = Translator.load(REPO / "models" / f"{source}-{target}")  # never learns: the static timings
    pairs = domain_pairs(args.domain, args.split, args)
    pairs = pairs[: args.segments] if args.segments else pairs
    settings = [GRID[i] for i in (args.only if args.only else range(len(GRID)))] if args.grid else []
    settings += [Learning(**json.loads(s)) for s in args.set]
    general = tatoeba(f"{source}-{target}", args.tatoeba) if args.tatoeba else []
    if args.cli:
        cli_check(args, pairs, general)
        return 0
    t0 = time.perf_counter()
    static = [tr.translate(s, CFG).text for s, _ in pairs]
    static_s = (time.perf_counter() - t0) / len(pairs)
    plain = [t.text for t in tr.translate_batch([s for s, _ in general], CFG)] if general else []
    print(f"{args.domain} {args.split} {len(pairs)} segments; static decode {static_s:.3f} s/seg", flush=True)
    for learning in settings:
        result = evaluate(tr, pairs, static, learning, general, plain, parent, args.counts)
        print(line(result), flush=True)
        if args.json:
            with args.json.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"domain": args.domain, "split": args.split, "segments": len(pairs),
                                    "static_s": static_s, **result}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
