"""Decoding as functions over a model: greedy, sampling and beam search.

Each search is a generator over a batch of sources that yields, per target position, the list of
`Step`s (results.py) of the rows that chose a token, each carrying every layer's and head's
cross-attention for it. Beam search keeps back-pointers so each finished hypothesis gets its own
attention history, traced through the beam. The searches know ids only: pieces and text are named
later (naming.py), and `pipeline.Search` is the one place that picks a search and collects its
`Hypothesis`es. Work runs under `torch.inference_mode()` only between yields, so a consumer that stops
early leaks no state.

Forced prefix: every search takes an optional `prefix` (target token ids, no </s>): the first
len(prefix) steps feed these tokens instead of choosing, one step at a time on the cache, and report
them like any other step (their real log-probs, alternatives and attention); the search then goes
on freely. It is an argument, not a `DecodeConfig` field, because it belongs to one input while a
DecodeConfig is a reusable set of options. The max length is raised to leave at least one free step.
A prefix is one list for every row, or one list per row (`Prefix`): a document's repairs force a
different prefix into each sentence of one batch (documents/constraints.py), and a row's result is the
same as alone (tests/core/decoding/test_row_prefixes.py).

The searches encode their sources and then talk only to a `StepBackend` (backend.py): it steps the
decoder, picks tokens and reorders rows, wherever that runs. Interventions (head masks, mean
ablation) are options of the reference backend (backends/reference.py), not of the searches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Literal, Sequence

import numpy as np
import torch
from torch import Tensor

from nmt_desktop.core.adaptation.memory_use import MemoryUse
from nmt_desktop.core.adaptation.mixture import KnnMixture, Mixed
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.step_backend import DecoderState, StepBackend
from nmt_desktop.core.decoding.backends.choice import choose_backend
from nmt_desktop.core.decoding.results import Alternative, Hypothesis, Step
from nmt_desktop.core.decoding.selection import beam_candidates, chosen_and_alternatives, log_probs
from nmt_desktop.core.model.transformer import Transformer

Prefix = Sequence[int] | Sequence[Sequence[int]]  # one forced prefix for every row, or one per row


def step_list(index: int, rows: Sequence[int], token_ids: list[int], logprobs: list[float], alt_ids: np.ndarray,
              alt_logprobs: np.ndarray, cross: np.ndarray | None, self_attn: np.ndarray | None, eos_id: int,
              prefixes: list[list[int]] | None = None) -> list[Step]:
    """One position's `Step`s, one per reporting row (alt_ids / alt_logprobs (R, k), cross (R, L, H, S),
    self_attn (R, L, H, index + 1)); each Step's arrays are views of the position's own fresh arrays."""
    return [Step(index, token, "", logprobs[j], alternatives(alt_ids[j], alt_logprobs[j]),
                 None if cross is None else cross[j], None if self_attn is None else self_attn[j],
                 None if prefixes is None else prefixes[j], token == eos_id, row=rows[j])
            for j, token in enumerate(token_ids)]


def alternatives(ids: np.ndarray, logprobs: np.ndarray) -> list[Alternative]:
    """A position's top-k (k,) as `Alternative`s, a masked token's (-inf) dropped; pieces are named later."""
    return [Alternative(int(i), "", float(np.exp(lp))) for i, lp in zip(ids, logprobs) if np.isfinite(lp)]


def length_normalise(logprob: float, length: int, alpha: float) -> float:
    """GNMT length penalty: logprob / ((5 + length) / 6) ** alpha."""
    return logprob / (((5.0 + length) / 6.0) ** alpha) if alpha else logprob


def masked_ids(index: int, cfg: DecodeConfig, eos_id: int, pad_id: int) -> tuple[int, int]:
    """The ids never chosen at step `index` (-1: none): <pad> is never generated (as in transformers'
    Marian generation), </s> not before min_length."""
    return pad_id if pad_id != eos_id else -1, eos_id if index < cfg.min_length else -1


def _sample(logprobs: Tensor, cfg: DecodeConfig, generator: torch.Generator) -> Tensor:
    """Draw one token per row from tempered, top-k / top-p filtered log-probs (R, V) -> (R,)."""
    scores = logprobs / cfg.temperature
    if cfg.top_k and cfg.top_k < scores.shape[-1]:
        kth = torch.topk(scores, cfg.top_k, dim=-1).values[:, -1:]  # (R, 1)
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if cfg.top_p < 1.0:
        sorted_scores, order = torch.sort(scores, dim=-1, descending=True)
        probs = torch.softmax(sorted_scores, dim=-1)
        drop = probs.cumsum(-1) - probs >= cfg.top_p  # keep the smallest prefix reaching top_p
        sorted_scores = sorted_scores.masked_fill(drop, float("-inf"))
        scores = torch.full_like(scores, float("-inf")).scatter(-1, order, sorted_scores)
    probs = torch.softmax(scores, dim=-1)
    return torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(logprobs.device)


def _attn(attention: Tensor | None) -> np.ndarray | None:
    """(R, L, H, S) attention of the newest position -> float32 numpy."""
    return None if attention is None else attention.float().cpu().numpy()


def _prepare(model: Transformer, backend: StepBackend, src: Tensor, cfg: DecodeConfig, rows_per_source: int,
             max_len: int) -> tuple[DecoderState, Tensor, np.ndarray | None]:
    """Encode once, replicate each source `rows_per_source` times, and start the backend's state;
    returns it, the first tokens (B,) and the encoder self-attention when asked for."""
    enc = model.encode(src, need_weights=cfg.self_attention)
    enc_attn = None if enc.self_attention is None else enc.self_attention.float().cpu().numpy()
    if rows_per_source > 1:
        idx = torch.arange(src.shape[0], device=src.device).repeat_interleave(rows_per_source)
        enc.memory = enc.memory.index_select(0, idx)
        if enc.src_mask is not None:
            enc.src_mask = enc.src_mask.index_select(0, idx)
    state = backend.start(enc, capacity=max_len + 1)
    start = torch.full((enc.memory.shape[0],), model.config.decoder_start_id, dtype=torch.long, device=src.device)
    return state, start, enc_attn


def max_target_lengths(model: Transformer, src: Tensor, cfg: DecodeConfig,
                       prefixes: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Each source's own target limit a * (its real length) + b, within max_positions.

    Per row, so a sentence decodes the same in a batch as alone (longer batch-mates do not raise
    its limit). A row's forced prefix raises its limit to len(prefix) + 1 where needed.
    """
    src_lens = (src != model.config.pad_id).sum(-1).tolist()
    prefixes = prefixes if prefixes is not None else [[] for _ in src_lens]
    return [max(min(len(p) + 1, model.config.max_positions - 1), cfg.max_length(int(n), model.config.max_positions))
            for n, p in zip(src_lens, prefixes)]


