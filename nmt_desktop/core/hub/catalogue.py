"""The OPUS-MT catalogue: which Helsinki-NLP Marian models exist, for which languages, searched by
language code or name ("de", "deu", "German").

The Hub is asked first (`HfApi.list_models`, one bounded listing of Helsinki-NLP's opus-mt repos,
with tags for the license and the safetensors parameter count for the size). When it cannot be
reached, the shipped snapshot `opus_mt_catalogue.json` answers instead and the result says so.
Language names come from `language_names.json` (ISO 639-1/2/3 codes and OPUS group codes).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from nmt_desktop.core.hub.client import (OPUS_MT_AUTHOR, HubUnreachableError, explain, hub_api, hub_offline, license_of,
                                        probe_reachable)
from nmt_desktop.core.hub.files import download_size

__all__ = ["HubModel", "SearchResult", "language_name", "parse_opus_repo", "search_models", "codes_for"]

_HERE = Path(__file__).resolve().parent
CATALOGUE_FILE = _HERE / "opus_mt_catalogue.json"
LANGUAGES_FILE = _HERE / "language_names.json"
MAX_LISTED = 5000  # bound on the Hub listing (Helsinki-NLP has ~1,500 opus-mt repos)
MAX_DETAIL_LOOKUPS = 12  # results whose size/license the listing lacks get one model_info call each, up to this
_PREFIXES = ("opus-mt-tc-bible-big-", "opus-mt-tc-big-", "opus-mt-tc-base-", "opus-mt-synthetic-", "opus-mt-tc-",
             "opus-mt-big-", "opus-mt-")


@dataclass
class HubModel:
    """One OPUS-MT repository as listed: what the search table and `models search` show."""

    repo: str  # "Helsinki-NLP/opus-mt-en-de"
    source: str  # language or group code, "" when the name does not say
    target: str
    license: str = ""  # from the Hub's tags ("cc-by-4.0"); "" offline
    size_bytes: int | None = None  # the download: safetensors parameters x 4, or the files pull fetches; None unknown
    downloads: int | None = None

    @property
    def name(self) -> str:
        """The installed model's default name: the repo's own name (opus-mt-en-de)."""
        return self.repo.rsplit("/", 1)[-1]

    @property
    def languages(self) -> str:
        """"English → German" (codes the name table lacks are shown as they are)."""
        if not self.source and not self.target:
            return "?"
        return f"{language_name(self.source)} → {language_name(self.target)}"


@dataclass
class SearchResult:
    models: list[HubModel]
    offline: bool = False  # True: from the shipped catalogue, because the Hub could not be reached
    reason: str = ""  # why the Hub was not used (one sentence), when offline
    snapshot: str = ""  # the shipped catalogue's date, when offline


@functools.lru_cache(maxsize=1)
def _language_table() -> dict[str, str]:
    try:
        data = json.loads(LANGUAGES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def language_name(code: str) -> str:
    """The English name of a language or group code ("de" -> "German"); the code itself if unknown."""
    return _language_table().get(code) or _language_table().get(code.lower()) or code


def language_label(code: str) -> str:
    """ "French (fr)" for a language code ("en-US": "English (en-US)"); the code itself when unknown."""
    base = code.split("-")[0].split("_")[0]
    name = language_name(base)
    return f"{name} ({code})" if name != base else code


def codes_for(term: str) -> set[str]:
    """Every code a search term stands for: the term as a code and the codes of the same language
    ("de" or "German" -> {"de", "deu", "ger"}); a term that names no language exactly matches names
    starting with it ("germ" -> German, Germanic languages). Case-insensitive."""
    term = term.strip()
    if not term:
        return set()
    low = term.lower()
    table = _language_table()
    by_code = {c.lower(): n for c, n in table.items()}
    names = {by_code[low].lower()} if low in by_code else set()
    exact = {code.lower() for code, name in table.items() if name.lower() in names or name.lower() == low}
    if exact:  # "German" means German, not also Germanic languages
        return exact | {low}
    return {low} | {code.lower() for code, name in table.items() if len(low) >= 3 and name.lower().startswith(low)}


def parse_opus_repo(repo: str) -> tuple[str, str]:
    """(source, target) codes of an OPUS-MT repo name ("opus-mt-tc-big-en-zle" -> ("en", "zle"));
    ("", "") for a name of another shape."""
    name = repo.rsplit("/", 1)[-1]
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            parts = name[len(prefix):].split("-")
            if len(parts) == 2 and all(parts):
                return parts[0], parts[1]
            break
    return "", ""


def _matches(model: HubModel, terms: list[str]) -> bool:
    src, tgt = model.source.lower(), model.target.lower()
    if not terms:
        return True
    if len(terms) == 1:
        codes = codes_for(terms[0])
        return src in codes or tgt in codes or terms[0].lower() in model.repo.lower()
    return src in codes_for(terms[0]) and tgt in codes_for(terms[1])


def _size(info: Any) -> int | None:
    st = getattr(info, "safetensors", None)
    total = getattr(st, "total", None) if st is not None else None
    return int(total) * 4 if isinstance(total, int) and total > 0 else None


def _from_hub() -> list[HubModel]:
    """Helsinki-NLP's opus-mt repos as the Hub lists them now (one bounded, paginated listing)."""
    if hub_offline():
        raise HubUnreachableError("HF_HUB_OFFLINE is set, so the Hugging Face Hub is not contacted")
    probe_reachable()
    try:
        listed = list(hub_api().list_models(author=OPUS_MT_AUTHOR, search="opus-mt", limit=MAX_LISTED,
                                            expand=["tags", "downloads", "safetensors"]))
    except Exception as exc:  # noqa: BLE001 - every failure becomes one sentence
        raise explain(exc) from None
    models = []
    for info in listed:
        repo = str(getattr(info, "id", "") or "")
        if not re.fullmatch(rf"{OPUS_MT_AUTHOR}/opus-mt-[\w.-]+", repo):
            continue
        src, tgt = parse_opus_repo(repo)
        models.append(HubModel(repo, src, tgt, license_of(getattr(info, "tags", None)), _size(info),
                               getattr(info, "downloads", None)))
    return models


