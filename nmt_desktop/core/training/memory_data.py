"""Training data for "fine-tune on my memory" (issue 45, slow adaptation): a translation memory's entries of one
language pair, a dev set held out of them (the memory's domain), and general data replayed beside them so the
model does not forget what it knew, with general dev text to show whether it did.

Every entry of the pair is read, whatever its origin (imported from a file, typed in, confirmed in the desk):
all are a person's translations. The replay is a seeded sample of `replay_ratio` general pairs per memory
training pair, drawn once; it comes from `replay` or, when that is empty, the parent model's own training file as
its card names it (`data.train`), and the general dev text from `general_dev` or the card's `data.dev`. A path
in a card is looked up as written, then under the model folder's parent folders (a bundled model's card names
`../shared/data/...` from the project's root). Neither found: no replay or no general score, and `notes` says
why, so the run's card says it too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from nmt_desktop.core.config import ConfigError, TrainConfig
from nmt_desktop.core.formats.model_folder import read_card, read_config
from nmt_desktop.core.locations import resolve_model_path
from nmt_desktop.core.training.corpus import Corpus, CorpusSpec, CorpusStats, read_corpus, split_dev
from nmt_desktop.core.training.corpus_formats import CorpusError, normalize_space
from nmt_desktop.core.training.seeding import seeded_generator

MEMORY_DEV_FRACTION = 0.1  # held out of the memory when the config gives no dev_fraction
CARD_PATH_DEPTH = 3  # parent folders of a model folder a card's relative data path is looked up under
# (memory file, source language, target language) -> the pair's (source, target) segments: core/memory/segments.py
# pair_segments, handed in by the caller (this package may not import the memory: see that module)
SegmentReader = Callable[[str, str, str], list[tuple[str, str]]]


@dataclass
class MemoryData:
    """What a memory fine-tune trains and scores on; `card()` is what its model card says of it."""

    memory: str
    pair: tuple[str, str]  # (source, target) language codes
    entries: int  # the memory's entries of the pair that were read
    train: Corpus  # the memory's training part, then the replayed general pairs
    dev: Corpus  # held out of the memory: the memory's domain
    general_dev: list[tuple[str, str]]  # general text ([] when there is none)
    replay_file: str | None
    replay_pairs: int
    general_dev_file: str | None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        """What a data check shows (the Train tab), one line each."""
        held = len(self.dev)
        lines = [f"Memory: {self.entries} segments of {pair_name(self.pair)} in {self.memory}: {held} held out as "
                 f"the dev set (the memory's domain), {self.entries - held} to train on."]
        if self.replay_pairs:
            lines.append(f"Replay: {self.replay_pairs} general pairs from {self.replay_file}, mixed in.")
        if self.general_dev:
            lines.append(f"General text: {len(self.general_dev)} pairs of {self.general_dev_file}, scored before "
                         f"and after.")
        return lines + [note[:1].upper() + note[1:] + "." for note in self.notes]

    def card(self) -> dict[str, Any]:
        return {"memory": self.memory, "pair": pair_name(self.pair), "entries": self.entries,
                "memory_train_pairs": len(self.train) - self.replay_pairs, "memory_dev_pairs": len(self.dev),
                "replay": {"file": self.replay_file, "pairs": self.replay_pairs},
                "general_dev": {"file": self.general_dev_file, "pairs": len(self.general_dev)},
                **({"notes": self.notes} if self.notes else {})}


def pair_name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}-{pair[1]}"


def memory_pair(cfg: TrainConfig, model_languages: tuple[str, str]) -> tuple[str, str]:
    """The pair to read: `pair` ("en-de", or "en-us:de" where a code has a region), else src_lang and tgt_lang,
    else the model's own languages."""
    if cfg.pair:
        parts = cfg.pair.split(":") if ":" in cfg.pair else cfg.pair.split("-")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise ConfigError(f"field 'pair' must be SOURCE-TARGET such as en-de (SOURCE:TARGET where a code has "
                              f"a region, en-us:de), got {cfg.pair!r}")
        return _code(parts[0]), _code(parts[1])
    source, target = cfg.src_lang or model_languages[0], cfg.tgt_lang or model_languages[1]
    if not (source and target):
        raise ConfigError("the memory's language pair is not known: give 'pair' (e.g. en-de); the model "
                          "does not say which languages it translates")
    return _code(source), _code(target)


def _code(code: str) -> str:
    """A language code as the memory stores it (core/memory/entries.normal_language)."""
    return code.strip().lower().replace("_", "-")


