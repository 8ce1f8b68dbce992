"""A model card (card.json, free-form) as a readable page for the Models tab: no JSON, no null.

Qt-free so tests can read the HTML directly. Known keys become sections (what it is, training data,
scores, source); any other key becomes a "Key: value" line with a readable value. Cards written by
training, by `export_card` (core/formats/model_card.py) and by `pull` (core/hub/pull.py) all render.
"""

from __future__ import annotations

import html
from typing import Any, Iterable

from nmt_desktop.core.formats.model_card import RUN_STEPS, steps_text
from nmt_desktop.core.hub.catalogue import language_name

MUTED = "color:#6b7280"
SHORT_TEXT_HINT = ("Trained on short everyday sentences (Tatoeba): fine for phrases and short sentences, weaker on "
                   "long or technical text. For longer text, use <b>Get models…</b> to download an OPUS-MT model "
                   "trained on much more data.")
# keys the sections below show; everything else is listed under "Other details"
_SHOWN = {"name", "src_lang", "tgt_lang", "architecture", "parameters", "weights_dtype", "weights", "attribution",
          "license", "data", "training", "averaged_from", "eval", "dev", "fine_tuned_from", "glossary", "hub_repo", "revision",
          "url", "source", "downloaded", "retrain", "note", "date", "created", "parent", "memory"}


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, (list, dict, tuple)) and not value)


