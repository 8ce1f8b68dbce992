"""Typed configuration dataclasses with JSON round-trip.

`ModelConfig` describes the architecture and special tokens of a model folder's `config.json`;
`DecodeConfig` the options of one decoding run.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FORMAT_VERSION = 1  # bump when config.json changes incompatibly

Norm = Literal["post", "pre"]
Activation = Literal["relu", "gelu", "silu"]
PosLayout = Literal["interleaved", "concat"]


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong type or out of range."""


@dataclass
class ModelConfig:
    """Architecture of an encoder-decoder Transformer plus its special token ids."""

    src_vocab_size: int = 8000
    tgt_vocab_size: int = 8000
    d_model: int = 512
    n_heads: int = 8
    encoder_layers: int = 6
    decoder_layers: int = 6
    ffn_dim: int = 2048
    dropout: float = 0.1  # residual and embedding dropout (the paper's P_drop)
    attention_dropout: float = 0.0  # on attention weights; the paper uses none
    activation_dropout: float = 0.0  # inside the feed-forward block
    activation: Activation = "relu"
    norm: Norm = "post"  # "post" = the paper; "pre" adds final encoder/decoder norms
    layer_norm_eps: float = 1e-5
    bias: bool = True  # bias in every linear layer and layer norm
    max_positions: int = 256
    pos_layout: PosLayout = "interleaved"  # paper: sin on even dims; "concat": sin half then cos half (Marian)
    scale_embedding: bool = True  # multiply embeddings by sqrt(d_model) as in the paper
    shared_vocab: bool = True  # one vocabulary: source and target embeddings are one matrix
    tie_output: bool = True  # output projection shares the target embedding matrix
    final_logits_bias: bool = False  # a learned/imported bias on the logits (Marian)
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    unk_id: int = 3
    decoder_start_id: int = 1  # first decoder input; <s> for our models, <pad> for Marian
    src_add_eos: bool = True  # append </s> to every source sequence
    src_lang: str = ""
    tgt_lang: str = ""
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        self.validate()

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        """Raise ConfigError naming the first field that makes no sense."""
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "ffn_dim", "max_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"field '{name}' must be a positive integer, got {value!r}")
        for name in ("encoder_layers", "decoder_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"field '{name}' must be an integer >= 1, got {value!r}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"field 'd_model' ({self.d_model}) must be divisible by 'n_heads' ({self.n_heads})")
        if self.d_model % 2:
            raise ConfigError(f"field 'd_model' must be even for sinusoidal positions, got {self.d_model}")
        choices = {"activation": ("relu", "gelu", "silu"), "norm": ("post", "pre"),
                   "pos_layout": ("interleaved", "concat")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(f"field '{name}' must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        for name in ("bias", "scale_embedding", "shared_vocab", "tie_output", "final_logits_bias", "src_add_eos"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"field '{name}' must be true or false, got {getattr(self, name)!r}")
        for name in ("src_lang", "tgt_lang"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"field '{name}' must be a string, got {getattr(self, name)!r}")
        eps = self.layer_norm_eps
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not 0.0 < eps < 1.0:
            raise ConfigError(f"field 'layer_norm_eps' must be a small positive number, got {eps!r}")
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
                raise ConfigError(f"field '{name}' must be a number in [0, 1), got {value!r}")
        if self.shared_vocab and self.src_vocab_size != self.tgt_vocab_size:
            raise ConfigError(
                f"field 'shared_vocab' is true but src_vocab_size ({self.src_vocab_size}) != "
                f"tgt_vocab_size ({self.tgt_vocab_size})")
        for name in ("pad_id", "bos_id", "eos_id", "unk_id", "decoder_start_id"):
            value = getattr(self, name)
            limit = min(self.src_vocab_size, self.tgt_vocab_size)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < limit:
                raise ConfigError(f"field '{name}' must be a token id in [0, {limit}), got {value!r}")
        if self.format_version != FORMAT_VERSION:
            raise ConfigError(
                f"field 'format_version' is {self.format_version!r}, but this version of nmt-desktop "
                f"reads format {FORMAT_VERSION}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ModelConfig":
        """Build from a dict, refusing unknown keys so typos do not pass silently."""
        if not isinstance(data, dict):
            raise ConfigError(f"expected a JSON object, got {type(data).__name__}")
        version = data.get("format_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise ConfigError(f"format version {version!r} is not supported (this nmt-desktop reads format {FORMAT_VERSION})")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown field '{unknown[0]}'")
        try:
            return cls(**data)
        except TypeError as exc:  # pragma: no cover - dataclass signature errors
            raise ConfigError(str(exc)) from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "ModelConfig":
        return cls.from_dict(json.loads(text))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")


# Named architecture sizes used by benchmarks, tests and `train --preset`.
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(d_model=64, n_heads=4, encoder_layers=2, decoder_layers=2, ffn_dim=256),
    "small": dict(d_model=256, n_heads=4, encoder_layers=3, decoder_layers=3, ffn_dim=1024),
    "base": dict(d_model=512, n_heads=8, encoder_layers=6, decoder_layers=6, ffn_dim=2048),
}


@dataclass
class DecodeConfig:
    """Options of one decoding run (greedy, beam or sampling)."""

    beam_size: int = 1  # 1 = greedy unless sampling
    nbest: int = 1  # hypotheses returned by beam search, <= beam_size
    length_penalty: float = 1.0  # GNMT-style alpha: score / ((5 + len) / 6) ** alpha
    sample: bool = False
    # sampling defaults chosen on the bundled models' dev sets (benchmarks/sampling_defaults.py, RESULTS.md):
    # the best chrF among settings whose samples still differ from greedy; T=1 without a filter gave junk
    temperature: float = 0.6
    top_k: int = 0  # 0 = no top-k filter
    top_p: float = 0.8  # 1.0 = no nucleus filter
    seed: int | None = None
    min_length: int = 0  # </s> is suppressed before this many target tokens
    max_len_a: float = 1.5  # max target tokens = a * source_len + b (capped by max_positions)
    max_len_b: int = 10
    alternatives: int = 5  # top-k alternatives reported per step
    self_attention: bool = False  # also capture decoder self-attention per step
    attention: bool = True  # capture cross-attention (False = fastest, weight-free path)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        for name in ("beam_size", "nbest", "top_k", "min_length", "max_len_b", "alternatives"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{name.replace('_', ' ')} must be an integer, got {value!r}")
        if self.beam_size < 1:
            raise ConfigError(f"beam size must be >= 1, got {self.beam_size}")
        if not 1 <= self.nbest <= self.beam_size:
            raise ConfigError(f"n-best must be between 1 and the beam size ({self.beam_size}), got {self.nbest}")
        if self.sample and self.beam_size > 1:
            raise ConfigError("sampling and beam search cannot be combined; use a beam size of 1 with sampling")
        if self.temperature <= 0:
            raise ConfigError(f"temperature must be > 0, got {self.temperature}")
        if self.top_k < 0:
            raise ConfigError(f"top-k must be >= 0, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise ConfigError(f"top-p must be in (0, 1], got {self.top_p}")
        if self.min_length < 0:
            raise ConfigError(f"minimum length must be >= 0, got {self.min_length}")
        if self.max_len_a < 0 or self.max_len_b < 0:
            raise ConfigError("max length terms a and b must be >= 0")
        if self.max_len_a == 0 and self.max_len_b == 0:
            raise ConfigError("max length a * source_len + b must allow at least one token")
        if self.alternatives < 0:
            raise ConfigError(f"alternatives must be >= 0, got {self.alternatives}")

    def max_length(self, source_len: int, max_positions: int) -> int:
        """Largest number of generated tokens (not counting the start token)."""
        limit = int(self.max_len_a * source_len + self.max_len_b)
        return max(1, min(limit, max_positions - 1))


@dataclass
class TrainConfig:
    """Everything a training run needs; the TOML file, the CLI flags and the GUI all fill this.

    Architecture fields left as None take the preset's value (from scratch) or the loaded model's
    (fine-tuning with `from_model`).
    """

    # data
    train: str | None = None  # TSV (source<TAB>target) or TMX file
    train_src: str | None = None  # or two aligned plain-text files
    train_tgt: str | None = None
    dev: str | None = None
    dev_src: str | None = None
    dev_tgt: str | None = None
    dev_fraction: float = 0.0  # > 0: hold out this share of the training pairs as dev (seeded) when no dev set is given
    reverse: bool = False  # swap the columns of a TSV (train German->English from English<TAB>German)
    src_lang: str = ""
    tgt_lang: str = ""
    max_tokens: int = 128  # pairs with a longer side (in tokens) are skipped and counted
    out: str | None = None  # run folder
    # fine-tuning on a translation memory (core/training/memory_data.py): needs from_model
    memory: str | None = None  # a translation memory file: its entries of `pair` are the training data
    pair: str = ""  # the memory's language pair, e.g. en-de ("": src_lang-tgt_lang, else the model's languages)
    replay: str | None = None  # general data mixed in so the model does not forget ("": the parent's training file)
    replay_ratio: float = 1.0  # replayed general pairs per memory pair (0: no replay)
    general_dev: str | None = None  # general text scored before and after ("": the parent's dev file)
    # model
    from_model: str | None = None  # fine-tune this model folder, keeping its tokenizer(s)
    preset: str = "small"  # tiny | small | base (from scratch)
    vocab_size: int = 8000  # BPE vocabulary trained from the data (from scratch)
    joint_vocab: bool = True  # one shared vocabulary (tied embeddings) or one per side
    d_model: int | None = None
    n_heads: int | None = None
    encoder_layers: int | None = None
    decoder_layers: int | None = None
    ffn_dim: int | None = None
    activation: str | None = None
    norm: str | None = None
    max_positions: int | None = None
    dropout: float | None = None  # None: 0.1 (from scratch) or the model's own (fine-tuning)
    attention_dropout: float | None = None
    freeze: str = "none"  # none | embeddings | encoder (fine-tuning)
    # optimisation
    lr: float = 7e-4  # peak learning rate
    schedule: str = "inverse_sqrt"  # inverse_sqrt (the paper's warmup then 1/sqrt(step)) | constant | cosine
    warmup_steps: int = 4000
    min_lr: float = 0.0  # floor of the cosine schedule
    label_smoothing: float = 0.1
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_eps: float = 1e-9
    clip_norm: float = 1.0  # 0 disables gradient clipping
    batch_tokens: int = 4096  # padded tokens per batch (per process)
    accum_steps: int = 1  # gradient accumulation: batches per optimizer step
    # limits: the first one reached ends the run
    max_steps: int | None = None
    epochs: float | None = None
    max_time: float | None = None  # seconds of wall time
    # evaluation and checkpoints
    eval_every: int = 1000  # optimizer steps between dev evaluations (and checkpoints)
    eval_sentences: int = 500  # dev sentences decoded for BLEU/chrF at each evaluation (0 = all)
    eval_beam: int = 1
    patience: int = 0  # stop after this many evaluations without a better dev BLEU (0 = never)
    keep_checkpoints: int = 0  # also keep the newest N evaluated models in OUT/checkpoints/ (for averaging)
    samples: int = 3  # sample translations reported per evaluation
    probe: str = ""  # a sentence whose cross-attention is reported at each evaluation
    log_every: int = 50  # optimizer steps between progress events
    # machine
    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    precision: str = "auto"  # auto (bf16 on a GPU with bf16 units, else fp32) | fp32 | bf16 | fp16 (with a grad scaler)
    compile: bool = False  # torch.compile the model for the training steps
    threads: int = 0  # CPU threads for torch (0 = torch's default)
    seed: int = 1
    progress: str = "bar"  # bar (tqdm) | json (one event per line on stdout)

    def validate(self) -> None:
        if self.out is None:
            raise ConfigError("field 'out' (the run folder) is required")
        if self.memory and (self.train or self.train_src or self.train_tgt):
            raise ConfigError("give either 'memory' or 'train'/'train_src', not both")
        if self.memory and not self.from_model:
            raise ConfigError("fine-tuning on a memory needs the model it starts from: give 'from_model'")
        if not (self.memory or self.train or (self.train_src and self.train_tgt)):
            raise ConfigError("training data is required: give 'train', or 'train_src' and 'train_tgt', or 'memory'")
        if self.replay_ratio < 0:
            raise ConfigError(f"field 'replay_ratio' must be >= 0, got {self.replay_ratio!r}")
        if self.train and (self.train_src or self.train_tgt):
            raise ConfigError("give either 'train' or 'train_src'/'train_tgt', not both")
        if bool(self.dev_src) != bool(self.dev_tgt):
            raise ConfigError("'dev_src' and 'dev_tgt' must be given together")
        if self.preset not in PRESETS:
            raise ConfigError(f"field 'preset' must be one of {', '.join(PRESETS)}, got {self.preset!r}")
        if self.schedule not in ("inverse_sqrt", "constant", "cosine"):
            raise ConfigError(f"field 'schedule' must be inverse_sqrt, constant or cosine, got {self.schedule!r}")
        if self.freeze not in ("none", "embeddings", "encoder"):
            raise ConfigError(f"field 'freeze' must be none, embeddings or encoder, got {self.freeze!r}")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ConfigError(f"field 'precision' must be auto, fp32, bf16 or fp16, got {self.precision!r}")
        if self.progress not in ("bar", "json", "none"):
            raise ConfigError(f"field 'progress' must be bar or json, got {self.progress!r}")
        if self.schedule == "cosine" and not self.max_steps:
            raise ConfigError("the cosine schedule needs 'max_steps'")
        for name in ("lr", "batch_tokens", "accum_steps", "eval_every", "log_every", "max_tokens", "vocab_size"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"field '{name}' must be > 0, got {getattr(self, name)!r}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ConfigError(f"field 'label_smoothing' must be in [0, 1), got {self.label_smoothing}")
        if not 0.0 <= self.dev_fraction < 1.0:
            raise ConfigError(f"field 'dev_fraction' must be in [0, 1), got {self.dev_fraction}")
        if self.keep_checkpoints < 0:
            raise ConfigError(f"field 'keep_checkpoints' must be >= 0, got {self.keep_checkpoints!r}")
        for name in ("max_steps", "epochs", "max_time"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(f"field '{name}' must be > 0, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> "TrainConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key '{unknown[0]}'")
        return cls(**data)

    def to_toml(self) -> str:
        """Flat TOML of every set field (None values are left out), readable by `from_toml`."""
        lines = []
        for key, value in self.to_dict().items():
            if value is not None:
                lines.append(f"{key} = {json.dumps(value)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml(cls, path: str | Path) -> "TrainConfig":
        import tomllib

        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: file not found") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        return cls.from_dict(data, str(path))