def memory_corpus(path: str, pair: tuple[str, str], read: SegmentReader) -> Corpus:
    """The memory's entries of `pair` as training pairs, whitespace-normalised as a corpus file's are."""
    stats = CorpusStats(source_files=[path])
    pairs = []
    for source, target in read(path, *pair):
        stats.read += 1
        source, target = normalize_space(source), normalize_space(target)
        if source and target:
            pairs.append((source, target))
        else:
            stats.skipped_empty += 1
    stats.kept = len(pairs)
    if len(pairs) < 2:
        raise CorpusError(f"{path}: the memory holds {len(pairs)} entries of {pair_name(pair)}; fine-tuning needs "
                          f"at least 2 (one to train on, one to score)")
    return Corpus(pairs, stats)


def card_data_path(value: Any, model_folder: Path) -> Path | None:
    """A data file a parent's card names (data.train, data.dev), where it is on this machine, else None."""
    if not isinstance(value, str) or not value:
        return None  # two aligned files, or nothing recorded
    path = Path(value).expanduser()
    above = model_folder.resolve().parents[:CARD_PATH_DEPTH]
    tries = [path] if path.is_absolute() else [path, *(folder / path for folder in above)]
    return next((p for p in tries if p.is_file()), None)


def replay_sample(general: Corpus, count: int, seed: int) -> list[tuple[str, str]]:
    """`count` general pairs drawn without repeats (all of them when there are fewer), seeded, in file order."""
    if count >= len(general):
        return list(general.pairs)
    rows = sorted(torch.randperm(len(general), generator=seeded_generator(seed, "replay"))[:count].tolist())
    return [general.pairs[i] for i in rows]


def parent_model(cfg: TrainConfig) -> Path:
    """The model folder (or zip) `from_model` names, absolute: what a fine-tuned model's card records as its
    parent."""
    return resolve_model_path(cfg.from_model, lambda _: None).absolute()


def memory_data_for(cfg: TrainConfig, read: SegmentReader) -> MemoryData:
    """`read_memory_data` for the parent `cfg.from_model` names (its card's data files and languages)."""
    parent = parent_model(cfg)
    config = read_config(parent)
    return read_memory_data(cfg, read_card(parent), parent, (config.src_lang, config.tgt_lang), read)


def read_memory_data(cfg: TrainConfig, parent_card: dict[str, Any], parent_folder: Path,
                     model_languages: tuple[str, str], read: SegmentReader) -> MemoryData:
    """The memory's training and dev parts, the replay mixed into training, and the general dev pairs."""
    assert cfg.memory
    pair = memory_pair(cfg, model_languages)
    memory = memory_corpus(cfg.memory, pair, read)
    if cfg.dev or cfg.dev_src:
        train, dev = memory, read_corpus(CorpusSpec(path=cfg.dev, src_path=cfg.dev_src, tgt_path=cfg.dev_tgt,
                                                    reverse=cfg.reverse))
    else:
        train, dev = split_dev(memory, cfg.dev_fraction or MEMORY_DEV_FRACTION, cfg.seed)
    data = (parent_card.get("data") or {}) if isinstance(parent_card.get("data"), dict) else {}
    notes = []
    replay_file = general_file = None
    replayed: list[tuple[str, str]] = []
    if cfg.replay_ratio > 0:
        replay_file = Path(cfg.replay) if cfg.replay else card_data_path(data.get("train"), parent_folder)
        if replay_file is None:
            notes.append("no replay: the parent model's card names no training file found here, and no replay "
                         "file was given")
        else:
            general = read_corpus(CorpusSpec(path=replay_file, reverse=cfg.reverse))
            replayed = replay_sample(general, round(cfg.replay_ratio * len(train)), cfg.seed)
    general_file = Path(cfg.general_dev) if cfg.general_dev else card_data_path(data.get("dev"), parent_folder)
    general_dev: list[tuple[str, str]] = []
    if general_file is None:
        notes.append("no general score: the parent model's card names no dev file found here, and no general dev "
                     "file was given")
    else:
        general_dev = read_corpus(CorpusSpec(path=general_file, reverse=cfg.reverse)).pairs
    mixed = Corpus(train.pairs + replayed, dataclasses.replace(train.stats, kept=len(train) + len(replayed)))
    return MemoryData(cfg.memory, pair, len(memory), mixed, dev, general_dev,
                      str(replay_file) if replay_file else None, len(replayed),
                      str(general_file) if general_file else None, notes)
