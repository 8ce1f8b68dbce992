"""Reliability: bad training corpora give exact errors (file and line) or counted skips.

Concern: training data comes from anywhere. `read_corpus` must either read it (normalising BOMs,
CRLF and whitespace, counting the pairs it skips in `CorpusStats`) or raise one `CorpusError`
that names the file and, where there is one, the line; never a traceback from deep inside, and
never silently misaligned pairs. `nmt-desktop train` must report the same error on one line.

Cases (seeded, many variants each; tests/core/training/test_data.py has one example of each kind):
  * aligned files with mismatched line counts (0 to 40 lines, with and without final newline,
    CRLF, BOM): the message names both files and both exact counts;
  * invalid UTF-8 (bare continuation bytes, 0xFF, overlong forms, surrogates, code points above
    U+10FFFF, sequences cut by a line end) planted at random lines of TSV and aligned files:
    the message gives the file, the line, the byte and its offset in the file;
  * random mixes of LF / CRLF line ends, a BOM, stray CRs, tabs and Unicode spaces: the pairs read
    equal the expected normalised pairs;
  * empty lines, whitespace-only sides and missing sides at random positions: read / kept /
    skipped_empty counted exactly; an all-empty corpus is an error;
  * 1 MB and 5 MB lines: read intact, filtered and counted with max_chars, and a 1 MB line with no
    tab is an error naming its line; all within a few seconds;
  * the train CLI on an invalid-UTF-8 corpus and on mismatched aligned files: exit 2 or 1 with a
    single "nmt-desktop: error:" line naming the file (two child processes).

Run: `OMP_NUM_THREADS=1 .venv/bin/python -m pytest tests/reliability/test_bad_corpora.py -q`;
NMT_CORPUS_CASES (default 25) sets the number of seeded variants per kind for a longer run.
"""

from __future__ import annotations

import codecs
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus
from nmt_desktop.core.training.corpus_formats import CorpusError, normalize_space
from limits import measured_work
from tiny_models import synthetic_pairs

