"""File > Save analysis… / Open analysis…: one small JSON file that brings a whole analysis back.

What it keeps: the source text, the model (name, folder, and a fingerprint of its card and configuration),
the decoding settings, the sentence and n-best row shown, the attention view (kind, colour scale, merged
words, focused head), the linked selection, "Your translation" and which of the two it showed, the ablated
heads and the tab and Analysis view open. Weights and results are not saved: opening translates again with
the same model and settings (decoding is deterministic for greedy and beam search), so the file stays under
a kilobyte and never holds anything but text and numbers (plain JSON, read with `json`, never unpickled).

No Qt here: reading, checking and writing the file. `analysis_session.py` captures and restores the window.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "nmt-desktop analysis"
VERSION = 1
SUFFIX = ".nmtanalysis.json"
MAX_BYTES = 2_000_000  # a saved analysis is small; anything bigger is not one


class AnalysisFileError(ValueError):
    """A file that is not a readable saved analysis: one sentence naming the file and the field."""


def model_fingerprint(folder: str | Path) -> str:
    """sha256 of the model folder's card.json and config.json (what names and shapes the model): a changed
    or retrained model under the same name gives another fingerprint; "" when neither file is there."""
    digest = hashlib.sha256()
    found = False
    for name in ("card.json", "config.json"):
        path = Path(folder) / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
            found = True
    return digest.hexdigest() if found else ""


@dataclass
class SavedModel:
    name: str
    path: str
    fingerprint: str


@dataclass
class SavedAnalysis:
    """Everything File > Open analysis… restores (see the module docstring)."""

    model: SavedModel
    source: str
    decoding: dict[str, Any] = field(default_factory=dict)
    sentence: int = 0
    hypothesis: int = 0
    attention: dict[str, Any] = field(default_factory=dict)  # kind, scale, merge_words, focus [layer, head] | None
    selection: tuple[int, int] = (-1, -1)  # (target token, source token) of the linked selection
    inspected: str = ""  # "Your translation", if any
    inspected_shown: str = ""  # "given" | "model" | ""
    ablated: list[tuple[int, int]] = field(default_factory=list)  # (layer, head) checked in Head ablation
    tab: str = "translate"
    analysis_view: str = ""  # the Analysis tab's view, by its title

    def to_json(self) -> str:
        data = {"format": FORMAT, "version": VERSION, **asdict(self)}
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str, default: Any = None) -> Any:
    if name not in data:
        if default is not None:
            return default
        raise AnalysisFileError(f"{where}: the field '{name}' is missing.")
    value = data[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise AnalysisFileError(f"{where}: the field '{name}' should be {names}, not {type(value).__name__}.")
    return value


def _pairs(value: Any, where: str, name: str) -> list[tuple[int, int]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in p) for p in value):
        raise AnalysisFileError(f"{where}: the field '{name}' should be a list of [layer, head] pairs.")
    return [(p[0], p[1]) for p in value]


def read_analysis(path: str | Path) -> SavedAnalysis:
    """The saved analysis in `path`, or AnalysisFileError saying in one sentence what is wrong and where."""
    path = Path(path)
    where = path.name
    try:
        if path.stat().st_size > MAX_BYTES:
            raise AnalysisFileError(f"{where} is {path.stat().st_size:,} bytes: too big for a saved analysis.")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisFileError(f"{path}: no such file.") from None
    except UnicodeDecodeError:
        raise AnalysisFileError(f"{where} is not UTF-8 text: it is not a saved analysis.") from None
    except OSError as exc:
        raise AnalysisFileError(f"{where} cannot be read: {exc.strerror or exc}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnalysisFileError(f"{where}, line {exc.lineno}: not valid JSON ({exc.msg}).") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise AnalysisFileError(f"{where} is not an NMT Desktop analysis (its 'format' is not \"{FORMAT}\").")
    version = _field(data, "version", int, where)
    if version > VERSION:
        raise AnalysisFileError(f"{where} was saved by a newer NMT Desktop (format version {version}); "
                                f"this one reads version {VERSION}.")
    model = _field(data, "model", dict, where)
    saved_model = SavedModel(_field(model, "name", str, f"{where}, model"), _field(model, "path", str, f"{where}, model"),
                             _field(model, "fingerprint", str, f"{where}, model", ""))
    selection = _field(data, "selection", list, where, [-1, -1])
    if len(selection) != 2 or not all(isinstance(x, int) for x in selection):
        raise AnalysisFileError(f"{where}: the field 'selection' should be [target token, source token].")
    shown = _field(data, "inspected_shown", str, where, "")
    if shown not in ("", "given", "model"):
        raise AnalysisFileError(f"{where}: the field 'inspected_shown' should be \"given\", \"model\" or \"\".")
    return SavedAnalysis(
        model=saved_model,
        source=_field(data, "source", str, where),
        decoding=_field(data, "decoding", dict, where, {}),
        sentence=_field(data, "sentence", int, where, 0),
        hypothesis=_field(data, "hypothesis", int, where, 0),
        attention=_field(data, "attention", dict, where, {}),
        selection=(selection[0], selection[1]),
        inspected=_field(data, "inspected", str, where, ""),
        inspected_shown=shown,
        ablated=_pairs(data.get("ablated", []), where, "ablated"),
        tab=_field(data, "tab", str, where, "translate"),
        analysis_view=_field(data, "analysis_view", str, where, ""),
    )
