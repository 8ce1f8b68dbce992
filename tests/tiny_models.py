"""A synthetic translation task and tiny real models trained on it in seconds (test helpers).

The task maps each word of a made-up source language to one word of a target language, keeping
word order, so a trained model's cross-attention is near-diagonal and decoding is meaningful.
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.model.transformer import Transformer, build_model

SOURCE_WORDS = ["red", "blue", "green", "cat", "dog", "bird", "runs", "sleeps", "eats", "big", "small", "house",
                "tree", "water", "sun", "moon"]
TARGET_WORDS = ["rot", "blau", "gruen", "katze", "hund", "vogel", "rennt", "schlaeft", "isst", "gross", "klein",
                "haus", "baum", "wasser", "sonne", "mond"]
LEXICON = dict(zip(SOURCE_WORDS, TARGET_WORDS))


def synthetic_pairs(n: int, seed: int = 0, min_words: int = 2, max_words: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        words = [rng.choice(SOURCE_WORDS) for _ in range(rng.randint(min_words, max_words))]
        pairs.append((" ".join(words), " ".join(LEXICON[w] for w in words)))
    return pairs


def reference(source: str) -> str:
    return " ".join(LEXICON[w] for w in source.split())


def tiny_tokenizers(joint: bool = True) -> TokenizerPair:
    pairs = synthetic_pairs(500, seed=1)
    return TokenizerPair.train([s for s, _ in pairs], [t for _, t in pairs], vocab_size=400, joint=joint)


def tiny_config(tokenizers: TokenizerPair, **overrides) -> ModelConfig:
    base = dict(src_vocab_size=tokenizers.source.vocab_size, tgt_vocab_size=tokenizers.target.vocab_size,
                d_model=64, n_heads=4, encoder_layers=2, decoder_layers=2, ffn_dim=128, max_positions=64,
                dropout=0.0, shared_vocab=tokenizers.joint)
    base.update(overrides)
    return ModelConfig(**base)


def train_tiny(model: Transformer, tokenizers: TokenizerPair, steps: int = 300, seed: int = 0,
               batch_size: int = 32, reverse: bool = False) -> Transformer:
    """Teacher-forced cross-entropy with Adam on the synthetic task (reverse: target language -> source
    language, for a model of the reverse direction); returns the model in eval mode."""
    cfg = model.config
    torch.manual_seed(seed)
    pairs = synthetic_pairs(2000, seed=seed + 10)
    if reverse:
        pairs = [(t, s) for s, t in pairs]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    warmup = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 50))
    rng = random.Random(seed)
    model.train()
    for _ in range(steps):
        batch = rng.sample(pairs, batch_size)
        src = [tokenizers.source.encode(s) + [cfg.eos_id] for s, _ in batch]
        tgt = [[cfg.decoder_start_id] + tokenizers.target.encode(t) + [cfg.eos_id] for _, t in batch]
        S, T = max(map(len, src)), max(map(len, tgt))
        src_t = torch.tensor([x + [cfg.pad_id] * (S - len(x)) for x in src])
        tgt_t = torch.tensor([y + [cfg.pad_id] * (T - len(y)) for y in tgt])
        logits = model(src_t, tgt_t[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_t[:, 1:].reshape(-1),
                               ignore_index=cfg.pad_id)
        opt.zero_grad()
        loss.backward()
        opt.step()
        warmup.step()
    return model.eval()


def trained_tiny_model(joint: bool = True, steps: int = 300, **overrides) -> tuple[Transformer, TokenizerPair]:
    tokenizers = tiny_tokenizers(joint)
    model = build_model(tiny_config(tokenizers, **overrides), seed=0)
    return train_tiny(model, tokenizers, steps), tokenizers


# The session model's training threads: 2, the count the suite's expectations were written against (out of
# its domain, "the small green bird sees the big red cat", the 1-thread model never emits </s>; the 2-thread
# one does, on any machine, however loaded: a thread count fixed here, not taken from the machine).
TRAIN_THREADS = 2


def cached_tiny_model(steps: int = 300) -> tuple[Transformer, TokenizerPair]:
    """`trained_tiny_model(steps=steps)`, trained on a fixed TRAIN_THREADS threads with deterministic kernels
    (its accuracy must not depend on the machine's core count, the xdist workers' share of them or the rounding
    of a parallel reduction) and kept on disk by the content of this file and the model code
    (tests/built_once.py): the xdist workers and later runs load it in milliseconds instead of training it
    again."""
    from built_once import built_once, content_key, python_sources
    from nmt_desktop.core.formats.model_folder import load_model, save_model

    def build(folder) -> None:
        threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
        torch.set_num_threads(TRAIN_THREADS)
        torch.use_deterministic_algorithms(True)
        try:
            model, tokenizers = trained_tiny_model(steps=steps)
        finally:
            torch.set_num_threads(threads)
            torch.use_deterministic_algorithms(deterministic)
        save_model(folder / "model", model, tokenizers)

    sources = python_sources("tests/tiny_models.py", "nmt_desktop/core/model", "nmt_desktop/core/config.py",
                             "nmt_desktop/core/tokenizer.py", "nmt_desktop/core/formats")
    folder = built_once(content_key("tiny-trained", sources, steps=steps, threads=TRAIN_THREADS), build)
    loaded = load_model(folder / "model")
    return loaded.model, loaded.tokenizers


def perturbed_model(cfg: ModelConfig, seed: int = 0) -> Transformer:
    """A model in eval mode whose parameters are all pushed away from their init (non-trivial outputs)."""
    model = build_model(cfg, seed=seed)
    gen = torch.Generator().manual_seed(seed + 1000)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=gen))
    return model.eval()


def multilingual_translator(tiny_trained: tuple[Transformer, TokenizerPair], codes: list[str]):
    """A Translator on a random model (seed 5) whose source vocabulary is the tiny model's plus OPUS-MT-style
    target-language tokens `codes` (">>fra<<", ...) as special tokens."""
    import tokenizers

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.tokenizer import Tokenizer

    _, pair = tiny_trained
    source = Tokenizer.from_str(pair.source.to_str())
    source.hf.add_special_tokens([tokenizers.AddedToken(c, special=True, normalized=False) for c in codes])
    pair = TokenizerPair(source, Tokenizer.from_str(pair.target.to_str()), joint=False)
    return Translator(build_model(tiny_config(pair), seed=5), pair, name="multi")


def right_padded(seqs, pad: int = 0) -> torch.Tensor:
    """Token id lists -> (B, max_len) LongTensor, right-padded with `pad`."""
    out = torch.full((len(seqs), max(map(len, seqs))), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out


def write_tsv(path, pairs):
    """Write (source, target) pairs as a `source<TAB>target` file; returns the path."""
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return path


def tiny_run_folder(run, model: Transformer, tokenizers: TokenizerPair, last_model: Transformer | None = None):
    """A training run's folder as core/training/train.py leaves it: `best/` holds `model`, `last/` holds
    `last_model` (default: `model`), beside `train_config.toml` and `events.jsonl`; returns the folder."""
    from nmt_desktop.core.formats.model_folder import save_model

    run.mkdir(parents=True)
    (run / "train_config.toml").write_text("steps = 10\n", encoding="utf-8")
    (run / "events.jsonl").write_text('{"event": "start"}\n', encoding="utf-8")
    save_model(run / "best", model, tokenizers, {"name": "tiny run, best"})
    save_model(run / "last", last_model or model, tokenizers, {"name": "tiny run, last"})
    return run
