"""What a route asks of a model's decoder, as plain data, and the answer the decoder makes of it.

A route describes its request (`TextRequest`: the texts, their format, the decoding and what to add;
`FileRequest`: an uploaded document's path and options) and hands it to the model's decoder: a thread in
this process (batcher.DecodeWorker, `serve --decode-in-process`) or a decode process of its own
(decode_process.py). Either way the decoder turns it into blocks (`request_segments`), decodes them among
other requests' blocks, and builds the answer with the translator at hand (`answers`, `translate_upload`):
trust, alignment and OPUS-CAT's pieces need the model, so they are made where it is, and what comes back
is plain data too (texts, dicts of numbers and texts).

`to_wire` / `from_wire`: a request as a tuple of builtins, for marshal (decode_process.py's framing)."""

from __future__ import annotations

from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nmt_desktop.server.segments import Segment, html_segment, sentences, text_segment

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.core.documents.translate_document import BlockResult


@dataclass(frozen=True)
class DecodeKey:
    """What must be equal for segments to share a search: beam width, hypotheses kept, target token."""
    beam_size: int = 1
    nbest: int = 1
    target: str | None = None  # a multilingual model's >>code<<; None for an ordinary model
    # URLs, e-mail addresses and emoji behind placeholders (translate_document's automatic do-not-translate);
    # off for alternatives, whose n-best texts hold the placeholders' names, not what they stand for
    keep_spans: bool = True


def decode_config(key: DecodeKey) -> "DecodeConfig":
    """The decoding a key asks for: cross-attention on (HTML's inline markup and the alignment extension read
    it), no alternatives per token. The one place both batching policies take it from, so their answers agree."""
    from nmt_desktop.core.config import DecodeConfig

    return DecodeConfig(beam_size=key.beam_size, nbest=key.nbest, attention=True, alternatives=0)


@dataclass(frozen=True)
class TextRequest:
    """The texts of one request and what its answer holds. `shape`: "libre" (LibreTranslate's entries: text,
    alternatives, trust, alignment), "pairs" (OPUS-CAT's TranslationPair per text) or "texts" (the texts)."""
    texts: tuple[str, ...]
    key: DecodeKey
    html: bool = False
    shape: str = "libre"
    alternatives: int = 0
    trust: bool = False
    alignment: bool = False


@dataclass(frozen=True)
class FileRequest:
    """An uploaded document (written under the file store's folder) to translate whole, alone."""
    upload: str
    filename: str
    target: str  # the target code the download's name carries
    language_token: str | None  # a multilingual model's target (set on the translator first); None otherwise
    folder: str
    batch_size: int


def to_wire(request: TextRequest | FileRequest) -> tuple:
    if isinstance(request, FileRequest):
        return ("file", *astuple(request))
    key = request.key
    return ("text", request.texts, (key.beam_size, key.nbest, key.target, key.keep_spans), request.html,
            request.shape, request.alternatives, request.trust, request.alignment)


def from_wire(data: tuple) -> TextRequest | FileRequest:
    if data[0] == "file":
        return FileRequest(*data[1:])
    _kind, texts, key, *rest = data
    return TextRequest(tuple(texts), DecodeKey(*key), *rest)


def request_segments(request: TextRequest) -> list[Segment]:
    """The request's texts as segments (lines, or an HTML fragment's blocks); ApiError 400 for HTML the
    reader cannot parse."""
    make = html_segment if request.html else text_segment
    return [make(t) for t in request.texts]


def answers(translator: "Translator", request: TextRequest, segments: list[Segment],
            results: list["BlockResult"]) -> list[Any]:
    """One answer per text, from its blocks' results (on the decoder's thread: trust and alignment read the
    model)."""
    from nmt_desktop.server import extensions

    out, start = [], 0
    for segment in segments:
        mine = results[start: start + len(segment.blocks)]
        start += len(segment.blocks)
        text = segment.assemble(mine)
        if request.shape == "texts":
            out.append(text)
            continue
        if request.shape == "pairs":
            from nmt_desktop.server.opuscat_pairs import translation_pair

            out.append(translation_pair(translator, text, sentences(mine)))
            continue
        said = sentences(mine)
        entry: dict[str, Any] = {"text": text}
        if request.alternatives:
            entry["alternatives"] = ([] if request.html else
                                     extensions.alternatives(said, request.alternatives, text))
        if request.trust:
            entry["trust"] = extensions.trust(translator, said)
        if request.alignment:
            entry["alignment"] = extensions.alignment(translator, said)
        out.append(entry)
    return out


def translate_upload(translator: "Translator", glossary: "Glossary | None", request: FileRequest) -> str:
    """The document translated and saved in the store's folder; its download name (ApiError 400 for one the
    safety checks or the adapters refuse)."""
    from nmt_desktop.server.file_jobs import FileStore

    if request.language_token is not None:
        translator.target_language = request.language_token
    store = FileStore(Path(request.folder), 0.0)
    return store.translate(translator, glossary, Path(request.upload), request.filename, request.target,
                           request.batch_size)
