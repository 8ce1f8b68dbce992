"""The models a server holds, routed by language pair: en->de and en->fr from one server (two models of one
pair: the first given, unless OPUS-CAT's modelTag names the other), each model with
its own decoder (a decode process, decode_process.py; or a thread, batcher.py, with --decode-in-process) and
its glossary (core/formats/model_glossary.py: the user's saved one, else the one its folder carries), forced
into every translation it makes.

A multilingual model (OPUS-MT en-ROMANCE, `>>fra<<` tokens) serves one pair per target token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from nmt_desktop.core.hub.catalogue import language_name
from nmt_desktop.server.errors import ApiError

if TYPE_CHECKING:
    import asyncio

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.server.decode_requests import FileRequest, TextRequest
    from nmt_desktop.server.segments import Segment


class Decoder(Protocol):
    """What a route hands requests to: batcher.DecodeWorker (a thread) or decode_process.DecodeProcess."""

    @property
    def waiting(self) -> int: ...

    def submit(self, request: "TextRequest", segments: list["Segment"]) -> "asyncio.Future": ...

    def submit_file(self, request: "FileRequest") -> "asyncio.Future": ...

    def stop(self, timeout: float | None = 30.0) -> None: ...


@dataclass
class ServedModel:
    """One loaded model: its name, its language pair(s) and what decodes for it."""
    name: str
    source: str
    targets: list[str]  # target codes; one for an ordinary model
    worker: Decoder
    multilingual: bool = False

    def describe(self) -> list[dict[str, Any]]:
        """The "models" entries of the listening event and /nmt/stats."""
        return [{"name": self.name, "source": self.source, "target": t} for t in self.targets]


def model_languages(translator: "Translator") -> tuple[str, list[str], bool]:
    """(source code, target codes, multilingual) of a model, from its config and language tokens."""
    source = (translator.config.src_lang or "").strip() or "und"
    tokens = translator.target_languages
    if tokens:
        return source, [t.strip("<>") for t in tokens], True
    return source, [(translator.config.tgt_lang or "").strip() or "und"], False


def model_glossary(translator: "Translator") -> "Glossary | None":
    """The model's glossary (the user's saved one, else its folder's), read once when the server starts."""
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.core.formats.model_glossary import model_glossary_file

    path = model_glossary_file(translator.path)
    return Glossary.read(path) if path is not None else None


class Models:
    """Every served model, found by (source, target)."""

    def __init__(self, served: list[ServedModel]):
        self.served = served
        self._pairs: dict[tuple[str, str], ServedModel] = {}
        for model in served:
            for target in model.targets:
                self._pairs.setdefault((model.source, target), model)

    def describe(self) -> list[dict[str, Any]]:
        return [entry for model in self.served for entry in model.describe()]

    def sources(self) -> list[str]:
        return list(dict.fromkeys(m.source for m in self.served))

    def targets_of(self, source: str) -> list[str]:
        return [t for (s, t) in self._pairs if s == source]

    def all_codes(self) -> list[str]:
        return list(dict.fromkeys([c for (s, t) in self._pairs for c in (s, t)]))

    def pairs(self) -> list[tuple[str, str]]:
        return list(self._pairs)

    def knows(self, code: str) -> bool:
        return code in self.all_codes()

    def code(self, code: str) -> str:
        """A client's code as the models spell it: "de" as it is, "de-DE", "de_AT" or "DE" -> "de" when that
        is what a model has."""
        if self.knows(code):
            return code
        base = code.replace("_", "-").split("-")[0].strip().lower()
        return base if self.knows(base) else code

    def named(self, source: str, target: str) -> list[ServedModel]:
        """Every model serving source -> target, the one `route` picks first (OPUS-CAT's model tags)."""
        source, target = self.code(source), self.code(target)
        return [m for m in self.served if m.source == source and target in m.targets]

    def route(self, source: str, target: str, tag: str = "") -> ServedModel:
        """The model for source -> target (the first served; `tag`: the one of that name, OPUS-CAT's modelTag,
        else the first); ApiError 400 in LibreTranslate's words when there is none."""
        tag = tag.strip().strip('"')
        tagged = [m for m in self.named(source, target) if m.name == tag] if tag else []
        if tagged:
            return tagged[0]
        source, target = self.code(source), self.code(target)
        if not self.knows(source):
            raise ApiError(400, f"{source} is not supported")
        if not self.knows(target):
            raise ApiError(400, f"{target} is not supported")
        model = self._pairs.get((source, target))
        if model is None:
            raise ApiError(400, f"{language_name(target)} ({target}) is not available as a target language from "
                                f"{language_name(source)} ({source})")
        return model

    def stop(self) -> None:
        for model in self.served:
            model.worker.stop()
