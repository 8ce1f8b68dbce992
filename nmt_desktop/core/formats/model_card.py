"""Model cards: the card.json facts of a shipped model and the README.md rendered from them.

A card starts as what training wrote (`Trainer._card`: data, steps, wall time, hardware, dev
metrics at the best step); `export_card` adds what a shipped model must state (architecture,
parameters, stored dtype, data attribution and license); `add_evaluation` records an `eval` run.
`write_card` writes card.json and README.md together, so the two never disagree.
`source_words` summarises how long the training sentences were (card["data"]["source_words"]), so the
app can say when an input is far longer than anything the model learned from.

A run's best/ is written at the evaluation that made it best, so its training facts (`steps`, `epochs`,
tokens, time) are that checkpoint's; `note_run_steps` adds the run's own step count (`run_steps`) at every
later evaluation, and `steps_text` says both ("60 (best checkpoint at step 20, …)"): "Steps 20" alone read
as the length of a 60-step run (issue 41).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from nmt_desktop.core.config import ModelConfig

CARD_FILE = "card.json"
README_FILE = "README.md"
RUN_STEPS = "run_steps"  # card["training"]: the run's steps when the card is a best checkpoint's, earlier


def architecture_summary(config: ModelConfig) -> dict[str, Any]:
    """The architecture facts a reader of the card wants, without the full config."""
    return {
        "type": "Transformer encoder-decoder (Vaswani et al. 2017)",
        "d_model": config.d_model, "heads": config.n_heads,
        "encoder_layers": config.encoder_layers, "decoder_layers": config.decoder_layers,
        "ffn_dim": config.ffn_dim, "norm": f"{config.norm}-norm",
        "activation": config.activation, "vocab_size": config.tgt_vocab_size,
        "shared_vocabulary": config.shared_vocab, "tied_output": config.tie_output,
    }


def export_card(card: dict[str, Any], config: ModelConfig, parameters: int, dtype: str, name: str,
                attribution: str | None = None, license_: str | None = None) -> dict[str, Any]:
    """`card` plus the facts of an exported model folder (a new dict; `card` is not changed)."""
    out = dict(card)
    out["name"] = name
    out["src_lang"], out["tgt_lang"] = config.src_lang, config.tgt_lang
    out["architecture"] = architecture_summary(config)
    out["parameters"] = parameters
    out["weights_dtype"] = dtype
    if attribution:
        out["attribution"] = attribution
    if license_:
        out["license"] = license_
    return out


def add_evaluation(card: dict[str, Any], label: str, result: dict[str, Any], command: str) -> dict[str, Any]:
    """`card` with `result` (an `eval` result) recorded under card["eval"][label] (a new dict)."""
    keep = ("sentences", "beam", "bleu", "chrf", "bleu_tok_lc", "bleu_signature", "chrf_signature")
    if result.get("multi_ref"):
        keep += ("multi_ref", "references")
    out = dict(card)
    evals = dict(out.get("eval") or {})
    evals[label] = {**{k: result[k] for k in keep if k in result}, "command": command}
    out["eval"] = evals
    return out


def source_words(sources: Iterable[str]) -> dict[str, int]:
    """Length in words (whitespace-separated) of the training source sentences: median, 95th and 99th
    percentile, longest. Empty when there are none."""
    lengths = sorted(len(s.split()) for s in sources)
    if not lengths:
        return {}

    def at(q: float) -> int:
        return lengths[min(len(lengths) - 1, int(q * (len(lengths) - 1) + 0.5))]

    return {"median": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": lengths[-1]}


def trained_sentence_words(card: dict[str, Any]) -> int | None:
    """The length, in words, up to which the model's training sentences go (their 99th percentile), from
    card["data"]["source_words"]; None for cards without it (imported OPUS-MT models, older runs)."""
    data = card.get("data") if isinstance(card, dict) else None
    words = data.get("source_words") if isinstance(data, dict) else None
    value = words.get("p99") if isinstance(words, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def note_run_steps(folder: str | os.PathLike, run_steps: int) -> bool:
    """Record in the card of `folder` (a run's best/) that the run has trained `run_steps` steps, when that is
    more than the checkpoint's own; card.json (and README.md, if there is one) rewritten atomically. Returns
    whether the card changed."""
    folder = Path(folder)
    try:
        card = json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    training = card.get("training") if isinstance(card, dict) else None
    steps = training.get("steps") if isinstance(training, dict) else None
    if not isinstance(steps, int) or run_steps <= steps or training.get(RUN_STEPS) == run_steps:
        return False
    training[RUN_STEPS] = run_steps
    write_card(folder, card, readme=(folder / README_FILE).exists())
    return True


def steps_text(training: dict[str, Any]) -> str:
    """The card's steps as a person reads them: "20 (5 epochs)", or, for a run's best checkpoint before the run's
    end, "60 (best checkpoint at step 20, 5 epochs)"."""
    steps, epochs, run = training.get("steps"), training.get("epochs"), training.get(RUN_STEPS)
    at = f"{_n(epochs)} epochs" if epochs else ""
    if isinstance(run, int) and isinstance(steps, int) and run > steps:
        return f"{_n(run)} (best checkpoint at step {_n(steps)}" + (f", {at})" if at else ")")
    return _n(steps) + (f" ({at})" if at else "")


def _fmt_seconds(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return str(seconds)
    minutes = int(round(seconds / 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def _n(value: Any) -> str:
    """A number with thousands separators; anything else as text (cards are free-form)."""
    return f"{value:,}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def render_readme(card: dict[str, Any]) -> str:
    """A short README for the model folder, from its card (any free-form card renders)."""
    name = card.get("name", "model")
    src, tgt = card.get("src_lang") or "?", card.get("tgt_lang") or "?"
    lines = [f"# {name}: {src} -> {tgt}", ""]
    arch = _dict(card.get("architecture"))
    if arch.keys() >= {"type", "d_model", "heads", "encoder_layers", "decoder_layers", "ffn_dim", "norm",
                       "activation", "shared_vocabulary", "vocab_size"}:
        lines += [f"A {arch['type']}: d_model {arch['d_model']}, {arch['heads']} heads, "
                  f"{arch['encoder_layers']} encoder + {arch['decoder_layers']} decoder layers, "
                  f"FFN {arch['ffn_dim']}, {arch['norm']}, {arch['activation']}, "
                  f"{'shared' if arch['shared_vocabulary'] else 'separate'} byte-level BPE vocabulary of "
                  f"{_n(arch['vocab_size'])}. {_n(card.get('parameters', 0))} parameters, stored as "
                  f"{card.get('weights_dtype', 'float32')}.", ""]
    data = card.get("data") or {}
    if data or card.get("attribution"):
        lines += ["## Data", ""]
        if card.get("attribution"):
            lines.append(f"Training data: {card['attribution']}"
                         + (f" (license: {card['license']})." if card.get("license") else "."))
        if isinstance(data, str):
            lines.append(data)
        elif isinstance(data, dict):
            train = data.get("train")
            lines.append(f"Train: `{train if isinstance(train, str) else ' + '.join(map(str, train or []))}`"
                         f" ({_n(data.get('train_pairs', 0))} pairs); dev: `{data.get('dev')}`"
                         f" ({_n(data.get('dev_pairs', 0))} pairs).")
            words = _dict(data.get("source_words"))
            if words.keys() >= {"median", "p99"}:
                lines.append(f"Source sentences: median {words['median']} words, 99% up to {words['p99']} words.")
        lines.append("")
    training = _dict(card.get("training"))
    if training:
        facts = (f"{training.get('epochs', 0)} epochs, {_n(training.get('target_tokens', 0))} target tokens) in "
                 f"{_fmt_seconds(training.get('wall_time_s', 0))} on {training.get('hardware', '?')} "
                 f"(torch {training.get('torch', '?')})")
        run, steps = training.get(RUN_STEPS), training.get("steps", 0)
        if isinstance(run, int) and isinstance(steps, int) and run > steps:
            line = f"The run trained {_n(run)} steps; this model is its best checkpoint, at step {_n(steps)} ({facts}."
        else:
            line = f"{_n(steps)} steps ({facts}."
        lines += ["## Training", "", line, ""]
    averaged = card.get("averaged_from")
    if isinstance(averaged, list) and averaged:
        lines += [f"The weights are the average of {len(averaged)} checkpoints of the training run: "
                  f"{', '.join(map(str, averaged))}.", ""]
    if card.get("glossary"):  # kept from the parent model (core/formats/model_glossary.py)
        lines += [f"Glossary: {card['glossary']}.", ""]
    if card.get("retrain"):
        lines += [f"Retrain: `{card['retrain']}`", ""]
    evals = {k: v for k, v in _dict(card.get("eval")).items() if isinstance(v, dict)}
    if evals:
        lines += ["## Evaluation", "", "| set | sentences | beam | sacreBLEU | chrF | BLEU tok+lc |",
                  "|---|---|---|---|---|---|"]
        for label, r in evals.items():
            sentences = (f"{r.get('sentences', '?')} ({r.get('references', '?')} references)" if r.get("multi_ref")
                         else r.get("sentences", "?"))
            lines.append(f"| {label} | {sentences} | {r.get('beam', '?')} | {r.get('bleu', '?')} | "
                         f"{r.get('chrf', '?')} | {r.get('bleu_tok_lc', '?')} |")
        lines += [""] + [f"- {label}: `{r['command']}`" for label, r in evals.items() if r.get("command")]
        signature = next((r.get("bleu_signature") for r in evals.values() if r.get("bleu_signature")), None)
        if signature:
            lines.append(f"- sacreBLEU signature: `{signature}`")
        lines.append("")
    return "\n".join(lines)


def write_card(folder: str | os.PathLike, card: dict[str, Any], readme: bool = True) -> None:
    """Write card.json and README.md (unless not `readme`) into the model folder (each via a temporary file and
    rename)."""
    folder = Path(folder)
    files = [(CARD_FILE, json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n")]
    for fname, text in files + ([(README_FILE, render_readme(card))] if readme else []):
        tmp = folder / (fname + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / fname)