def readable(value: Any) -> str:
    """A card value as text a person reads: numbers with separators, lists joined, dicts as "k: v" pairs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value):,}"
    if isinstance(value, dict):
        return "; ".join(f"{_label(k)}: {readable(v)}" for k, v in value.items() if not _empty(v))
    if isinstance(value, (list, tuple)):
        return ", ".join(readable(v) for v in value if not _empty(v))
    return str(value)


_ACRONYMS = {"bleu": "BLEU", "chrf": "chrF", "url": "URL", "ppl": "perplexity"}


def _label(key: Any) -> str:
    """A card key as a row label: "train_pairs" -> "Train pairs", "bleu" -> "BLEU"."""
    words = [_ACRONYMS.get(w.lower(), w) for w in str(key).replace("_", " ").split()]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def _rows(rows: Iterable[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><td style='{MUTED}; padding-right:14px'>{html.escape(k)}</td>"
                   f"<td>{v if isinstance(v, _Html) else html.escape(readable(v))}</td></tr>"
                   for k, v in rows if not _empty(v))
    return f"<table cellspacing='3'>{body}</table>" if body else ""


class _Html(str):
    """Text that is already HTML (a link), not to be escaped again."""


def _section(title: str, body: str) -> str:
    return f"<h4 style='margin-bottom:2px'>{html.escape(title)}</h4>{body}" if body else ""


def languages(src: str, tgt: str) -> str:
    """ "English → German (en → de)"; "" when neither is known."""
    if not src and not tgt:
        return ""
    names = f"{language_name(src) if src else '?'} → {language_name(tgt) if tgt else '?'}"
    return f"{names} ({src or '?'} → {tgt or '?'})"


def is_tatoeba(card: dict[str, Any]) -> bool:
    """Whether the card says the model was trained on Tatoeba sentences (the bundled models)."""
    data = card.get("data")
    return "tatoeba" in f"{card.get('attribution', '')} {readable(data) if data else ''}".lower()


def _what_it_is(card: dict[str, Any], layers: int, heads: int) -> str:
    arch = card.get("architecture") if isinstance(card.get("architecture"), dict) else {}
    kind = str(arch.get("type") or "Transformer encoder-decoder")
    parts = []
    if arch.get("encoder_layers") and arch.get("decoder_layers"):
        parts.append(f"{arch['encoder_layers']} encoder + {arch['decoder_layers']} decoder layers")
    elif layers:
        parts.append(f"{layers} decoder layers")
    if arch.get("heads") or heads:
        parts.append(f"{arch.get('heads') or heads} attention heads")
    if arch.get("d_model"):
        parts.append(f"d_model {arch['d_model']}" + (f", FFN {arch['ffn_dim']}" if arch.get("ffn_dim") else ""))
    if isinstance(card.get("parameters"), int) and card["parameters"] > 0:
        parts.append(f"{readable(card['parameters'])} parameters")
    if arch.get("vocab_size"):
        shared = {True: "shared ", False: "separate "}.get(arch.get("shared_vocabulary"), "")
        parts.append(f"{shared}vocabulary of {readable(arch['vocab_size'])} subwords")
    weights = card.get("weights_dtype") or card.get("weights")
    if weights:
        parts.append(f"weights stored as {weights}")
    text = f"{kind}: {', '.join(parts)}." if parts else f"{kind}."
    extra = {k: v for k, v in arch.items() if k not in {"type", "encoder_layers", "decoder_layers", "heads",
                                                          "d_model", "ffn_dim", "vocab_size", "shared_vocabulary"}}
    return f"<p>{html.escape(text)}</p>" + _rows((_label(k), v) for k, v in extra.items())


def _data(card: dict[str, Any]) -> str:
    rows: list[tuple[str, Any]] = [("Attribution", card.get("attribution")), ("License", card.get("license"))]
    data = card.get("data")
    if isinstance(data, dict):
        train, dev = data.get("train"), data.get("dev")
        rows.append(("Training pairs", data.get("train_pairs")))
        rows.append(("Training files", train))
        rows.append(("Dev pairs", data.get("dev_pairs")))
        rows.append(("Dev files", dev))
        if data.get("reverse"):
            rows.append(("Direction", "reversed (target → source of the files)"))
        rows += [(_label(k), v) for k, v in data.items()
                 if k not in {"train", "dev", "train_pairs", "dev_pairs", "reverse"}]
    else:
        rows.append(("Data", data))
    return _rows(rows)


def _training(card: dict[str, Any]) -> str:
    tr = card.get("training") if isinstance(card.get("training"), dict) else {}
    rows: list[tuple[str, Any]] = []
    if tr.get("steps"):
        rows.append(("Steps", steps_text(tr)))  # a run's best: "60 (best checkpoint at step 20, …)" (model_card.py)
    rows.append(("Target tokens", tr.get("target_tokens")))
    seconds = tr.get("wall_time_s")
    if isinstance(seconds, (int, float)) and seconds > 0:
        minutes = int(round(seconds / 60))
        rows.append(("Training time", f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60
                     else f"{minutes} min"))
    rows.append(("Hardware", tr.get("hardware")))
    rows.append(("PyTorch", tr.get("torch")))
    rows += [(_label(k), v) for k, v in tr.items()
             if k not in {"steps", "epochs", RUN_STEPS, "target_tokens", "wall_time_s", "hardware", "torch", "device",
                          "world_size"}]
    averaged = card.get("averaged_from")
    if isinstance(averaged, list) and averaged:
        rows.append(("Averaged from", f"{len(averaged)} checkpoints ({readable(averaged)})"))
    rows.append(("Retrain with", card.get("retrain")))
    return _rows(rows)


def _scores(card: dict[str, Any]) -> str:
    evals = {str(k): v for k, v in card.get("eval").items() if isinstance(v, dict)} \
        if isinstance(card.get("eval"), dict) else {}
    if isinstance(card.get("dev"), dict) and "dev" not in evals:
        evals["dev (at training)"] = card["dev"]
    if not evals:
        return ""
    cell = "style='padding:1px 10px 1px 0'"
    head = "".join(f"<th align='left' {cell}>{h}</th>" for h in ("Test set", "Sentences", "BLEU", "chrF"))
    body = ""
    for label, r in evals.items():
        sentences = readable(r.get("sentences", ""))
        if r.get("multi_ref") and r.get("references"):
            sentences += f" ({readable(r['references'])} references)"
        body += (f"<tr><td {cell}>{html.escape(label)}</td><td {cell}>{html.escape(sentences or '–')}</td>"
                 + "".join(f"<td {cell}>{html.escape(readable(r[m]) if not _empty(r.get(m)) else '–')}</td>"
                           for m in ("bleu", "chrf")) + "</tr>")
    signature = next((r.get("bleu_signature") for r in evals.values() if r.get("bleu_signature")), None)
    note = f"<p style='{MUTED}'>sacreBLEU {html.escape(str(signature))}</p>" if signature else ""
    return f"<table cellspacing='0'><tr>{head}</tr>{body}</table>{note}"


def _memory(card: dict[str, Any]) -> str:
    """A memory fine-tune's scores (core/training/memory_data.py): the parent's and this model's BLEU and chrF on
    the memory's domain and on general text, and how much of each the training read."""
    memory = card.get("memory")
    if not isinstance(memory, dict) or not isinstance(memory.get("scores"), dict):
        return ""
    cell = "style='padding:1px 10px 1px 0'"
    head = "".join(f"<th align='left' {cell}>{h}</th>" for h in ("Text", "Sentences", "BLEU before → after",
                                                                   "chrF before → after"))
    body = ""
    for domain, title in (("memory", "Your memory's domain"), ("general", "General text")):
        before, after = (memory["scores"].get(domain) or {}).get("before") or {}, \
            (memory["scores"].get(domain) or {}).get("after") or {}
        if before and after:
            body += (f"<tr><td {cell}>{title}</td><td {cell}>{readable(after.get('sentences', ''))}</td>"
                     + "".join(f"<td {cell}>{readable(before[m])} → {readable(after[m])}</td>" for m in ("bleu", "chrf"))
                     + "</tr>")
    replay = memory.get("replay") or {}
    rows = _rows([("Memory", f"{memory.get('memory', '')} ({readable(memory.get('entries', 0))} segments of "
                             f"{memory.get('pair', '')})"),
                  ("Replayed general pairs", f"{readable(replay.get('pairs', 0))}"
                                             + (f" from {replay['file']}" if replay.get("file") else "")),
                  ("Note", memory.get("notes"))])
    return (f"<table cellspacing='0'><tr>{head}</tr>{body}</table>" if body else "") + rows


