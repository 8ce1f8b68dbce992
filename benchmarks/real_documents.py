"""The corpus of real documents (tests/real_documents/) through the real `nmt-desktop translate-file` (issue 42).

Every file is translated by a child process of the CLI (the bundled en-de model unless --model) with a per-file
timeout; per file it records: translated / refused (the CLI's one sentence) / crashed (an unexpected exception,
which the CLI words "...: ... (run with --debug for details)", or a non-zero exit without one sentence) / timed out;
the seconds of the child, the sentences and sentences per second the CLI reports; whether a refusal was right
(SOURCES.tsv's `expect`, and a sentence naming that cause); and the fidelity checks of the output
(tests/real_documents/fidelity.py). It prints a Markdown table per format and writes every record as JSON.
`--code DIR` measures another commit's code (`git archive COMMIT | tar -x -C DIR`) against the same corpus.

    nice -n 19 .venv/bin/python benchmarks/real_documents.py --threads 1 --json /tmp/real_documents.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.real_documents.fidelity import KINDS, REFUSAL_REASONS as REASONS, compare  # noqa: E402

CORPUS = ROOT / "tests" / "real_documents"
SUMMARY = re.compile(r": (\d+) sentences in (\d+) blocks translated in ([\d.]+) s")


@dataclass
class Record:
    """One corpus file through translate-file."""
    file: str
    format: str
    expect: str
    outcome: str  # translated / refused / crashed / timeout
    message: str = ""  # the refusal's sentence, or the crash's last line
    seconds: float = 0.0  # the child process, start to exit
    sentences: int = 0
    translate_seconds: float = 0.0  # what the CLI reports (reading, translating, writing)
    fidelity: list[str] = field(default_factory=list)  # "kind: sentence" per broken check
    checks: int = 0

    @property
    def refused_right(self) -> bool:
        """Refused as SOURCES.tsv expects, for the reason it names."""
        return (self.outcome == "refused" and self.expect in REASONS
                and re.search(REASONS[self.expect], self.message.replace(self.file, ""), re.I) is not None)

    @property
    def refused_wrongly(self) -> bool:
        """A file that should translate, refused."""
        return self.outcome == "refused" and self.expect not in REASONS

    @property
    def wrong_reason(self) -> bool:
        """A file rightly refused in a sentence that names another cause ("not a zip archive" for encrypted)."""
        return self.outcome == "refused" and self.expect in REASONS and not self.refused_right


def _run(cli: Path, source: Path, out: Path, args: argparse.Namespace, row: dict) -> Record:
    fmt = source.suffix.lower().lstrip(".")
    command = [str(cli), "translate-file", str(source), "-o", str(out)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.model:
        command += ["--model", args.model]
    started = time.perf_counter()
    try:
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads or 1)}
        if args.code:  # another checkout's nmt_desktop ahead of the editable install (the child's cwd is not ROOT)
            env["PYTHONPATH"] = str(args.code)
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env,
                              cwd=out.parent)
    except subprocess.TimeoutExpired:
        return Record(source.name, fmt, row["expect"], "timeout", f"no answer in {args.timeout} s",
                      time.perf_counter() - started)
    seconds = time.perf_counter() - started
    stderr = done.stderr.strip()
    lines = [line for line in stderr.splitlines() if line.strip()]
    if done.returncode == 0 and out.exists():
        record = Record(source.name, fmt, row["expect"], "translated", seconds=seconds)
        if m := SUMMARY.search(stderr):
            record.sentences, record.translate_seconds = int(m.group(1)), float(m.group(3))
        result = compare(source, out)
        record.checks = result.checks
        record.fidelity = [f"{b.kind}: {b.sentence}" for b in result.broken]
        return record
    unexpected = lines and lines[0].endswith("(run with --debug for details)")  # the CLI's words for a bug
    if done.returncode == 1 and len(lines) == 1 and lines[0].startswith("nmt-desktop: error:") and not unexpected:
        return Record(source.name, fmt, row["expect"], "refused", lines[0].split("error:", 1)[1].strip(), seconds)
    return Record(source.name, fmt, row["expect"], "crashed",
                  f"exit {done.returncode}: {lines[-1] if lines else '(nothing on stderr)'}", seconds)


def table(records: list[Record]) -> str:
    by_format: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_format[r.format].append(r)
    head = ("| format | files | translated | refused right | refused, wrong reason | refused wrongly | not refused "
            "| crashed | timed out | output does not reopen | fidelity failures (files: kinds) | sentences "
            "| sentences/s | seconds of the children |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for fmt in sorted(by_format) + ["all"]:
        rs = records if fmt == "all" else by_format[fmt]
        kinds = Counter(k.split(":")[0] for r in rs for k in set(f.split(":")[0] for f in r.fidelity))
        failing = sum(1 for r in rs if r.outcome == "translated" and r.fidelity)
        reopen = sum(1 for r in rs if any(f.startswith("reopen") for f in r.fidelity))
        sentences = sum(r.sentences for r in rs)
        secs = sum(r.translate_seconds for r in rs)
        kind_text = ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k] and k != "reopen") or "-"
        rows.append(
            f"| {'**all**' if fmt == 'all' else fmt} | {len(rs)} | {sum(r.outcome == 'translated' for r in rs)} "
            f"| {sum(r.refused_right for r in rs)} | {sum(r.wrong_reason for r in rs)} "
            f"| {sum(r.refused_wrongly for r in rs)} "
            f"| {sum(r.outcome != 'refused' and r.expect.startswith('refuse') for r in rs)} "
            f"| {sum(r.outcome == 'crashed' for r in rs)} | {sum(r.outcome == 'timeout' for r in rs)} | {reopen} "
            f"| {failing}: {kind_text} | {sentences} | {sentences / secs if secs else 0:.1f} "
            f"| {sum(r.seconds for r in rs):.0f} |")
    return "\n".join(rows)


def _report(records: list[Record]) -> None:
    print(table(records))
    print("\nper file, where something is wrong:\n")
    for r in records:
        if r.outcome == "crashed" or r.outcome == "timeout" or r.refused_wrongly or r.wrong_reason or r.fidelity or (
                r.expect.startswith("refuse") and r.outcome != "refused"):
            what = r.message if r.outcome != "translated" else "; ".join(r.fidelity)
            print(f"- {r.file} ({r.outcome}, expected {r.expect}): {what}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="passed to translate-file --threads (default 1)")
    parser.add_argument("--model", help="passed to translate-file --model (default: the bundled en-de)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per file (default 300)")
    parser.add_argument("--code", type=Path,
                        help="the app's code from this folder (e.g. `git archive COMMIT | tar -x -C DIR`), to "
                             "measure an earlier commit against the same corpus and checks")
    parser.add_argument("--only", help="a regular expression: only the files whose names match")
    parser.add_argument("--json", type=Path, help="write every record here")
    parser.add_argument("--table", type=Path, metavar="JSON", help="only print the tables of an earlier run's JSON")
    args = parser.parse_args()
    if args.table:
        saved = json.loads(args.table.read_text())
        fields = set(Record.__dataclass_fields__)
        records = [Record(**{k: v for k, v in r.items() if k in fields}) for r in saved["records"]]
        print(f"{saved['commit']}, {saved['machine']}, --threads {saved['threads']}\n")
        _report(records)
        return 0
    cli = Path(sys.executable).parent / "nmt-desktop"
    with open(CORPUS / "SOURCES.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if args.only:
        rows = [r for r in rows if re.search(args.only, r["file"])]
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            source = CORPUS / "files" / row["file"]
            record = _run(cli, source, Path(tmp) / row["file"], args, row)
            records.append(record)
            detail = record.message or "; ".join(record.fidelity) or "all checks pass"
            print(f"{record.file}: {record.outcome} in {record.seconds:.1f} s; {detail[:300]}", file=sys.stderr,
                  flush=True)
    _report(records)
    if args.json:
        commit = str(args.code) if args.code else subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        args.json.write_text(json.dumps({
            "commit": commit, "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.platform()}",
            "threads": args.threads, "records": [
                asdict(r) | {"refused_right": r.refused_right, "wrong_reason": r.wrong_reason,
                             "refused_wrongly": r.refused_wrongly} for r in records]}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
