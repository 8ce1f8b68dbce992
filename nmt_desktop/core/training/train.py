"""Training: from scratch or fine-tuning, exact resume, periodic evaluation, DDP under torchrun.

`Trainer(cfg, emit).run()` knows nothing of terminals or windows: it reports progress as event
dicts through `emit` (the CLI prints them as a tqdm bar or JSON lines) and checks a stop flag
between optimizer steps (`request_stop()`, wired to SIGINT/SIGTERM by the CLI), after which it
saves a checkpoint and returns.

Run folder layout: `train_config.toml` (effective config), `last/` (model folder +
`trainer_state/`, the resume point), `best/` (model folder with the best dev BLEU),
`events.jsonl` (every progress event), and with `keep_checkpoints = N` the newest N evaluated
models in `checkpoints/step-NNNNNNN/` (for `nmt-desktop export --average`). Fine-tuning from a model
that has a glossary (core/formats/model_glossary.py) keeps it: `glossary.tsv` in the run folder and in
every model folder the run writes, and the card says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor

from nmt_desktop.core.config import PRESETS, ConfigError, ModelConfig, TrainConfig
from nmt_desktop.core.formats.model_card import note_run_steps, source_words
from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.formats.model_glossary import GLOSSARY_FILE, KeptGlossary, keep_parent_glossary
from nmt_desktop.core.locations import resolve_model_path
from nmt_desktop.core.model.transformer import Transformer, build_model, count_parameters
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.training.batching import Batch, batches_for_epoch, padding_fraction, shard_batches
from nmt_desktop.core.training.checkpoint import (CHECKPOINTS_DIR, find_checkpoint, load_trainer_state,
                                                  promote_checkpoint, save_checkpoint, snapshots,
                                                  write_model_atomically)
from nmt_desktop.core.training.corpus import Corpus, CorpusSpec, read_corpus, split_dev
from nmt_desktop.core.training.domain_scores import before_after, bleu_chrf, parent_scores
from nmt_desktop.core.training.memory_data import MemoryData, SegmentReader, memory_data_for, parent_model
from nmt_desktop.core.training.process_placement import Distributed, hardware_name
from nmt_desktop.core.training.encoding import encode_pairs, train_tokenizers
from nmt_desktop.core.training.evaluation import decoded_pairs, evaluate_dev
from nmt_desktop.core.training.out_of_memory import (first_rows, free_cached_memory, largest_fitting_rows,
                                                     out_of_memory_sentence, padded_tokens)
from nmt_desktop.core.training.precision import AmpPolicy, precision_note
from nmt_desktop.core.training.prefetch import Prefetcher
from nmt_desktop.core.training.schedule import learning_rate

Event = dict[str, Any]


class TrainingError(RuntimeError):
    """A run cannot start or continue; the message is one sentence for the user."""


def resolve_device(name: str) -> torch.device:
    """'auto' picks cuda, then mps, then cpu; an explicit device must exist."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise TrainingError(f"unknown device '{name}' (use auto, cpu, cuda, cuda:N or mps)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise TrainingError(f"device '{name}' was asked for but this PyTorch build sees no CUDA GPU "
                            f"(torch {torch.__version__}); use --device cpu or install a CUDA build of PyTorch")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise TrainingError("device 'mps' was asked for but Metal is not available here; use --device cpu")
    return device


@dataclass
class LoopState:
    """Where the run is; saved in every checkpoint (JSON) so `--resume` continues exactly."""

    step: int = 0  # optimizer steps done
    epoch: int = 0  # current epoch (0-based)
    batch_index: int = 0  # next micro-batch of this epoch's (seeded) batch list
    tokens: int = 0  # target tokens trained on
    elapsed: float = 0.0  # training wall time so far, across resumes
    best_bleu: float = -1.0
    best_step: int = 0
    evals_since_best: int = 0
    last_eval_step: int = 0