def row_prefixes(model: Transformer, prefix: Prefix | None, rows: int) -> list[list[int]]:
    """The forced prefix of each of `rows` rows: `prefix` for all (a list of ids) or one list per row;
    ValueError when one holds </s>, leaves the model no free position, or the count is not `rows`."""
    if prefix is not None and len(prefix) and not isinstance(prefix[0], (int, np.integer)):
        if len(prefix) != rows:
            raise ValueError(f"{rows} sources but {len(prefix)} forced prefixes")
        return [_check_prefix(model, p) for p in prefix]  # type: ignore[arg-type]
    one = _check_prefix(model, prefix)  # type: ignore[arg-type]
    return [list(one) for _ in range(rows)]


def _check_prefix(model: Transformer, prefix: Sequence[int] | None) -> list[int]:
    prefix = [int(t) for t in prefix or ()]
    if model.config.eos_id in prefix:
        raise ValueError("a forced prefix cannot contain </s>")
    if len(prefix) >= model.config.max_positions - 1:
        raise ValueError(f"a forced prefix of {len(prefix)} tokens leaves no room in this model's "
                         f"{model.config.max_positions} positions")
    return prefix


def adapted_step(backend: StepBackend, state: DecoderState, tokens: Tensor, cfg: DecodeConfig,
                 knn: KnnMixture | None, sentences: Tensor | None) -> tuple[Tensor, Tensor | None, Tensor | None,
                                                                        Mixed | None]:
    """One backend step, its logits (R, V) mixed with the memory's neighbours (core/adaptation) where `knn` is
    given (`sentences` (R,): each row's batch index); without it the backend's own logits, untouched.
    Returns the logits, the cross- and self-attention and the `Mixed` that says which memory each token used."""
    out = backend.step(state, tokens, cfg.attention, cfg.self_attention, knn is not None)
    if knn is None:
        return out.logits, out.cross_attention, out.self_attention, None
    mixed = knn.mix(out.logits, out.hidden, sentences)
    return mixed.logits, out.cross_attention, out.self_attention, mixed


