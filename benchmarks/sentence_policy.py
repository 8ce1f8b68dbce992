"""Sentence policy measured on dev: translate a multi-sentence line whole, or sentence by sentence?

The bundled models (en-de, en-fr) were trained on Tatoeba's single sentences. For each model this builds
multi-sentence lines from the shared dev sets and translates every line two ways with the same decoding
(`Translator.stream`, one unit at a time, so the two differ only in how the line is cut):

* whole: the line as one unit (the policy before issue 29 for any line that fits the model);
* split: the line cut by `split_sentences` (core/decoding/document.py), each sentence a unit, the
  translations joined with a space (the policy after).

Line sets (the data is read from ../shared/data at run time, never copied):

* tatoeba xK: K consecutive unique dev sentences (each one sentence by `split_sentences`) joined with
  a space, their first references likewise;
* tatoeba real: the dev entries that are themselves two or more sentences ("Don't run. Walk slowly."),
  scored against all their references;
* multi30k x2: two consecutive val captions that end with a full stop, joined (out of domain: captions).

Scores are sacreBLEU BLEU and chrF (core/training/metrics.py). "broken %" is the share of lines whose
translation repeats a word three times in a row or hit the maximum length (the "Re Re Reziesiesie" of the
issue). About a minute greedy on 1 CPU thread, a few with beam 5:

    python benchmarks/sentence_policy.py --lines 500             # greedy, the CLI's and the GUI's default
    python benchmarks/sentence_policy.py --lines 500 --beam 5    # as the model cards' dev scores
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.document import split_sentences  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.locations import bundled_models_dir  # noqa: E402
from nmt_desktop.core.training.metrics import bleu, chrf, group_references  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPEAT_RUN = 3

LineSet = tuple[list[str], list[list[str | None]]]  # lines, reference streams


def tatoeba(pair: str) -> tuple[list[str], list[list[str | None]]]:
    rows = []
    for line in (DATA / "tatoeba" / pair / "dev.tsv").read_text(encoding="utf-8").splitlines():
        src, _, ref = line.partition("\t")
        if src and ref:
            rows.append((src, ref))
    return group_references(rows)


def joined(sentences: list[str], references: list[str], k: int, n: int) -> LineSet:
    """n lines of k consecutive sentences each, and their references joined the same way."""
    lines, refs = [], []
    for start in range(0, min(len(sentences), k * n) - k + 1, k):
        lines.append(" ".join(sentences[start:start + k]))
        refs.append(" ".join(references[start:start + k]))
    return lines, [refs]


def line_sets(pair: str, n: int) -> dict[str, LineSet]:
    sources, streams = tatoeba(pair)
    single = [i for i, s in enumerate(sources) if len(split_sentences(s)) == 1]
    real = [i for i, s in enumerate(sources) if len(split_sentences(s)) > 1]
    out = {f"tatoeba x{k}": joined([sources[i] for i in single], [streams[0][i] for i in single], k, n)
           for k in (2, 3)}
    out["tatoeba real"] = ([sources[i] for i in real], [[s[i] for i in real] for s in streams])
    en = (DATA / "multi30k" / "val.en").read_text(encoding="utf-8").splitlines()
    tgt = (DATA / "multi30k" / f"val.{pair.split('-')[1]}").read_text(encoding="utf-8").splitlines()
    full = [i for i, s in enumerate(en) if s.rstrip().endswith(".") and len(split_sentences(s)) == 1]
    out["multi30k x2"] = joined([en[i] for i in full], [tgt[i] for i in full], 2, n)
    return out


def decode(translator: Translator, text: str, cfg: DecodeConfig) -> tuple[str, bool]:
    """One unit, as the Translate tab decodes it: (translation, finished before the maximum length)."""
    stream = translator.stream(text, cfg)
    for _ in stream:
        pass
    return stream.result.text, stream.result.best.finished


def broken(text: str, finished: bool) -> bool:
    words = text.split()
    return not finished or any(len(set(words[i:i + REPEAT_RUN])) == 1 for i in range(len(words) - REPEAT_RUN + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="en-de,en-fr")
    ap.add_argument("--lines", type=int, default=500, help="lines per built set (default 500)")
    ap.add_argument("--beam", type=int, default=1, help="beam size; 1 = greedy, the CLI's and the GUI's default")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = DecodeConfig(beam_size=args.beam, attention=False, alternatives=0)
    started = time.perf_counter()
    rows = []
    for name in args.models.split(","):
        translator = Translator.load(bundled_models_dir() / name)
        pair = f"{translator.config.src_lang}-{translator.config.tgt_lang}"
        for label, (lines, refs) in line_sets(pair, args.lines).items():
            whole, split, broken_whole, broken_split = [], [], 0, 0
            for line in tqdm(lines, desc=f"{name} {label}", file=sys.stderr, leave=False):
                text, finished = decode(translator, line, cfg)
                whole.append(text)
                broken_whole += broken(text, finished)
                parts = [decode(translator, s, cfg) for s in split_sentences(line)]
                split.append(" ".join(t for t, _ in parts))
                broken_split += any(broken(t, f) for t, f in parts)
            sentences = sum(len(split_sentences(line)) for line in lines) / len(lines)
            rows.append((name, label, len(lines), sentences,
                         bleu(whole, refs).score, bleu(split, refs).score, chrf(whole, refs).score,
                         chrf(split, refs).score, 100 * broken_whole / len(lines), 100 * broken_split / len(lines)))
            print(f"{name} {label} done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    search = "greedy" if args.beam == 1 else f"beam {args.beam}"
    print(f"{search}; BLEU / chrF: sacreBLEU (13a, cased) of whole lines against sentence-split lines")
    print()
    print("| model | line set | lines | sentences per line | BLEU whole | BLEU split | chrF whole | chrF split "
          "| broken % whole | broken % split |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, label, n, per_line, bw, bs, cw, cs, xw, xs in rows:
        print(f"| {name} | {label} | {n} | {per_line:.2f} | {bw:.2f} | {bs:.2f} | {cw:.2f} | {cs:.2f} | {xw:.1f} "
              f"| {xs:.1f} |")
    print()
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