class Trainer:
    def __init__(self, cfg: TrainConfig, emit: Callable[[Event], None] | None = None, resume: bool = False,
                 segments: SegmentReader | None = None):
        """`segments` reads a memory file's pairs when `cfg.memory` is set (core/memory/segments.pair_segments)."""
        cfg.validate()
        if cfg.memory and segments is None:
            raise TrainingError("fine-tuning on a memory needs its reader: pass segments=pair_segments "
                                "(nmt_desktop.core.memory.segments)")
        self.segments = segments
        self.cfg = cfg
        self.emit_fn = emit or (lambda e: None)
        self.resume = resume
        self.out = Path(cfg.out)
        self.dist = Distributed.from_env()
        self.stop_reason: str | None = None
        self._stop_requested = False
        self.memory_data: MemoryData | None = None  # fine-tuning on a translation memory (cfg.memory)

    # --- events -------------------------------------------------------------------------------

    def request_stop(self, reason: str = "interrupted") -> None:
        """Ask the loop to save and return after the current step (safe from a signal handler)."""
        self._stop_requested = True
        self.stop_reason = self.stop_reason or reason

    def emit(self, event: str, **fields: Any) -> None:
        if not self.dist.main:
            return
        ev = {"event": event, "step": self.state.step, "epoch": self.state.epoch, **fields}
        with open(self.out / "events.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(ev) + "\n")
        self.emit_fn(ev)

    # --- setup --------------------------------------------------------------------------------

    def _setup_distributed(self) -> None:
        if self.dist.world > 1 and not dist.is_initialized():
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            dist.init_process_group(backend=backend)

    def _read_data(self) -> tuple[Corpus, Corpus | None]:
        cfg = self.cfg
        if cfg.memory:
            self.memory_data = memory_data_for(cfg, self.segments)
            return self.memory_data.train, self.memory_data.dev
        spec = CorpusSpec(path=cfg.train, src_path=cfg.train_src, tgt_path=cfg.train_tgt, reverse=cfg.reverse,
                            src_lang=cfg.src_lang or None, tgt_lang=cfg.tgt_lang or None)
        train = read_corpus(spec)
        dev = None
        if cfg.dev or cfg.dev_src:
            dev = read_corpus(CorpusSpec(path=cfg.dev, src_path=cfg.dev_src, tgt_path=cfg.dev_tgt,
                                             reverse=cfg.reverse, src_lang=cfg.src_lang or None,
                                             tgt_lang=cfg.tgt_lang or None))
        elif cfg.dev_fraction > 0:
            train, dev = split_dev(train, cfg.dev_fraction, cfg.seed)
        return train, dev

    def _model_config(self, tokenizers: TokenizerPair) -> ModelConfig:
        cfg = self.cfg
        arch = dict(PRESETS[cfg.preset])
        for name in ("d_model", "n_heads", "encoder_layers", "decoder_layers", "ffn_dim", "activation", "norm",
                     "max_positions", "dropout", "attention_dropout"):
            if getattr(cfg, name) is not None:
                arch[name] = getattr(cfg, name)
        arch.setdefault("max_positions", max(256, cfg.max_tokens + 2))
        return ModelConfig(src_vocab_size=tokenizers.source.vocab_size, tgt_vocab_size=tokenizers.target.vocab_size,
                           shared_vocab=tokenizers.joint, tie_output=True, src_lang=cfg.src_lang, tgt_lang=cfg.tgt_lang,
                           **arch)

    def _init_model(self, train: Corpus) -> tuple[Transformer, TokenizerPair]:
        """From a checkpoint (resume), a model folder (fine-tune) or scratch (tokenizers trained here)."""
        cfg = self.cfg
        last = self.out / "last"
        ckpt = find_checkpoint(last)
        if self.resume and ckpt is not None:
            if self.dist.main:
                ckpt = promote_checkpoint(last)
            self._barrier()
            ckpt = last
            self._resume_from = ckpt
            loaded = load_model(ckpt)
            return loaded.model, loaded.tokenizers
        if ckpt is not None:
            raise TrainingError(f"{self.out} already holds a training run; use --resume to continue it "
                                f"or choose another --out")
        self._resume_from = None
        if cfg.from_model:
            loaded = load_model(resolve_model_path(cfg.from_model))
            overrides = {k: getattr(cfg, k) for k in ("dropout", "attention_dropout") if getattr(cfg, k) is not None}
            mcfg = dataclasses.replace(loaded.config, **overrides) if overrides else loaded.config
            model = Transformer(mcfg)
            model.load_state_dict(loaded.model.state_dict())
            return model, loaded.tokenizers
        tok_dir = self.out / "tokenizer"
        if self.dist.main:
            tokenizers = train_tokenizers(train.pairs, cfg.vocab_size, cfg.joint_vocab)
            tokenizers.save(tok_dir)
        self._barrier()
        tokenizers = TokenizerPair.load(tok_dir)
        return build_model(self._model_config(tokenizers), seed=cfg.seed), tokenizers

    def _keep_glossary(self) -> KeptGlossary | None:
        """The parent model's glossary, copied into the run folder when fine-tuning starts (a resumed run keeps
        that copy): every model folder the run writes carries it, so the new model keeps the parent's terms."""
        cfg = self.cfg
        if not cfg.from_model or not self.dist.main:
            return None
        copy = self.out / GLOSSARY_FILE
        parent = self.out if self.resume and copy.is_file() else resolve_model_path(cfg.from_model, lambda _: None)
        try:
            kept = keep_parent_glossary(parent, self.out)
        except OSError as exc:
            raise TrainingError(f"the glossary of {cfg.from_model} cannot be kept for the new model: "
                                f"{exc.strerror or exc}") from None
        return dataclasses.replace(kept, parent=cfg.from_model) if kept is not None else None

    def _freeze(self, model: Transformer) -> None:
        if self.cfg.freeze == "embeddings":
            model.tgt_embed.weight.requires_grad_(False)
            if model.src_embed is not None:
                model.src_embed.weight.requires_grad_(False)
        elif self.cfg.freeze == "encoder":
            for module in [*model.encoder_layers, model.encoder_norm, model.src_embed]:
                if module is not None:
                    module.requires_grad_(False)

    def _barrier(self) -> None:
        if dist.is_initialized():
            dist.barrier()

    def setup(self) -> None:
        cfg = self.cfg
        self.state = LoopState()
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.device = resolve_device(cfg.device)
        if self.device.type == "cuda" and self.dist.world > 1:
            self.device = torch.device("cuda", self.dist.local_rank)
            torch.cuda.set_device(self.device)
        self._setup_distributed()
        self.out.mkdir(parents=True, exist_ok=True)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        train, dev = self._read_data()
        self._source_words = source_words(src for src, _ in train.pairs)  # the card says how long inputs were
        model, self.tokenizers = self._init_model(train)
        self.kept_glossary = self._keep_glossary()
        self._freeze(model)
        self.model = model.to(self.device)
        self.config = model.config
        self.train_data = encode_pairs(train.pairs, self.tokenizers, self.config, cfg.max_tokens)
        self.dev_pairs = dev.pairs if dev is not None else []
        self.dev_data = encode_pairs(self.dev_pairs, self.tokenizers, self.config, cfg.max_tokens) if dev else None
        if self.memory_data is not None and self.dist.main:  # the parent's scores, before any step
            self.memory_before = parent_scores(self.out, self.model, self.tokenizers, self.dev_pairs,
                                               self.memory_data.general_dev, cfg)
        params = [p for p in model.parameters() if p.requires_grad]
        fused = self.device.type == "cuda"
        self.optimizer = torch.optim.AdamW(params, lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2),
                                           eps=cfg.adam_eps, weight_decay=cfg.weight_decay,
                                           **({"fused": True} if fused else {}))
        self.params = params  # the trained parameters, for clipping and the gradient norm
        try:
            self.amp = AmpPolicy.for_device(cfg.precision, self.device)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        if self._resume_from is not None:
            saved = load_trainer_state(self._resume_from, self.optimizer)
            known = {f.name for f in dataclasses.fields(LoopState)}
            self.state = LoopState(**{k: v for k, v in saved.items() if k in known})
            self.amp.load_state_dict(saved.get("grad_scaler"))
        self.ddp_model = model
        if self.dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            self.ddp_model = DistributedDataParallel(
                model, device_ids=[self.device.index] if self.device.type == "cuda" else None)
        if self.dist.main:
            (self.out / "train_config.toml").write_text(cfg.to_toml(), encoding="utf-8")
        self.autocast = self.amp.autocast()
        self.step_model = self.ddp_model
        if cfg.compile:  # token-budget batches change shape every step: compile for dynamic shapes
            self.step_model = torch.compile(self.ddp_model, dynamic=True)
        self.train_stats, self.dev_stats = train.stats, (dev.stats if dev else None)

    # --- the loop -------------------------------------------------------------------------------

    def _epoch_batches(self, epoch: int) -> list[Batch]:
        batches = batches_for_epoch(self.train_data, self.cfg.batch_tokens, self.cfg.seed, epoch)
        if self.dist.world > 1:
            batches = shard_batches(batches, self.dist.rank, self.dist.world)
        return batches

    def _steps_per_epoch(self) -> int:
        return max(1, len(self._epoch_batches(0)) // self.cfg.accum_steps)

    def _total_steps(self, steps_per_epoch: int) -> int | None:
        limits = []
        if self.cfg.max_steps:
            limits.append(self.cfg.max_steps)
        if self.cfg.epochs:
            limits.append(math.ceil(self.cfg.epochs * steps_per_epoch))
        return min(limits) if limits else None

    def _limit_reached(self, total_steps: int | None) -> str | None:
        if total_steps is not None and self.state.step >= total_steps:
            return "max_steps" if self.cfg.max_steps and self.state.step >= self.cfg.max_steps else "epochs"
        if self.cfg.max_time and self.state.elapsed >= self.cfg.max_time:
            return "max_time"
        return None

    def _train_step(self, micro: list[Batch]) -> tuple[Tensor, Tensor, int]:
        """One optimizer step over micro-batches; returns (summed loss, grad norm, target tokens).

        The loss and the norm stay on the device (0-dim tensors): the loop reads them once per log interval,
        so a GPU is never made to wait for the host between micro-batches.
        """
        model, cfg, scaler = self.step_model, self.cfg, self.amp.scaler
        ntok = sum(b.n_tgt_tokens for b in micro)
        loss_total = torch.zeros((), device=self.device)  # () summed loss of the step
        for i, batch in enumerate(micro):
            src, tgt_in, tgt_out = (t.to(self.device, non_blocking=True) for t in (batch.src, batch.tgt_in, batch.tgt_out))
            sync = i == len(micro) - 1 or self.dist.world == 1
            ctx = self.ddp_model.no_sync() if not sync else contextlib.nullcontext()
            with ctx:
                with self.autocast:
                    loss = token_loss(model, src, tgt_in, tgt_out, self.config.pad_id, cfg.label_smoothing)
                scaled = loss / ntok
                (scaler.scale(scaled) if scaler is not None else scaled).backward()
            loss_total += loss.detach()
        if scaler is not None:
            scaler.unscale_(self.optimizer)  # clip the true gradients
        if cfg.clip_norm > 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.params, cfg.clip_norm)
        else:
            grad_norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in self.params if p.grad is not None]))
        lr = learning_rate(self.state.step + 1, cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        if scaler is not None:
            scaler.step(self.optimizer)  # skipped when the scaled gradients overflowed
            scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss_total, grad_norm.detach(), ntok

    def _should_stop_all(self) -> bool:
        """True on every rank when any rank was asked to stop."""
        flag = self._stop_requested
        if dist.is_initialized():
            t = torch.tensor([1.0 if flag else 0.0], device=self.device if self.device.type == "cuda" else "cpu")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            flag = bool(t.item() > 0)
            if flag and self.stop_reason is None:
                self.stop_reason = "interrupted"
        return flag

    def run(self) -> dict[str, Any]:
        """Train until a limit, early stopping or a stop request; returns the final event."""
        self.setup()
        cfg, st = self.cfg, self.state
        steps_per_epoch = self._steps_per_epoch()
        total = self._total_steps(steps_per_epoch)
        self.emit("start", resumed=self._resume_from is not None, device=str(self.device), world_size=self.dist.world,
                  precision=self.amp.precision, precision_note=precision_note(self.amp.precision, self.device.type),
                  parameters=count_parameters(self.model), model=self.config.to_dict(),
                  train_pairs=len(self.train_data), dev_pairs=len(self.dev_pairs),
                  skipped=self._skip_counts(), steps_per_epoch=steps_per_epoch, total_steps=total,
                  padding_fraction=round(padding_fraction(self._epoch_batches(st.epoch)), 4),
                  config=cfg.to_dict(), out=str(self.out))
        reason = self._limit_reached(total)
        window_tokens, window_steps, window_start = 0, 0, time.perf_counter()
        window_loss = torch.zeros((), device=self.device)  # () sum of the window's per-token step losses
        last_tick = time.perf_counter()
        while reason is None:
            batches = self._epoch_batches(st.epoch)
            if len(batches) < cfg.accum_steps:
                raise TrainingError(f"an epoch has only {len(batches)} batches, fewer than accum_steps "
                                    f"({cfg.accum_steps}); lower --accum-steps or --batch-tokens")
            if self.dist.world > 1 and st.batch_index == 0 and st.epoch == 0:
                self._record_shard(batches)
            self.model.train()
            with Prefetcher(batches, st.batch_index, cfg.accum_steps, pin=self.device.type == "cuda") as ahead:
                for micro in ahead:  # the next steps' batches are collated in a background thread meanwhile
                    try:
                        loss, grad_norm, ntok = self._train_step(micro)
                    except torch.OutOfMemoryError:
                        raise TrainingError(self._out_of_memory(micro)) from None
                    st.batch_index += cfg.accum_steps
                    st.step += 1
                    st.tokens += ntok * self.dist.world
                    now = time.perf_counter()
                    st.elapsed += now - last_tick
                    last_tick = now
                    window_tokens += ntok * self.dist.world
                    window_loss += loss / ntok
                    window_steps += 1
                    if st.step % cfg.log_every == 0 or st.step == 1:  # the one host read of the interval
                        dt = max(now - window_start, 1e-9)
                        self.emit("step", loss=round(float(window_loss) / window_steps, 5),
                                  lr=learning_rate(st.step, cfg), grad_norm=round(float(grad_norm), 4),
                                  tokens_per_s=round(window_tokens / dt, 1),
                                  eta_s=self._eta(total, dt / window_steps), elapsed_s=round(st.elapsed, 2),
                                  total_steps=total)
                        window_tokens, window_steps, window_start = 0, 0, time.perf_counter()
                        window_loss = torch.zeros((), device=self.device)
                    reason = self._limit_reached(total)
                    stop = self._should_stop_all()
                    if st.step % cfg.eval_every == 0 or (reason is not None) or stop:
                        early = self._evaluate_and_save(final=reason is not None or stop)
                        last_tick = time.perf_counter()
                        if early and reason is None:
                            reason = "early_stop"
                    if stop:
                        reason = self.stop_reason or "interrupted"
                    if reason is not None:
                        break
            if reason is None:
                st.epoch += 1
                st.batch_index = 0
        end = self.emit_end(reason)
        if dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
        return end

    def emit_end(self, reason: str) -> dict[str, Any]:
        st = self.state
        end = {"event": "end", "reason": reason, "step": st.step, "epoch": st.epoch, "best_bleu": st.best_bleu,
               "best_step": st.best_step, "elapsed_s": round(st.elapsed, 2),
               "last": str(self.out / "last"), "best": str(self.out / "best") if (self.out / "best").exists() else None}
        if self.memory_data is not None and end["best"]:  # the best model's scores before and after, as its card
            end["memory"] = json.loads((self.out / "best" / "card.json").read_text(encoding="utf-8")).get("memory")
        self.emit("end", **{k: v for k, v in end.items() if k not in ("event", "step", "epoch")})
        return end

    def _eta(self, total: int | None, sec_per_step: float) -> float | None:
        etas = []
        if total is not None:
            etas.append(max(0, total - self.state.step) * sec_per_step)
        if self.cfg.max_time:
            etas.append(max(0.0, self.cfg.max_time - self.state.elapsed))
        return round(min(etas), 1) if etas else None

    def _skip_counts(self) -> dict[str, int]:
        s = self.train_stats
        return {"empty": s.skipped_empty, "long": s.skipped_long + self.train_data.dropped_long}

    def _record_shard(self, batches: list[Batch]) -> None:
        """Write which batches this rank sees (first few fingerprints), to verify sharding."""
        shard_dir = self.out / "shards"
        shard_dir.mkdir(parents=True, exist_ok=True)
        prints = [int(b.src.sum()) * 1000003 + int(b.tgt_out.sum()) for b in batches[:20]]
        (shard_dir / f"rank{self.dist.rank}.json").write_text(
            json.dumps({"rank": self.dist.rank, "world_size": self.dist.world, "batches": len(batches),
                        "fingerprints": prints}), encoding="utf-8")

    # --- evaluation and checkpoints ---------------------------------------------------------------

    def _evaluate_and_save(self, final: bool) -> bool:
        """Evaluate on dev (rank 0), keep best and last; returns True when patience ran out."""
        st, cfg = self.state, self.cfg
        early = False
        if self.dist.main:
            paused = time.perf_counter()
            if self.dev_pairs:  # eval_start, eval_progress..., eval: a window can say what the pause is
                self.emit("eval_start", sentences=len(decoded_pairs(self.dev_pairs, cfg)))
            metrics = self.evaluate() if self.dev_pairs else {}
            improved = bool(metrics) and metrics["bleu"] > st.best_bleu
            if metrics:
                st.last_eval_step = st.step
                if improved:
                    st.best_bleu, st.best_step, st.evals_since_best = metrics["bleu"], st.step, 0
                else:
                    st.evals_since_best += 1
                early = cfg.patience > 0 and st.evals_since_best >= cfg.patience
                self.emit("eval", **metrics, best=improved, best_bleu=st.best_bleu, best_step=st.best_step)
            card, files = self._card(metrics), self._kept_files()
            if improved or (not self.dev_pairs and final):
                write_model_atomically(self.out / "best", self.model, self.tokenizers, card, files=files)
            if cfg.keep_checkpoints and metrics:
                self._keep_snapshot(card)
            self._save_last(card)
            if (self.out / "best").is_dir():  # an earlier best: its card says how far the run has gone since
                note_run_steps(self.out / "best", st.step)
            self.emit("checkpoint", last=str(self.out / "last"),
                      best=str(self.out / "best") if (self.out / "best").exists() else None, best_step=st.best_step,
                      pause_s=round(time.perf_counter() - paused, 2))  # evaluating and saving: not in elapsed_s
        if dist.is_initialized():
            flag = torch.tensor([1.0 if early else 0.0], device=self.device if self.device.type == "cuda" else "cpu")
            dist.broadcast(flag, 0)
            early = bool(flag.item() > 0)
        return early

    def _save_last(self, card: dict[str, Any]) -> None:
        """The resume point: model, optimizer, RNG, loop state and (fp16) the gradient scaler's state."""
        state = dict(dataclasses.asdict(self.state), grad_scaler=self.amp.state_dict())
        save_checkpoint(self.out / "last", self.model, self.tokenizers, card, self.optimizer, state,
                        self._kept_files())

    def _out_of_memory(self, micro: list[Batch]) -> str:
        """After a step ran out of GPU memory: keep the run (the last checkpoint, rewritten at this step, which
        the failed step did not change), probe the largest batch that fits, and return the sentence."""
        self.optimizer.zero_grad(set_to_none=True)
        free_cached_memory()
        if self.dist.main:
            self._save_last(self._card({}))
        failed = max(micro, key=padded_tokens)

        def fits(rows: int) -> None:
            part = first_rows(failed, rows, self.config.pad_id)
            try:
                with self.autocast:
                    loss = token_loss(self.step_model, part.src.to(self.device), part.tgt_in.to(self.device),
                                      part.tgt_out.to(self.device), self.config.pad_id, self.cfg.label_smoothing)
                loss.backward()
            finally:
                self.optimizer.zero_grad(set_to_none=True)

        rows = largest_fitting_rows(fits, failed.rows)
        fit = padded_tokens(first_rows(failed, rows, self.config.pad_id)) if rows else 0
        return out_of_memory_sentence(padded_tokens(failed), fit, str(self.out / "last"))

    def _keep_snapshot(self, card: dict[str, Any]) -> None:
        """Save this evaluated model as checkpoints/step-NNNNNNN and drop all but the newest N."""
        write_model_atomically(self.out / CHECKPOINTS_DIR / f"step-{self.state.step:07d}", self.model,
                               self.tokenizers, card, files=self._kept_files())
        for old in snapshots(self.out)[: -self.cfg.keep_checkpoints]:
            shutil.rmtree(old, ignore_errors=True)

    def evaluate(self) -> dict[str, Any]:
        """Dev loss and perplexity (teacher forced), BLEU and chrF of decodes, samples, probe attention."""
        metrics = evaluate_dev(self.model, self.tokenizers, self.dev_data, self.dev_pairs, self.cfg, self.device,
                               self.autocast, lambda done, total: self.emit("eval_progress", done=done, total=total))
        if self.memory_data is not None:  # the memory's domain (the dev above) and general text, with the parent's
            general = bleu_chrf(self.model, self.tokenizers, self.memory_data.general_dev, self.cfg)
            metrics["memory_scores"] = before_after(self.memory_before, metrics, general, self.state.step)
        return metrics

    def _card(self, metrics: dict[str, Any]) -> dict[str, Any]:
        cfg, st = self.cfg, self.state
        data = {"train": cfg.train or [cfg.train_src, cfg.train_tgt], "dev": cfg.dev or ([cfg.dev_src, cfg.dev_tgt] if cfg.dev_src else None),
                "train_pairs": len(self.train_data), "dev_pairs": len(self.dev_pairs),
                "reverse": cfg.reverse, "source_words": self._source_words}
        card = {
            "name": self.out.name, "src_lang": self.config.src_lang, "tgt_lang": self.config.tgt_lang,
            "data": data, "fine_tuned_from": cfg.from_model,
            "training": {"steps": st.step, "epochs": round(st.step / max(1, self._steps_per_epoch_cached()), 3),
                         "target_tokens": st.tokens, "wall_time_s": round(st.elapsed, 1),
                         "device": str(self.device), "hardware": hardware_name(self.device), "world_size": self.dist.world,
                         "precision": self.amp.precision,
                         "torch": torch.__version__},
            "parameters": count_parameters(self.model),
        }
        if cfg.from_model:
            card["parent"] = str(parent_model(cfg))  # the Models tab's "Back to the parent model"
        if self.kept_glossary is not None:
            card["glossary"] = self.kept_glossary.card_note()
        if self.memory_data is not None and metrics.get("memory_scores"):
            card["memory"] = {**self.memory_data.card(), "scores": metrics["memory_scores"]}
        if metrics:
            card["dev"] = {k: metrics[k] for k in ("bleu", "chrf", "dev_loss", "dev_ppl") if k in metrics}
            card["dev"]["step"] = st.step
        return card

    def _kept_files(self) -> list[Path]:
        """What each model folder of the run carries besides the model: the parent's glossary, if kept."""
        return [self.kept_glossary.path] if self.kept_glossary is not None else []

    def _steps_per_epoch_cached(self) -> int:
        if not hasattr(self, "_spe"):
            self._spe = self._steps_per_epoch()
        return self._spe


def token_loss(model: torch.nn.Module, src: Tensor, tgt_in: Tensor, tgt_out: Tensor, pad_id: int,
               label_smoothing: float) -> Tensor:
    """Summed label-smoothed cross-entropy of the non-padding target tokens (a training step's loss).

    Only those positions go through the output projection (vocabulary-sized, the largest product
    of a small model), so the padding of a batch costs nothing there.
    """
    keep = tgt_out != pad_id  # (B, T)
    logits = model(src, tgt_in, keep)  # (N, V)
    return F.cross_entropy(logits.float(), tgt_out[keep], label_smoothing=label_smoothing, reduction="sum")


def train(cfg: TrainConfig, emit: Callable[[Event], None] | None = None, resume: bool = False,
          segments: SegmentReader | None = None) -> dict[str, Any]:
    """Convenience wrapper: build a Trainer and run it."""
    return Trainer(cfg, emit, resume, segments).run()


__all__ = ["Trainer", "TrainingError", "train", "resolve_device", "ConfigError"]