def greedy_or_sample(model: Transformer, src: Tensor, cfg: DecodeConfig, prefix: Prefix | None = None,
                     backend: StepBackend | None = None, knn: KnnMixture | None = None) -> Iterator[list[Step]]:
    """Greedy decoding (or sampling when cfg.sample) of a batch of sources (B, S).

    Finished rows are dropped from the batch, so a long sentence does not make short ones pay.
    `prefix`: target ids forced before the search goes on, on every row or per row (see the module doc).
    `backend`: where the steps run (backend_choice.choose_backend when None).
    `knn`: the memory's neighbours mixed into every step (core/adaptation; None: the plain model).
    Returns (as the generator's value) the encoder self-attention when cfg.self_attention.
    """
    eos, pad = model.config.eos_id, model.config.pad_id
    backend = backend if backend is not None else choose_backend(model)
    prefixes = row_prefixes(model, prefix, src.shape[0])
    max_lens = max_target_lengths(model, src, cfg, prefixes)
    max_len = max(max_lens)
    generator = torch.Generator()  # private: never reseed torch's global generator
    if cfg.seed is not None:
        generator.manual_seed(cfg.seed)
    else:
        generator.seed()
    with torch.inference_mode():
        state, tokens, enc_attn = _prepare(model, backend, src, cfg, 1, max_len)
    alive = list(range(src.shape[0]))  # batch rows still decoding, in state order
    for index in range(max_len):
        with torch.inference_mode():
            rows = None if knn is None else torch.tensor(alive, device=src.device)  # (R,) batch index per row
            logits, cross, self_attn, mixed = adapted_step(backend, state, tokens, cfg, knn, rows)
            forced = [prefixes[row][index] if index < len(prefixes[row]) else None for row in alive]
            k = max(1, min(cfg.alternatives, logits.shape[-1]))
            if all(f is None for f in forced) and not cfg.sample:
                tokens, chosen, alt_ids, alt_lp = backend.pick(logits, k, masked_ids(index, cfg, eos, pad))
            else:
                logprobs = log_probs(logits, masked_ids(index, cfg, eos, pad))  # (R, V)
                free = _sample(logprobs, cfg, generator) if cfg.sample else logprobs.argmax(-1)  # (R,)
                given = torch.tensor([-1 if f is None else f for f in forced], dtype=torch.long,
                                     device=logprobs.device)  # (R,)
                tokens = torch.where(given >= 0, given, free)  # (R,) a forced row's token, else the chosen one
                tokens, chosen, alt_ids, alt_lp = chosen_and_alternatives(logprobs, tokens, k, greedy=False)
            steps = step_list(index, alive, tokens.tolist(), chosen[:, 0].tolist(), alt_ids, alt_lp,
                              _attn(cross), _attn(self_attn), eos)
            if mixed is not None:
                for step, use in zip(steps, mixed.uses(range(len(steps)), [step.token_id for step in steps])):
                    step.memory = use
        yield steps
        # Rows go on unless they chose </s> or reached their own max length (cut off).
        keep = [i for i, (step, row) in enumerate(zip(steps, alive))
                if step.token_id != eos and index + 1 < max_lens[row]]
        if not keep:
            break
        tokens, alive = keep_rows(backend, state, tokens, alive, keep)
    return enc_attn