REPO = Path(__file__).resolve().parents[2]
CASES = int(os.environ.get("NMT_CORPUS_CASES", "25"))
BAD_UTF8 = [b"\x80", b"\xbf", b"\xff", b"\xfe", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
            b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xc3\x28", b"\xe2\x82", b"\xf0\x9f\x98"]


def one_line(message: str) -> None:
    assert "\n" not in message and "\r" not in message, message
    assert message.endswith("."), message


def read_error(spec: CorpusSpec) -> str:
    with pytest.raises(CorpusError) as info:
        read_corpus(spec)
    one_line(str(info.value))
    return str(info.value)


def words(rng: random.Random) -> str:
    return " ".join(rng.choice(["red", "cat", "runs", "é", "中文", "naïve", "x"]) for _ in range(rng.randint(1, 5)))


# -- mismatched line counts ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(CASES))
def test_mismatched_aligned_files_name_both_files_and_counts(tmp_path, seed):
    rng = random.Random(seed)
    n_src = rng.randint(0, 40)
    n_tgt = rng.choice([n for n in range(0, 41) if n != n_src])
    src, tgt = tmp_path / "train.src", tmp_path / "train.tgt"
    for path, n in ((src, n_src), (tgt, n_tgt)):
        end = rng.choice(["\n", "\r\n"])
        text = end.join(words(rng) for _ in range(n))
        if n and rng.random() < 0.7:
            text += end  # a final newline does not add a line
        data = text.encode("utf-8")
        if n and rng.random() < 0.3:  # (a file holding only a BOM counts as one empty line)
            data = codecs.BOM_UTF8 + data
        path.write_bytes(data)
    message = read_error(CorpusSpec(src_path=src, tgt_path=tgt))
    assert message == (f"{src} has {n_src} lines but {tgt} has {n_tgt}; aligned files must have the same "
                       f"number of lines."), message


# -- invalid UTF-8 -------------------------------------------------------------------------------


def plant_bad_bytes(rng: random.Random, lines: list[bytes]) -> tuple[bytes, int]:
    """Insert an invalid sequence into a random line; return the file and the first bad offset."""
    i = rng.randrange(len(lines))
    bad = rng.choice(BAD_UTF8)
    line = lines[i]
    at = rng.randint(0, len(line))
    while at and at < len(line) and 0x80 <= line[at] < 0xC0:  # never split a valid character
        at -= 1
    lines[i] = line[:at] + bad + line[at:]
    data = b"\n".join(lines) + b"\n"
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    return data, info.value.start


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("layout", ["tsv", "aligned-src", "aligned-tgt"])
def test_invalid_utf8_names_file_line_byte_and_offset(tmp_path, seed, layout):
    rng = random.Random(seed * 7 + len(layout))
    pairs = synthetic_pairs(rng.randint(1, 60), seed=seed)
    if layout == "tsv":
        lines = [f"{s}\tnaïve {t}".encode() for s, t in pairs]
        data, start = plant_bad_bytes(rng, lines)
        bad_file = tmp_path / "train.tsv"
        if rng.random() < 0.3:
            data, start = codecs.BOM_UTF8 + data, start + 3
        bad_file.write_bytes(data)
        spec = CorpusSpec(path=bad_file)
    else:
        src, tgt = tmp_path / "train.src", tmp_path / "train.tgt"
        src.write_text("".join(f"{s}\n" for s, _ in pairs), encoding="utf-8")
        tgt.write_text("".join(f"{t} é\n" for _, t in pairs), encoding="utf-8")
        bad_file = src if layout == "aligned-src" else tgt
        lines = bad_file.read_bytes().split(b"\n")[:-1]
        data, start = plant_bad_bytes(rng, lines)
        bad_file.write_bytes(data)
        spec = CorpusSpec(src_path=src, tgt_path=tgt)
    line = data[:start].count(b"\n") + 1
    message = read_error(spec)
    assert message == (f"{bad_file}, line {line}: invalid UTF-8 (byte 0x{data[start]:02X} at byte offset {start} "
                       f"of the file)."), message


def test_utf16_and_latin1_files(tmp_path):
    pairs = synthetic_pairs(20, seed=3)
    text = "".join(f"{s}\tcafé {t}\n" for s, t in pairs)
    for encoding, words_ in (("utf-16", ("UTF-16", "save it as UTF-8")), ("latin-1", ("line 1", "invalid UTF-8"))):
        path = tmp_path / f"{encoding}.tsv"
        path.write_bytes(text.encode(encoding))
        message = read_error(CorpusSpec(path=path))
        assert str(path) in message and all(w in message for w in words_), message


# -- line ends, BOM, whitespace ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(CASES))
def test_mixed_line_ends_bom_and_spaces_read_as_expected(tmp_path, seed):
    rng = random.Random(1000 + seed)
    raw_pairs = []
    for _ in range(rng.randint(1, 50)):
        s, t = words(rng), words(rng)
        if rng.random() < 0.3:
            s = rng.choice([" ", "  ", "\u00a0", "\r", "\x0b"]).join(s.split(" ")) + rng.choice(["", " ", "\r", "  "])
        if rng.random() < 0.2:
            t = " " + t + "\t\tignored third column"
        raw_pairs.append((s, t))
    ends = [rng.choice([b"\n", b"\r\n"]) for _ in raw_pairs]
    bom = rng.random() < 0.5
    tsv = tmp_path / "c.tsv"
    tsv.write_bytes((codecs.BOM_UTF8 if bom else b"") + b"".join(
        f"{s}\t{t}".encode() + e for (s, t), e in zip(raw_pairs, ends)))
    expected = [(normalize_space(s), normalize_space(t.split("\t")[0])) for s, t in raw_pairs]
    corpus = read_corpus(CorpusSpec(path=tsv))
    assert corpus.pairs == [p for p in expected if p[0] and p[1]]
    assert corpus.stats.read == len(raw_pairs)
    assert "\ufeff" not in corpus.pairs[0][0]
    # the same as aligned files, with their own random line ends
    src, tgt = tmp_path / "c.src", tmp_path / "c.tgt"
    src.write_bytes((codecs.BOM_UTF8 if bom else b"") + b"".join(
        s.encode() + rng.choice([b"\n", b"\r\n"]) for s, _ in raw_pairs))
    tgt.write_bytes(b"".join(t.split("\t")[0].encode() + rng.choice([b"\n", b"\r\n"]) for _, t in raw_pairs))
    aligned = read_corpus(CorpusSpec(src_path=src, tgt_path=tgt))
    assert aligned.pairs == corpus.pairs


def test_unicode_line_separators_do_not_split_aligned_lines(tmp_path):
    src, tgt = tmp_path / "a.src", tmp_path / "a.tgt"
    seps = ["\u2028", "\u2029", "\x85", "\x0c", "\x1c", "\x1d", "\x1e", "\r"]
    src.write_text("".join(f"red{sep}cat\n" for sep in seps), encoding="utf-8")
    tgt.write_text("".join(f"rot {i}\n" for i in range(len(seps))), encoding="utf-8")
    corpus = read_corpus(CorpusSpec(src_path=src, tgt_path=tgt))
    assert len(corpus) == len(seps)
    assert [t for _, t in corpus.pairs] == [f"rot {i}" for i in range(len(seps))]


# -- empty lines and sides -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(CASES))
def test_empty_lines_and_sides_are_counted(tmp_path, seed):
    rng = random.Random(2000 + seed)
    lines, empty = [], 0
    for _ in range(rng.randint(1, 80)):
        kind = rng.choices(["pair", "blank", "spaces", "no-src", "no-tgt", "both-blank"], [6, 1, 1, 1, 1, 1])[0]
        line = {"pair": f"{words(rng)}\t{words(rng)}", "blank": "", "spaces": rng.choice([" ", "   ", "\r"]),
                "no-src": f" \t{words(rng)}", "no-tgt": f"{words(rng)}\t  ", "both-blank": "\t"}[kind]
        empty += kind != "pair"
        lines.append(line)
    tsv = tmp_path / "e.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept = len(lines) - empty
    if kept == 0:
        message = read_error(CorpusSpec(path=tsv))
        assert message.startswith(f"{tsv}: no usable sentence pairs ({len(lines)} read, {empty} with an empty side")
        return
    corpus = read_corpus(CorpusSpec(path=tsv))
    assert (corpus.stats.read, corpus.stats.kept, corpus.stats.skipped_empty) == (len(lines), kept, empty)
    assert len(corpus) == kept and all(s and t for s, t in corpus.pairs)
    assert corpus.stats.summary().startswith(f"{len(lines)} pairs read from {tsv}: {kept} kept, {empty} skipped")


@pytest.mark.parametrize("text", ["", "\n", "\n\n\n", "\r\n\r\n", "\ufeff", "\ufeff\n", "\t\n\t\n", " \t \n"])
def test_corpus_with_nothing_usable_is_an_error(tmp_path, text):
    tsv = tmp_path / "nothing.tsv"
    tsv.write_text(text, encoding="utf-8")
    message = read_error(CorpusSpec(path=tsv))
    assert message.startswith(f"{tsv}: no usable sentence pairs"), message


# -- very long lines -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1 << 20, 5 << 20])
def test_megabyte_lines(tmp_path, size):
    rng = random.Random(size)
    long_src = ("red cat runs " * (size // 13 + 1))[:size].strip()
    long_tgt = ("中" * size)[: size // 3]  # 3 bytes per character: about `size` bytes
    pairs = synthetic_pairs(10, seed=1)
    rows = [f"{s}\t{t}" for s, t in pairs]
    at = rng.randrange(len(rows) + 1)
    rows[at:at] = [f"{long_src}\t{long_tgt}"]
    tsv = tmp_path / "long.tsv"
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with measured_work(cpu_s=30, what="reading megabyte lines"):
        megabyte_lines_read_and_refused(tsv, rows, at, long_src, long_tgt, tmp_path)


def megabyte_lines_read_and_refused(tsv, rows, at, long_src, long_tgt, tmp_path) -> None:
    corpus = read_corpus(CorpusSpec(path=tsv))
    assert corpus.pairs[at] == (long_src, long_tgt) and len(corpus) == 11
    filtered = read_corpus(CorpusSpec(path=tsv, max_chars=1000))
    assert len(filtered) == 10 and filtered.stats.skipped_long == 1
    assert (long_src, long_tgt) not in filtered.pairs
    # a megabyte line without a tab: an error naming that line
    rows[at] = long_src
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    message = read_error(CorpusSpec(path=tsv))
    assert message == f"{tsv}, line {at + 1}: expected at least 2 tab-separated columns, found 1.", message[:300]
    # and as aligned files, with invalid UTF-8 at the very end of the long line
    src, tgt = tmp_path / "long.src", tmp_path / "long.tgt"
    src.write_bytes(long_src.encode() + b"\xff\nred\n")
    tgt.write_text(f"{long_tgt}\nrot\n", encoding="utf-8")
    message = read_error(CorpusSpec(src_path=src, tgt_path=tgt))
    assert message == f"{src}, line 1: invalid UTF-8 (byte 0xFF at byte offset {len(long_src.encode())} of the file)."


# -- the train command ---------------------------------------------------------------------------


def run_train(tmp_path: Path, *corpus_args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    cmd = [sys.executable, "-m", "nmt_desktop", "train", *corpus_args, "--out", str(tmp_path / "run"),
           "--preset", "tiny", "--max-steps", "2", "--threads", "1", "--progress", "json"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=REPO, env=env)


def assert_cli_error(proc: subprocess.CompletedProcess, *parts: str) -> None:
    assert proc.returncode in (1, 2), (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nmt-desktop: error: "), proc.stderr[-2000:]
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_train_cli_reports_bad_corpora_on_one_line(tmp_path):
    pairs = synthetic_pairs(50, seed=2)
    bad = tmp_path / "bad.tsv"
    data = "".join(f"{s}\t{t}\n" for s, t in pairs).encode()
    cut = data.index(b"\n", data.index(b"\n") + 1) + 1  # start of line 3
    bad.write_bytes(data[:cut] + b"red \xc3\x28 cat\trot\n" + data[cut:])
    assert_cli_error(run_train(tmp_path, "--train", str(bad)), str(bad), "line 3", "invalid UTF-8", "0xC3")
    src, tgt = tmp_path / "m.src", tmp_path / "m.tgt"
    src.write_text("".join(f"{s}\n" for s, _ in pairs), encoding="utf-8")
    tgt.write_text("".join(f"{t}\n" for _, t in pairs[:-3]), encoding="utf-8")
    assert_cli_error(run_train(tmp_path, "--train-src", str(src), "--train-tgt", str(tgt)),
                     f"{src} has 50 lines but {tgt} has 47")