def _fill_details(models: list[HubModel], limit: int = MAX_DETAIL_LOOKUPS) -> None:
    """Size (the files `pull` would download) and license of the first `limit` models the listing
    left without them, one `model_info` each; a model whose lookup fails keeps its blanks."""
    api = hub_api()
    for model in [m for m in models if m.size_bytes is None or not m.license][:limit]:
        try:
            info = api.model_info(model.repo, files_metadata=True, timeout=10)
        except Exception:  # noqa: BLE001 - details are a courtesy; the row stays without them
            continue
        model.size_bytes = model.size_bytes or download_size(info)
        model.license = model.license or license_of(getattr(info, "tags", None)) or str(
            getattr(getattr(info, "card_data", None), "license", "") or "")


def offline_catalogue() -> tuple[list[HubModel], str]:
    """The shipped snapshot of the OPUS-MT repos (no sizes, licenses or download counts) and its date."""
    data = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    return [HubModel(repo, *parse_opus_repo(repo)) for repo in data["models"]], str(data.get("snapshot", ""))


def search_models(terms: Iterable[str] = (), offline: bool = False) -> SearchResult:
    """OPUS-MT models matching `terms`: one term matches either side, two mean source then target.

    Asks the Hub unless `offline`; when the Hub cannot be reached, answers from the shipped
    catalogue with `offline=True` and the reason. Other Hub errors are raised as HubError.
    """
    terms = [t for t in terms if t.strip()]
    reason = "the offline catalogue was asked for"
    if not offline:
        try:
            models = _from_hub()
            found = [m for m in models if _matches(m, terms)]
            found.sort(key=lambda m: (-(m.downloads or 0), m.repo))
            _fill_details(found)
            return SearchResult(found)
        except HubUnreachableError as exc:
            reason = str(exc)
    models, snapshot = offline_catalogue()
    return SearchResult([m for m in models if _matches(m, terms)], offline=True, reason=reason, snapshot=snapshot)
