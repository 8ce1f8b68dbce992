"""Procedures that ask for decodes, run one by one or many in lockstep with their decodes batched.

A procedure that needs several dependent decodes of one sentence (documents/placement.py places a kept
span: score the determiners, decode on after the forced prefix, splice the rest) is written as a
generator: it yields the requests it needs now (`DecodeRequest`s; analysis/masking.py's `MaskingRequest`)
and receives their answers. Run alone (`run_alone`), each request is answered on its own, as before. Run
together (`run_lockstep`), the requests every live procedure asks for in a round go to the model as a few
large batches (one per request type and batch key: decoding configuration and kind, each row with its own
forced prefix or target, search.py's per-row prefixes), so a document whose 200 sentences each need a
repair pays for a few batched decodes per round instead of 600 one-sentence decodes (benchmarks/RESULTS.md,
issue 42). A row decodes the same in a batch as alone, so both runners give the same results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generator, Hashable, Protocol, Sequence, TypeVar

from nmt_desktop.core.config import DecodeConfig

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator

T = TypeVar("T")


class Request(Protocol):
    """What a procedure may ask for: requests with the same `batch_key` (and type) are answered together."""

    def batch_key(self) -> Hashable: ...

    @classmethod
    def run_together(cls, translator: "Translator", requests: Sequence[Any], batch_size: int) -> list[Any]:
        """One answer per request, in order."""
        ...


@dataclass(frozen=True)
class DecodeRequest:
    """Decode `units` with `cfg`: each with the forced `prefix` (target ids), or teacher-forced on its
    own target of `targets` (one per unit) when given. Its answer: one Translation per unit."""
    units: Sequence["Unit"]
    cfg: DecodeConfig
    prefix: Sequence[int] = ()
    targets: Sequence[Sequence[int]] | None = None

    def batch_key(self) -> Hashable:
        return repr(self.cfg), self.targets is not None

    @classmethod
    def run_together(cls, translator: "Translator", requests: Sequence["DecodeRequest"], batch_size: int
                     ) -> list[list["Translation"]]:
        """Every request's units as rows of shared batches (shortest source first, little padding), each row
        with its own request's prefix or target."""
        rows = sorted(((j, u) for j, r in enumerate(requests) for u in range(len(r.units))),
                      key=lambda row: len(requests[row[0]].units[row[1]].source_ids))
        answers: list[list] = [[None] * len(r.units) for r in requests]
        for start in range(0, len(rows), max(1, batch_size)):
            batch = rows[start: start + batch_size]
            units = [requests[j].units[u] for j, u in batch]
            cfg = requests[batch[0][0]].cfg
            if requests[0].targets is not None:
                out = translator.translate_units(units, cfg, targets=[requests[j].targets[u] for j, u in batch])
            else:
                out = translator.translate_units(units, cfg, prefix=[list(requests[j].prefix) for j, _ in batch])
            for (j, u), translation in zip(batch, out):
                answers[j][u] = translation
        return answers


# A procedure: yields the requests it needs now, receives one answer per request.
Procedure = Generator[list[Any], list[Any], T]


def run_alone(translator: "Translator", procedure: Procedure[T]) -> T:
    """The procedure's result, each request answered on its own."""
    try:
        requests = next(procedure)
        while True:
            requests = procedure.send([type(r).run_together(translator, [r], 64)[0] for r in requests])
    except StopIteration as end:
        return end.value


def run_lockstep(translator: "Translator", procedures: Sequence[Procedure[T]], batch_size: int = 32) -> list[T]:
    """Each procedure's result (in order), all run together: a round collects every live procedure's
    requests and answers those of a type and batch key together, in batches of at most `batch_size` rows."""
    results: list[T | None] = [None] * len(procedures)
    asked: dict[int, list[Any]] = {}
    for i in range(len(procedures)):
        _advance(procedures, i, None, asked, results)
    while asked:
        answers = _answer_round(translator, asked, batch_size)
        waiting, asked = asked, {}
        for i in waiting:
            _advance(procedures, i, answers[i], asked, results)
    return results  # type: ignore[return-value]  (every procedure ran to its end)


def _advance(procedures: Sequence[Procedure[T]], i: int, answer: list[Any] | None, asked: dict[int, list[Any]],
             results: list[T | None]) -> None:
    """Send procedure i its answer (None: start it); record what it asks next, or its result."""
    try:
        requests = next(procedures[i]) if answer is None else procedures[i].send(answer)
        while not requests:  # asked for nothing this round: answer at once
            requests = procedures[i].send([])
        asked[i] = requests
    except StopIteration as end:
        results[i] = end.value


def _answer_round(translator: "Translator", asked: dict[int, list[Any]], batch_size: int) -> dict[int, list[Any]]:
    """Every asked request answered; requests of one type and batch key go together."""
    groups: dict[tuple[type, Hashable], list[tuple[int, int]]] = {}  # -> (procedure, request index)
    for i, requests in asked.items():
        for j, request in enumerate(requests):
            groups.setdefault((type(request), request.batch_key()), []).append((i, j))
    answers: dict[int, list[Any]] = {i: [None] * len(requests) for i, requests in asked.items()}
    for (kind, _key), members in groups.items():
        for (i, j), answer in zip(members, kind.run_together(translator, [asked[i][j] for i, j in members], batch_size)):
            answers[i][j] = answer
    return answers