def _source(card: dict[str, Any]) -> str:
    rows: list[tuple[str, Any]] = []
    repo = card.get("hub_repo")
    if repo:
        url = str(card.get("url") or "")
        where = (_Html(f"<a href='{html.escape(url, quote=True)}'>{html.escape(str(repo))}</a>") if url
                 else str(repo))
        rows.append((str(card.get("source") or "Hugging Face Hub"), where))
        rows.append(("Revision", str(card.get("revision") or "")[:12]))
    elif card.get("source"):
        rows.append(("Source", card.get("source")))
    rows.append(("Fine-tuned from", card.get("fine_tuned_from")))
    rows.append(("Glossary", card.get("glossary")))  # kept from the parent model (core/formats/model_glossary.py)
    rows.append(("Downloaded", card.get("downloaded")))
    rows.append(("Date", card.get("date") or card.get("created")))
    rows.append(("Note", card.get("note")))
    return _rows(rows)


def card_html(card: dict[str, Any] | None, *, name: str = "", src_lang: str = "", tgt_lang: str = "",
              layers: int = 0, heads: int = 0, facts: Iterable[tuple[str, Any]] = (), muted: str = "") -> str:
    """The model page: title, languages, what it is, training data, scores, source, other details.

    name/src_lang/tgt_lang/layers/heads: what the loaded model says (the card's own values win for the
    title and languages); facts: extra rows under the title (size on disk, location); muted: the colour of
    secondary text (the theme's, gui/theme.py; default grey)."""
    card = dict(card or {})
    title = str(card.get("name") or name or "Model")
    langs = languages(str(card.get("src_lang") or src_lang or ""), str(card.get("tgt_lang") or tgt_lang or ""))
    parts = [f"<h2 style='margin-bottom:4px'>{html.escape(title)}</h2>"]
    if langs:
        parts.append(f"<p style='margin-top:0'><b>{html.escape(langs)}</b></p>")
    if is_tatoeba(card):
        parts.append(f"<p style='{MUTED}'>{SHORT_TEXT_HINT}</p>")
    parts.append(_section("What it is", _what_it_is(card, layers, heads)))
    parts.append(_section("Training data", _data(card)))
    parts.append(_section("Training", _training(card)))
    parts.append(_section("Scores", _scores(card)))
    parts.append(_section("Fine-tuned on your memory", _memory(card)))
    parts.append(_section("Source", _source(card)))
    other = [(_label(k), v) for k, v in card.items() if k not in _SHOWN]
    parts.append(_section("Other details", _rows(other)))
    parts.append(_section("On this computer", _rows(list(facts))))
    page = "".join(parts)
    return page.replace(MUTED, f"color:{muted}") if muted else page
