"""Decode speed against Hugging Face transformers and CTranslate2 on identical weights (issue 8).

For each config ("small": d 256, 4 heads, 3+3 layers, ffn 1024, vocab 8000; "base": d 512, 8 heads,
6+6 layers, ffn 2048, vocab 32000; "opus-mt": the architecture of Helsinki-NLP/opus-mt-en-de and
most OPUS-MT models, d 512, 8 heads, 6+6 layers, ffn 2048, shared vocab 58101, tied output, final
logits bias, swish, scale_embedding, max_position_embeddings 512) a random-weight `MarianMTModel`
is built from a `MarianConfig` with a SentencePiece vocabulary trained on a few hundred generated
lines (no download; vocab.json is padded with filler tokens up to the config's size), saved as a
Hugging Face folder in a temporary directory, then

* imported with nmt-desktop's `import_marian` (what `nmt-desktop import-marian` does), and
* converted with CTranslate2's `TransformersConverter` to float32 and int8,

so every engine runs the same weights. Engines:

| engine | what runs |
|---|---|
| ours attn on / off | `Translator` (search.py) with cross-attention capture on / off |
| ours int8 | `Translator(..., int8=True)` (core/decoding/int8.py), attention capture on |
| hf sdpa / hf eager | `MarianMTModel.generate` with attn_implementation "sdpa" / "eager" (KV cache on) |
| ct2 float32 / ct2 int8 | `ctranslate2.Translator(compute_type=...)`, `translate_batch` |

Measurements (all engines on the same token ids; the lengths are forced so every engine does the
same work: `</s>` is forbidden before the last step and generation stops after exactly N tokens):

* latency: batch 1, a 20-token source (`</s>` included), exactly 40 generated tokens, greedy and
  beam 4; ms per generated token = wall time of the whole call (encoding included) / 40; median
  (and min) of `--repeats` calls, engines interleaved round-robin so load hits them alike;
* throughput: `--sentences` sources of 6 to 30 tokens, sorted by length and cut into batches of
  `--batch-size` (the same batches for every engine), exactly 30 target tokens each, greedy;
  sentences per second.

`--storage` also imports the folder with `import_marian(..., int8=True)` (int8 weight matrices
with per-row scales, model_folder.py) and reports the folder sizes (float32 vs int8 storage), the
load times, and how often the int8-stored model (decoded in float32 after dequantisation) gives
the float32 model's tokens: greedy and beam 4, natural stopping, up to 40 tokens, on
`--storage-sentences` generated sources. Random weights make this a pessimistic check (the
top logits of an untrained model are close together, so small weight changes flip more argmaxes
than in a trained model).

Each row is run at every `--threads` count (torch.set_num_threads for ours and transformers,
intra_threads for CTranslate2). Ours decodes with `alternatives=0` (no top-5 lists), as the CLI
does; peers compute none either. The header reports how many CPUs other processes kept busy.

    .venv/bin/python benchmarks/vs_peers.py --configs small,base --threads 1,2
    .venv/bin/python benchmarks/vs_peers.py --quick --configs small --threads 1 --json
    .venv/bin/python benchmarks/vs_peers.py --configs small,base --threads 2 --no-ct2   # ours vs transformers only
    .venv/bin/python benchmarks/vs_peers.py --configs small,base --threads 1,2 --separate  # CTranslate2 in its own process
    .venv/bin/python benchmarks/vs_peers.py --configs opus-mt --threads 1 --separate --storage  # OPUS-MT size

With several threads, CTranslate2 loaded in the same process slows torch's threaded runs (ours and
transformers; probably its OpenMP runtime beside torch's): `--separate` runs ours + transformers in
one child process and CTranslate2 in another (each engine then alone in its process, at the cost of
not interleaving torch engines with CTranslate2's) and merges their rows.

Needs the `bench` extra (transformers, sentencepiece, ctranslate2): pip install -e .[bench].
Without ctranslate2 its rows are skipped with the reason printed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_speed import LoadMeter, machine_info  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.formats.marian import import_marian  # noqa: E402
from nmt_desktop.core.formats.model_folder import model_size_bytes  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.decoding.results import Unit

CONFIGS = {
    "small": dict(d_model=256, heads=4, layers=3, ffn=1024, vocab=8000),
    "base": dict(d_model=512, heads=8, layers=6, ffn=2048, vocab=32000),
    # Helsinki-NLP/opus-mt-en-de's config.json: shared vocab 58101 (<pad> = 58100, last), tied output
    "opus-mt": dict(d_model=512, heads=8, layers=6, ffn=2048, vocab=58101, max_positions=512),
}
WORDS = ("the cat dog bird sat ran on under mat house tree big small red green blue hello world how are you "
         "quick brown fox jumps over lazy numbers and station train storm sunday yesterday old man lives next "
         "told that will not run because of").split()
SRC_LEN, TGT_LEN, BATCH_TGT_LEN = 20, 40, 30


# -- the shared Hugging Face folder ---------------------------------------------------------------


def _train_spm(folder: Path, name: str, seed: int) -> Path:
    import sentencepiece as spm

    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))).capitalize() + rng.choice(".!?,")
             for _ in range(400)]
    corpus = folder / f"{name}.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / name), model_type="unigram",
                                   vocab_size=120, character_coverage=1.0, num_threads=1, minloglevel=2)
    return folder / f"{name}.model"


def make_hf_folder(folder: Path, name: str, dropout: float = 0.0) -> Path:
    """A random-weight MarianMTModel of config `name` with a real (small) SentencePiece vocabulary.

    vocab.json holds </s>, <unk>, the pieces of both .spm files, then filler tokens up to the
    config's vocabulary size (so the output projection has its real size) and <pad> last.
    """
    import sentencepiece as spm
    from transformers import MarianConfig, MarianMTModel

    c = CONFIGS[name]
    folder.mkdir(parents=True)
    models = [_train_spm(folder.parent, f"{name}-src", 1), _train_spm(folder.parent, f"{name}-tgt", 2)]
    for model, target in zip(models, ("source.spm", "target.spm")):
        (folder / target).write_bytes(model.read_bytes())
    vocab = {"</s>": 0, "<unk>": 1}
    for model in models:
        sp = spm.SentencePieceProcessor(model_file=str(model))
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    while len(vocab) < c["vocab"] - 1:
        vocab[f"<filler_{len(vocab)}>"] = len(vocab)
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    pad = vocab["<pad>"]
    cfg = MarianConfig(vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=c["d_model"],
                       encoder_layers=c["layers"], decoder_layers=c["layers"], encoder_attention_heads=c["heads"],
                       decoder_attention_heads=c["heads"], encoder_ffn_dim=c["ffn"], decoder_ffn_dim=c["ffn"],
                       max_position_embeddings=c.get("max_positions", 256), pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad,
                       forced_eos_token_id=0, scale_embedding=True, activation_function="swish", dropout=dropout,
                       attention_dropout=0.0, activation_dropout=0.0, share_encoder_decoder_embeddings=True)
    torch.manual_seed(0)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[0, pad] = -30.0  # <pad> is never generated (real generation configs ban it)
    model.save_pretrained(folder)
    return folder


# -- engines --------------------------------------------------------------------------------------


@dataclass
class Engine:
    name: str
    # (list of source id lists, beam, exact target length) -> list of generated id lists
    run: Callable[[list[list[int]], int, int], list[list[int]]]
    set_threads: Callable[[int], None]


def _torch_threads(n: int) -> None:
    torch.set_num_threads(n)


def ours(translator: Translator, attention: bool, name: str) -> Engine:
    def run(sources: list[list[int]], beam: int, n: int) -> list[list[int]]:
        cfg = DecodeConfig(beam_size=beam, nbest=1, length_penalty=1.0, min_length=n, max_len_a=0.0, max_len_b=n,
                           attention=attention, alternatives=0)
        units = [Unit(i, "", ids, []) for i, ids in enumerate(sources)]
        return [t.target_ids for t in translator.translate_units(units, cfg)]

    return Engine(name, run, _torch_threads)


def transformers_engine(hf_dir: Path, attn: str) -> Engine:
    from transformers import MarianMTModel

    model = MarianMTModel.from_pretrained(hf_dir, attn_implementation=attn).eval()
    pad = model.config.pad_token_id

    def run(sources: list[list[int]], beam: int, n: int) -> list[list[int]]:
        width = max(len(s) for s in sources)
        ids = torch.full((len(sources), width), pad, dtype=torch.long)
        for i, s in enumerate(sources):
            ids[i, : len(s)] = torch.tensor(s)
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=ids != pad, num_beams=beam, do_sample=False,
                                 min_new_tokens=n, max_new_tokens=n, early_stopping=True, length_penalty=1.0,
                                 forced_eos_token_id=None)
        return [row[1:].tolist() for row in out]

    return Engine(f"hf {attn}", run, _torch_threads)


def ct2_engines(hf_dir: Path, work: Path, id_to_token: list[str]) -> tuple[list[Engine], str | None]:
    """CTranslate2 float32 and int8 engines, or ([], reason) when ctranslate2 is missing or fails."""
    try:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
    except ImportError as exc:
        return [], f"ctranslate2 is not installed ({exc}); pip install ctranslate2"
    token_to_id = {t: i for i, t in enumerate(id_to_token)}
    engines = []
    for compute in ("float32", "int8"):
        out = work / f"ct2-{compute}"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                TransformersConverter(str(hf_dir)).convert(str(out), quantization=None if compute == "float32"
                                                           else compute, force=True)
        except Exception as exc:  # noqa: BLE001 - report any converter failure as a skip reason
            return [], f"ct2-transformers-converter failed: {type(exc).__name__}: {exc}"
        holder: dict[str, object] = {}

        def set_threads(n: int, out: Path = out, compute: str = compute, holder: dict = holder) -> None:
            if holder.get("threads") != n:
                holder["threads"] = n
                holder["tr"] = ctranslate2.Translator(str(out), device="cpu", compute_type=compute,
                                                      intra_threads=n, inter_threads=1)

        def run(sources: list[list[int]], beam: int, n: int, holder: dict = holder) -> list[list[int]]:
            tokens = [[id_to_token[i] for i in s] for s in sources]
            res = holder["tr"].translate_batch(tokens, beam_size=beam, num_hypotheses=1, min_decoding_length=n,
                                               max_decoding_length=n, length_penalty=1.0,
                                               max_batch_size=len(tokens))
            return [[token_to_id[t] for t in r.hypotheses[0]] for r in res]

        engines.append(Engine(f"ct2 {compute}", run, set_threads))
    return engines, None


# -- measuring ------------------------------------------------------------------------------------


def latency(engines: list[Engine], source: list[int], beam: int, repeats: int, warmup: int) -> dict[str, dict]:
    """ms per generated token (batch 1, exactly TGT_LEN tokens) of every engine, interleaved."""
    times: dict[str, list[float]] = {e.name: [] for e in engines}
    cpu: dict[str, list[float]] = {e.name: [] for e in engines}
    outputs: dict[str, list[int]] = {}
    for e in engines:
        for _ in range(warmup):
            outputs[e.name] = e.run([source], beam, TGT_LEN)[0]
        if len(outputs.get(e.name, [])) != TGT_LEN and warmup:
            raise RuntimeError(f"{e.name} generated {len(outputs[e.name])} tokens, expected {TGT_LEN}")
    for _ in range(repeats):
        for e in engines:
            t0, c0 = time.perf_counter(), time.process_time()
            e.run([source], beam, TGT_LEN)
            times[e.name].append(1000 * (time.perf_counter() - t0) / TGT_LEN)
            cpu[e.name].append(1000 * (time.process_time() - c0) / TGT_LEN)
    return {name: {"ms_per_token": round(statistics.median(ts), 3), "ms_per_token_min": round(min(ts), 3),
                   "cpu_ms_per_token": round(statistics.median(cpu[name]), 3),
                   "tokens": len(outputs.get(name, [])) or TGT_LEN, "first_tokens": outputs.get(name, [])[:8]}
            for name, ts in times.items()}


def throughput(engines: list[Engine], sources: list[list[int]], batch_size: int, repeats: int) -> dict[str, dict]:
    """Sentences per second translating `sources` in length-sorted batches (greedy, BATCH_TGT_LEN tokens)."""
    ordered = sorted(sources, key=len)
    batches = [ordered[i: i + batch_size] for i in range(0, len(ordered), batch_size)]
    times: dict[str, list[float]] = {e.name: [] for e in engines}
    for e in engines:
        e.run(batches[0][:2], 1, BATCH_TGT_LEN)  # warm-up
    for _ in range(repeats):
        for e in engines:
            t0 = time.perf_counter()
            for b in batches:
                out = e.run(b, 1, BATCH_TGT_LEN)
            times[e.name].append(time.perf_counter() - t0)
            if any(len(o) != BATCH_TGT_LEN for o in out):
                raise RuntimeError(f"{e.name}: not every output has {BATCH_TGT_LEN} tokens")
    return {name: {"sentences_per_s": round(len(sources) / statistics.median(ts), 2),
                   "sentences_per_s_best": round(len(sources) / min(ts), 2)} for name, ts in times.items()}


def storage(hf_dir: Path, ours_dir: Path, work: Path, name: str, tok, n_sentences: int) -> dict:
    """Folder sizes of float32 and int8 storage, load times, and token agreement int8 vs float32."""
    t0 = time.perf_counter()
    int8_dir = import_marian(hf_dir, work / f"{name}-ours-int8", int8=True)
    import_s = time.perf_counter() - t0
    loaded = {}
    for kind, folder in (("float32", ours_dir), ("int8", int8_dir)):
        t0 = time.perf_counter()
        loaded[kind] = Translator.load(folder)
        loaded[f"{kind}_load_s"] = round(time.perf_counter() - t0, 2)
    rng = random.Random(11)
    sources = []
    for _ in range(n_sentences):
        n = rng.randint(6, 30)
        sources.append(tok(" ".join(rng.choice(WORDS) for _ in range(n)))["input_ids"][: n - 1] + [0])
    result = {"config": name, "float32_bytes": model_size_bytes(ours_dir), "int8_bytes": model_size_bytes(int8_dir),
              "float32_weights_bytes": sum(p.stat().st_size for p in ours_dir.glob("*.safetensors")),
              "int8_weights_bytes": sum(p.stat().st_size for p in int8_dir.glob("*.safetensors")),
              "int8_import_s": round(import_s, 2), "float32_load_s": loaded["float32_load_s"],
              "int8_load_s": loaded["int8_load_s"], "sentences": len(sources)}
    result["size_ratio"] = round(result["int8_bytes"] / result["float32_bytes"], 4)
    f32 = loaded["float32"].model.state_dict()
    i8 = loaded["int8"].model.state_dict()
    result["max_rel_weight_error"] = round(max(float((i8[k] - v).abs().max() / max(float(v.abs().max()), 1e-12))
                                               for k, v in f32.items()), 5)
    for beam in (1, 4):
        cfg = DecodeConfig(beam_size=beam, nbest=1, length_penalty=1.0, max_len_a=0.0, max_len_b=TGT_LEN,
                           attention=False, alternatives=0)
        units = [(i, "", ids) for i, ids in enumerate(sources)]
        outs = {kind: [t.target_ids for t in loaded[kind]._decode_batch(units, cfg, None)]
                for kind in ("float32", "int8")}
        same = sum(a == b for a, b in zip(outs["float32"], outs["int8"]))
        agree = sum(sum(x == y for x, y in zip(a, b)) for a, b in zip(outs["float32"], outs["int8"]))
        total = sum(max(len(a), len(b)) for a, b in zip(outs["float32"], outs["int8"]))
        prefix = []
        for a, b in zip(outs["float32"], outs["int8"]):
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            prefix.append(k / max(len(a), len(b), 1))
        result[f"beam{beam}"] = {"identical_sentences": same, "token_agreement": round(agree / max(total, 1), 4),
                                 "common_prefix": round(statistics.mean(prefix), 4),
                                 "mean_len": round(statistics.mean(len(a) for a in outs["float32"]), 1)}
        if beam == 1:  # teacher-forced on the float32 output: the next-token argmax at every position
            start = loaded["float32"].model.config.decoder_start_id
            hits = count = 0
            with torch.inference_mode():
                for src, out in zip(sources, outs["float32"]):
                    s_ids, t_ids = torch.tensor([src]), torch.tensor([[start] + out[:-1]])
                    a = loaded["float32"].model(s_ids, t_ids).argmax(-1)
                    b = loaded["int8"].model(s_ids, t_ids).argmax(-1)
                    hits += int((a == b).sum())
                    count += a.numel()
            result["teacher_forced_argmax_agreement"] = round(hits / max(count, 1), 4)
    return result


def run_config(name: str, args: argparse.Namespace, work: Path, skipped: dict[str, str],
               stored: list[dict] | None = None) -> list[dict]:
    from transformers import MarianTokenizer

    hf_dir = make_hf_folder(work / f"{name}-hf", name)
    ours_dir = import_marian(hf_dir, work / f"{name}-ours")
    tok = MarianTokenizer(vocab=str(hf_dir / "vocab.json"), source_spm=str(hf_dir / "source.spm"),
                          target_spm=str(hf_dir / "target.spm"))
    vocab = json.loads((hf_dir / "vocab.json").read_text(encoding="utf-8"))
    id_to_token = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    engines = []
    if not args.no_ours:
        fp32 = Translator.load(ours_dir)
        engines += [ours(fp32, True, "ours attn on"), ours(fp32, False, "ours attn off"),
                    ours(Translator.load(ours_dir, int8=True), True, "ours int8")]
    if not args.no_hf:
        engines += [transformers_engine(hf_dir, "sdpa"), transformers_engine(hf_dir, "eager")]
    if not args.no_ct2:
        ct2, reason = ct2_engines(hf_dir, work / name, id_to_token)
        if reason:
            skipped["ct2"] = reason
        engines += ct2
    rng = random.Random(7)
    text = " ".join(rng.choice(WORDS) for _ in range(40))
    ids = tok(text)["input_ids"]
    source = ids[: SRC_LEN - 1] + [0]  # exactly SRC_LEN tokens, </s> last
    sources = []
    for _ in range(args.sentences):
        n = rng.randint(6, 30)
        pieces = tok(" ".join(rng.choice(WORDS) for _ in range(n)))["input_ids"]
        sources.append(pieces[: n - 1] + [0])
    if stored is not None and args.storage and not args.no_ours:
        torch.set_num_threads(args.threads[0])
        stored.append(storage(hf_dir, ours_dir, work, name, tok, args.storage_sentences))
    rows = []
    for threads in args.threads:
        for e in engines:
            e.set_threads(threads)
        for beam in (1, 4):
            res = latency(engines, source, beam, args.repeats, args.warmup)
            for engine, r in res.items():
                rows.append({"config": name, "threads": threads, "measure": "latency", "beam": beam,
                             "engine": engine, **r})
        res = throughput(engines, sources, args.batch_size, max(1, args.repeats // 3))
        for engine, r in res.items():
            rows.append({"config": name, "threads": threads, "measure": "throughput", "beam": 1,
                         "batch_size": args.batch_size, "sentences": len(sources), "engine": engine, **r})
    return rows


RATIOS = [("ours attn on", "ct2 float32"), ("ours attn on", "hf sdpa"), ("ours int8", "ct2 int8")]


def ratios(rows: list[dict]) -> list[dict]:
    """ours / peer per (config, threads, measure, beam): time ratios for latency, rate ratios inverted."""
    out = []
    keyed = {(r["config"], r["threads"], r["measure"], r["beam"], r["engine"]): r for r in rows}
    for (cfg, th, measure, beam, engine), r in keyed.items():
        for a, b in RATIOS:
            if engine != a or (cfg, th, measure, beam, b) not in keyed:
                continue
            peer = keyed[(cfg, th, measure, beam, b)]
            row = {"config": cfg, "threads": th, "measure": measure, "beam": beam, "ratio": f"{a} / {b}"}
            if measure == "latency":
                row["value"] = round(r["ms_per_token"] / peer["ms_per_token"], 3)
                row["cpu_value"] = round(r["cpu_ms_per_token"] / peer["cpu_ms_per_token"], 3)
            else:
                row["value"] = round(peer["sentences_per_s"] / r["sentences_per_s"], 3)
            out.append(row)
    return out


def markdown(result: dict) -> str:
    m = result["machine"]
    lines = [f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs), torch {m['torch']}, "
             f"transformers {result['versions'].get('transformers')}, ctranslate2 {result['versions'].get('ctranslate2')}, "
             f"{m['date']}",
             f"Other processes kept {m['other_load_cpus']} CPUs busy during the run"
             + (" (numbers inflated)." if (m["other_load_cpus"] or 0) > 0.2 else ".")]
    for reason in result["skipped"].values():
        lines.append(f"Skipped: {reason}")
    lines += ["", f"Latency: batch 1, {SRC_LEN} source tokens, exactly {TGT_LEN} generated, ms per token "
              "(wall median, wall min, process CPU time median: less disturbed by other processes, but summed "
              "over threads).", "", "| config | threads | beam | engine | ms/token | min | CPU ms/token |",
              "|---|---:|---:|---|---:|---:|---:|"]
    for r in result["rows"]:
        if r["measure"] == "latency":
            lines.append(f"| {r['config']} | {r['threads']} | {r['beam']} | {r['engine']} | {r['ms_per_token']:.2f} | "
                         f"{r['ms_per_token_min']:.2f} | {r['cpu_ms_per_token']:.2f} |")
    for cfg in result["settings"]["configs"]:
        first = {r["engine"]: r["first_tokens"] for r in result["rows"]
                 if r["config"] == cfg and r["measure"] == "latency" and r["beam"] == 1}
        same = sorted(e for e, t in first.items() if t == first.get("ours attn on"))
        lines.append(f"\n{cfg}: greedy output (first 8 ids) identical to ours attn on for: {', '.join(same)}")
    lines += ["", f"Throughput: sentences of 6-30 tokens, batches of {result['settings']['batch_size']}, greedy, "
              f"exactly {BATCH_TGT_LEN} target tokens each.", "",
              "| config | threads | engine | sentences/s | best |", "|---|---:|---|---:|---:|"]
    for r in result["rows"]:
        if r["measure"] == "throughput":
            lines.append(f"| {r['config']} | {r['threads']} | {r['engine']} | {r['sentences_per_s']:.1f} | "
                         f"{r['sentences_per_s_best']:.1f} |")
    for st in result.get("storage", []):
        lines += ["", f"Storage ({st['config']}): float32 folder {st['float32_bytes'] / 1e6:.1f} MB "
                  f"(weights {st['float32_weights_bytes'] / 1e6:.1f} MB), int8 folder {st['int8_bytes'] / 1e6:.1f} MB "
                  f"(weights {st['int8_weights_bytes'] / 1e6:.1f} MB): int8 / float32 = {st['size_ratio']:.3f}; "
                  f"load {st['float32_load_s']:.2f} s / {st['int8_load_s']:.2f} s; max weight error "
                  f"{st['max_rel_weight_error']:.4f} of the tensor's largest value; teacher-forced next-token "
                  f"argmax (on the float32 greedy output) agrees at {st['teacher_forced_argmax_agreement']:.3f} of "
                  "the positions.", "",
                  "| decoding | identical sentences | token agreement | common prefix | mean length |",
                  "|---|---:|---:|---:|---:|"]
        for beam in (1, 4):
            b = st[f"beam{beam}"]
            lines.append(f"| {'greedy' if beam == 1 else 'beam 4'} | {b['identical_sentences']} / {st['sentences']} | "
                         f"{b['token_agreement']:.3f} | {b['common_prefix']:.3f} | {b['mean_len']} |")
    lines += ["", "Ratios (ours / peer in time; below 1 means ours is faster; CPU: the same from CPU time):", "",
              "| config | threads | measure | beam | ratio | value | CPU |", "|---|---:|---|---:|---|---:|---:|"]
    for r in result["ratios"]:
        cpu = f"{r['cpu_value']:.2f}" if "cpu_value" in r else ""
        lines.append(f"| {r['config']} | {r['threads']} | {r['measure']} | {r['beam']} | {r['ratio']} | "
                     f"{r['value']:.2f} | {cpu} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="small,base", help="comma-separated: small,base,opus-mt (default small,base)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--repeats", type=int, default=7, help="timed calls per engine and case (default 7)")
    p.add_argument("--warmup", type=int, default=1, help="untimed calls first (default 1)")
    p.add_argument("--sentences", type=int, default=200, help="sentences for the throughput run (default 200)")
    p.add_argument("--batch-size", type=int, default=32, help="throughput batch size (default 32)")
    p.add_argument("--no-hf", action="store_true", help="leave out the transformers rows")
    p.add_argument("--no-ct2", action="store_true",
                   help="leave out the CTranslate2 rows (with 2 threads, having CTranslate2 loaded in the "
                        "process slows torch's own 2-thread runs: see benchmarks/RESULTS.md)")
    p.add_argument("--no-ours", action="store_true", help="leave out our own rows (with --separate)")
    p.add_argument("--separate", action="store_true",
                   help="run CTranslate2 in a child process of its own and ours + transformers in another; "
                        "merge the rows (see above)")
    p.add_argument("--storage", action="store_true",
                   help="also compare int8 storage (import_marian int8=True) with float32: sizes, agreement")
    p.add_argument("--storage-sentences", type=int, default=40, help="sentences for --storage (default 40)")
    p.add_argument("--quick", action="store_true", help="3 repeats, 48 sentences: a smoke run")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = p.parse_args(argv)
    if args.separate:
        return separate(argv if argv is not None else sys.argv[1:], args.json)
    args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
    if args.quick:
        args.repeats, args.sentences = 3, 48
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    for n in names:
        if n not in CONFIGS:
            p.error(f"unknown config {n!r}; choose from {', '.join(CONFIGS)}")
    try:
        import transformers  # noqa: F401
        import sentencepiece  # noqa: F401
    except ImportError as exc:
        raise SystemExit(f"vs_peers.py needs transformers and sentencepiece (pip install -e .[bench]): {exc}")
    versions = {"transformers": transformers.__version__}
    try:  # the version without importing the library (loading it is what --no-ct2 avoids)
        versions["ctranslate2"] = importlib.metadata.version("ctranslate2")
    except importlib.metadata.PackageNotFoundError:
        versions["ctranslate2"] = None
    skipped: dict[str, str] = {}
    rows: list[dict] = []
    stored: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="vs-peers-") as tmp, LoadMeter() as load:
        for name in names:
            rows += run_config(name, args, Path(tmp), skipped, stored)
    machine = machine_info(args.threads[0])
    machine["other_load_cpus"] = None if load.other_cpus is None else round(load.other_cpus, 2)
    result = {"machine": machine, "versions": versions, "skipped": skipped,
              "settings": {"configs": names, "threads": args.threads, "repeats": args.repeats,
                           "sentences": args.sentences, "batch_size": args.batch_size, "src_len": SRC_LEN,
                           "tgt_len": TGT_LEN, "batch_tgt_len": BATCH_TGT_LEN},
              "rows": rows, "ratios": ratios(rows)}
    if stored:
        result["storage"] = stored
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


def separate(argv: list[str], as_json: bool) -> int:
    """`--separate`: the same run as two child processes (torch engines; CTranslate2), rows merged."""
    base = [a for a in argv if a not in ("--separate", "--json")] + ["--json"]
    results = []
    for only in (["--no-ct2"], ["--no-ours", "--no-hf"]):
        child = subprocess.run([sys.executable, __file__, *base, *only], capture_output=True, text=True)
        if child.returncode != 0:
            print(child.stderr[-3000:], file=sys.stderr)
            return child.returncode
        results.append(json.loads(child.stdout))
    torch_run, ct2_run = results
    rows = torch_run["rows"] + ct2_run["rows"]
    merged = {**torch_run, "rows": rows, "ratios": ratios(rows), "skipped": {**torch_run["skipped"], **ct2_run["skipped"]},
              "versions": {**torch_run["versions"], **ct2_run["versions"]}, "separate_processes": True}
    loads = [r["machine"]["other_load_cpus"] for r in results if r["machine"]["other_load_cpus"] is not None]
    merged["machine"]["other_load_cpus"] = max(loads) if loads else None
    print(json.dumps(merged, indent=2) if as_json else "CTranslate2 ran in a process of its own (--separate).\n"
          + markdown(merged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