def keep_rows(backend: StepBackend, state: DecoderState, tokens: Tensor, alive: list[int], keep: list[int]
              ) -> tuple[Tensor, list[int]]:
    """Drop the finished rows of a greedy-like search: keep positions `keep` of the state, the next tokens
    (R,) and the batch indices `alive`; returns the new tokens and `alive`."""
    if len(keep) == len(alive):
        return tokens, alive
    keep_t = torch.tensor(keep, device=tokens.device)
    with torch.inference_mode():
        backend.reorder(state, keep_t)
    return tokens.index_select(0, keep_t), [alive[i] for i in keep]


def hypothesis_of(steps: list[Step], cfg: DecodeConfig, eos_id: int, score: float | None = None) -> Hypothesis:
    """A row's steps, oldest first, as one `Hypothesis` (attention still as wide as the search's batch)."""
    ids = [s.token_id for s in steps]
    lps = [s.logprob for s in steps]
    finished = bool(ids) and ids[-1] == eos_id
    if score is None:
        score = length_normalise(sum(lps), len(ids), cfg.length_penalty)
    cross = None
    if steps and steps[0].cross_attention is not None:
        cross = np.stack([s.cross_attention for s in steps], axis=2)  # (L, H, T, S)
    self_attn = None
    if steps and steps[0].self_attention is not None:
        T = len(steps)
        L, H = steps[0].self_attention.shape[:2]
        self_attn = np.zeros((L, H, T, T), np.float32)
        for t, s in enumerate(steps):
            self_attn[:, :, t, : t + 1] = s.self_attention
    memory = [s.memory for s in steps] if any(s.memory is not None for s in steps) else None
    return Hypothesis(ids, lps, score, [s.alternatives for s in steps], cross, self_attn, finished, memory=memory)


@dataclass
class _BeamRecord:
    """One step of beam search for all B*K rows: chosen tokens and where they came from."""

    tokens: list[int]  # (B*K,)
    parents: list[int]  # (B*K,) row index in the previous step
    logprobs: list[float]  # (B*K,) log-prob of the token
    alt_ids: np.ndarray  # (B*K, k)
    alt_logprobs: np.ndarray  # (B*K, k)
    cross: np.ndarray | None  # (B*K, L, H, S) attention when the row's token was chosen (parent's query)
    self_attn: np.ndarray | None  # (B*K, L, H, t + 1)
    query_cross: np.ndarray | None = None  # (B*K, L, H, S) attention of each row decoded at this step
    memory: list[MemoryUse | None] | None = None  # (B*K,) how each row's token used the memory; None: no memory


@dataclass
class _Finished:
    score: float
    step: int  # index of the record holding its last token
    row: int  # row within that record (before the eos token, which is stored separately)
    eos_logprob: float | None  # log-prob of the closing </s>, None if cut off at max length
    eos_alts: tuple[np.ndarray, np.ndarray] | None = None
    eos_cross: np.ndarray | None = None
    eos_self: np.ndarray | None = None
    eos_memory: MemoryUse | None = None


@dataclass
class BeamNode:
    """One candidate expansion of beam search (a node of the beam tree).

    status: "kept" (went on in the beam), "finished" (</s> taken into the finished list), "pruned"
    (among the top 2K candidates but not kept), "forced" (a forced-prefix token, kept).
    """

    id: int  # index in BeamState.tree
    sentence: int  # batch index b
    step: int  # target position of `token`
    token: int
    score: float  # cumulative log-probability of the partial hypothesis ending in `token`
    parent: int | None  # node id of the previous token; None at step 0
    status: Literal["kept", "finished", "pruned", "forced"]
    query_row: int  # row (of the B*K decoded at `step`) whose output scored this token


@dataclass
class BeamState:
    """Everything beam search knows; `results` is filled when the search ends.

    `tree` records every expansion (see `BeamNode`); `node_tokens` / `node_attention` read a
    node's partial hypothesis back through the parent pointers.
    """

    records: list[_BeamRecord] = field(default_factory=list)
    finished: list[list[_Finished]] = field(default_factory=list)
    results: list[list[Hypothesis]] = field(default_factory=list)
    encoder_attention: np.ndarray | None = None
    tree: list[BeamNode] = field(default_factory=list)
    row_nodes: list[list[int | None]] = field(default_factory=list)  # per step: node id of each B*K row

    def _add(self, b: int, step: int, token: int, score: float, query_row: int, status: str) -> int:
        prev = self.row_nodes[step - 1][query_row] if step > 0 else None
        node = BeamNode(len(self.tree), b, step, token, score, prev, status, query_row)  # type: ignore[arg-type]
        self.tree.append(node)
        return len(self.tree) - 1

    def node_path(self, node_id: int) -> list[BeamNode]:
        """The nodes from step 0 to `node_id`, oldest first."""
        path = []
        node: int | None = node_id
        while node is not None:
            path.append(self.tree[node])
            node = self.tree[node].parent
        return path[::-1]

    def node_tokens(self, node_id: int) -> list[int]:
        """Token ids of the partial hypothesis ending at `node_id`."""
        return [n.token for n in self.node_path(node_id)]

    def node_attention(self, node_id: int) -> np.ndarray | None:
        """Cross-attention rows (L, H, t, S) of the partial hypothesis ending at `node_id`."""
        path = self.node_path(node_id)
        if self.records[0].query_cross is None:
            return None
        return np.stack([self.records[n.step].query_cross[n.query_row] for n in path], axis=2)


def beam_search(model: Transformer, src: Tensor, cfg: DecodeConfig, state: BeamState,
                prefix: Prefix | None = None, backend: StepBackend | None = None,
                knn: KnnMixture | None = None) -> Iterator[list[Step]]:
    """Beam search over a batch (B, S); yields the best live hypothesis of each sentence per step (with its
    own earlier steps where it is not the one the sentence's previous step reported: `Step.earlier_steps`).

    A sentence is done when it has `beam_size` finished hypotheses (fairseq's rule) or the max
    length is reached; only </s> candidates ranked within the beam size can finish a hypothesis,
    so beam size 1 equals greedy decoding. On return `state.results[b]` holds the n-best `Hypothesis`es
    and `state.tree` every expansion. `prefix`: forced target ids, for every sentence or per sentence (one
    live beam while forced).
    `backend`, `knn`: as in `greedy_or_sample`.
    """
    B, K, eos = src.shape[0], cfg.beam_size, model.config.eos_id
    backend = backend if backend is not None else choose_backend(model)
    prefixes = row_prefixes(model, prefix, B)
    max_lens = max_target_lengths(model, src, cfg, prefixes)
    max_len = max(max_lens)
    with torch.inference_mode():
        decoder, tokens, state.encoder_attention = _prepare(model, backend, src, cfg, K, max_len)
        scores = torch.full((B, K), float("-inf"), device=src.device)
        scores[:, 0] = 0.0  # only one live beam at the start, so no duplicates
    state.finished = [[] for _ in range(B)]
    done = [False] * B
    row_tokens: list[list[int]] = [[] for _ in range(B * K)]  # the tokens of each row's hypothesis so far
    shown_rows: list[int | None] = [None] * B  # per sentence: the row it reported at the previous position
    sentences = torch.arange(B, device=src.device).repeat_interleave(K)  # (B*K,) each row's sentence
    for index in range(max_len):
        with torch.inference_mode():
            logits, cross_t, self_t, mixed = adapted_step(backend, decoder, tokens, cfg, knn, sentences)
            V = logits.shape[-1]
            k_alt, masked = max(1, min(cfg.alternatives, V)), masked_ids(index, cfg, eos, model.config.pad_id)
            if all(index >= len(p) for p in prefixes):
                top_scores, top_idx, top_lps, alt_ids, alt_lp = backend.beam_candidates(logits, scores, k_alt,
                                                                                        masked)
            else:  # a forced token's log-prob is read from `logprobs` below
                logprobs = log_probs(logits, masked)  # (B*K, V)
                top_scores, top_idx, top_lps, alt_ids, alt_lp = beam_candidates(logprobs, scores, k_alt)
            cross, self_attn = _attn(cross_t), _attn(self_t)
        top_scores_l, top_idx_l, top_lps_l = top_scores.tolist(), top_idx.tolist(), top_lps.tolist()
        new_tokens, new_parents, new_scores, new_lps = [], [], [], []
        row_nodes: list[int | None] = []
        state.row_nodes.append(row_nodes)  # filled below; _add reads only the previous step's list
        for b in range(B):
            beams: list[tuple[int, int, float, float]] = []  # (token, parent row, score, token logprob)
            nodes: list[int | None] = []  # tree node of each kept beam
            if not done[b] and index < len(prefixes[b]):  # forced token: the only live beam is row b*K
                token, parent = prefixes[b][index], b * K
                token_lp = float(logprobs[parent, token])
                s = float(scores[b, 0]) + token_lp
                beams.append((token, parent, s, token_lp))
                nodes.append(state._add(b, index, token, s, parent, "forced"))
            elif not done[b]:
                ranked = list(zip(top_scores_l[b], top_idx_l[b]))
                used = 0
                for rank, (s, flat) in enumerate(ranked):
                    if s == float("-inf"):
                        break
                    used = rank + 1
                    parent, token = b * K + flat // V, flat % V
                    token_lp = top_lps_l[b][rank]  # one gather above, not a tensor index per candidate
                    if token == eos:
                        status = "pruned"
                        if rank < K:
                            status = "finished"
                            state.finished[b].append(_Finished(
                                length_normalise(s, index + 1, cfg.length_penalty), index - 1, parent, token_lp,
                                (alt_ids[parent], alt_lp[parent]),
                                None if cross is None else cross[parent],
                                None if self_attn is None else self_attn[parent],
                                None if mixed is None else mixed.use(parent, eos)))
                        state._add(b, index, token, s, parent, status)
                    else:
                        beams.append((token, parent, s, token_lp))
                        nodes.append(state._add(b, index, token, s, parent, "kept"))
                    if len(beams) == K or len(state.finished[b]) >= K:
                        break
                for s, flat in ranked[used:]:  # the rest of the top 2K: pruned
                    if s != float("-inf"):
                        state._add(b, index, flat % V, s, b * K + flat // V, "pruned")
                if len(state.finished[b]) >= K or not beams:
                    done[b] = True
            while len(beams) < K:  # pad finished sentences / short candidate lists with dead beams
                beams.append((eos, b * K, float("-inf"), 0.0))
                nodes.append(None)
            row_nodes.extend(nodes)
            if not done[b] and index + 1 >= max_lens[b]:
                # This sentence's own max length: its live hypotheses end here, cut off.
                for j, (_, _, s, _) in enumerate(beams):
                    if s != float("-inf"):
                        state.finished[b].append(_Finished(length_normalise(s, index + 1, cfg.length_penalty),
                                                           index, b * K + j, None))
                done[b] = True
            for token, parent, s, lp in beams:
                new_tokens.append(token)
                new_parents.append(parent)
                new_scores.append(s)
                new_lps.append(lp)
        parents_np = np.asarray(new_parents)
        state.records.append(_BeamRecord(
            new_tokens, new_parents, new_lps, alt_ids[parents_np], alt_lp[parents_np],
            None if cross is None else cross[parents_np],
            None if self_attn is None else self_attn[parents_np], cross,
            None if mixed is None else mixed.uses(new_parents, new_tokens)))
        row_tokens = [row_tokens[p] + [t] for p, t in zip(new_parents, new_tokens)]  # each row's hypothesis
        yield _best_live_steps(state, index, B, K, new_scores, row_tokens, shown_rows, eos)
        if all(done):
            break
        with torch.inference_mode():
            parent_t = torch.tensor(new_parents, device=src.device)
            backend.reorder(decoder, parent_t, cross=False)
            scores = torch.tensor(new_scores, device=src.device).view(B, K)
            tokens = torch.tensor(new_tokens, device=src.device)
    # Every sentence is done here: hypotheses alive at a sentence's max length were finalised as
    # cut off in the step that reached it.
    state.results = [_beam_hyps(state, b, cfg, eos) for b in range(B)]


def _trace(state: BeamState, step: int, row: int, sentence: int = 0) -> list[Step]:
    """Follow back-pointers from (step, row) to the start; returns the hypothesis' steps, oldest first
    (`sentence`: their batch index b)."""
    out = []
    while step >= 0:
        rec = state.records[step]
        out.append(Step(step, rec.tokens[row], "", rec.logprobs[row], alternatives(rec.alt_ids[row], rec.alt_logprobs[row]),
                        None if rec.cross is None else rec.cross[row],
                        None if rec.self_attn is None else rec.self_attn[row], row=sentence,
                        memory=None if rec.memory is None else rec.memory[row]))
        row = rec.parents[row]
        step -= 1
    return out[::-1]


def _beam_hyps(state: BeamState, b: int, cfg: DecodeConfig, eos: int) -> list[Hypothesis]:
    ranked = sorted(state.finished[b], key=lambda f: f.score, reverse=True)[: cfg.nbest]
    hyps = []
    for f in ranked:
        steps = _trace(state, f.step, f.row)
        if f.eos_logprob is not None:
            steps.append(Step(f.step + 1, eos, "", f.eos_logprob, alternatives(*f.eos_alts), f.eos_cross, f.eos_self,
                              is_eos=True, memory=f.eos_memory))
        hyps.append(hypothesis_of(steps, cfg, eos, score=f.score))
    return hyps


def _best_live_steps(state: BeamState, index: int, B: int, K: int, scores: list[float],
                     row_tokens: list[list[int]], shown_rows: list[int | None], eos: int) -> list[Step]:
    """Report, for each sentence still searching, its best live hypothesis after this step.

    Where that hypothesis does not extend the one the sentence reported at the previous position (the
    best beam changed), its step carries the hypothesis' own earlier steps (`Step.earlier_steps`), so a
    consumer shows one real hypothesis, never a mix of beams. Traced only then: a few per sentence.
    `shown_rows[b]`: the row sentence b reported at the previous position, updated here."""
    rec = state.records[index]
    rows, picks = [], []
    for b in range(B):
        row = max(range(b * K, b * K + K), key=lambda r: scores[r])
        if scores[row] == float("-inf"):
            continue
        rows.append(b)
        picks.append(row)
    prefixes = [list(row_tokens[row]) for row in picks]
    pick = np.asarray(picks, dtype=np.int64)
    steps = step_list(index, rows, [rec.tokens[r] for r in picks], [rec.logprobs[r] for r in picks],
                      rec.alt_ids[pick] if picks else rec.alt_ids[:0],
                      rec.alt_logprobs[pick] if picks else rec.alt_logprobs[:0],
                      None if rec.cross is None else rec.cross[pick],
                      None if rec.self_attn is None else rec.self_attn[pick], eos, prefixes)
    for step, b, row in zip(steps, rows, picks):
        step.memory = None if rec.memory is None else rec.memory[row]
        parent = rec.parents[row]
        if index > 0 and parent != shown_rows[b]:
            step.earlier_steps = _trace(state, index - 1, parent, b)
        shown_rows[b] = row
    return steps
