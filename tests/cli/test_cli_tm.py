"""`nmt-desktop tm` in real child processes: import, lookup --json, export and stats on a real memory file, and a
kill -9 during a 100,000-segment import (the memory opens with every committed entry; importing again completes)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from cli_runner import REPO_ROOT, assert_one_error_line, run_cli
from lxml import etree

from nmt_desktop.core.memory import Pair, TranslationMemory
from nmt_desktop.core.memory.store import CHUNK

DATA = Path(__file__).resolve().parents[1] / "core" / "memory" / "data"
TATOEBA = REPO_ROOT.parent / "shared" / "data" / "tatoeba" / "en-de" / "train.tsv"


def _write_tmx(path: Path, pairs) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header creationtool="test" '
                  'creationtoolversion="1" segtype="sentence" o-tmf="none" adminlang="en" srclang="en" '
                  'datatype="plaintext"/><body>\n')
        out.writelines(f'<tu><tuv xml:lang="en"><seg>{escape(s)}</seg></tuv><tuv xml:lang="de"><seg>{escape(t)}'
                       f'</seg></tuv></tu>\n' for s, t in pairs)
        out.write("</body></tmx>\n")


def test_import_lookup_export_and_stats(tmp_path):
    tm = str(tmp_path / "tm.sqlite")
    small = tmp_path / "small.tmx"
    _write_tmx(small, [("Close the window.", "Schließen Sie das Fenster."),
                       ("Open the file menu.", "Öffnen Sie das Menü Datei."),
                       ("Save the file & quit.", "Speichern Sie die Datei & beenden Sie.")])
    proc = run_cli("tm", "import", str(small), str(DATA / "ImportTest2C.tmx"), "--tm", tm)
    assert proc.returncode == 0, proc.stderr
    assert f"{small}: 3 segments added, 0 already in the memory (merged)" in proc.stderr
    assert "the memory holds 5" in proc.stderr
    proc = run_cli("tm", "lookup", "Close the main window.", "--tm", tm, "--source", "en", "--target", "de", "--json")
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    best = answer["matches"][0]
    assert (best["source"], best["target"], best["exact"]) == ("Close the window.", "Schließen Sie das Fenster.", False)
    assert 75 <= best["score"] < 100 and best["differences"] == [{"op": "insert", "memory": "", "text": "main"}]
    proc = run_cli("tm", "lookup", "--tm", tm, "--source", "en", "--target", "de", "--json", "--min", "100",
                   stdin="Save the file & quit.\nNothing like it at all, really.\n")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [[m["target"] for m in line["matches"]] for line in lines] == [["Speichern Sie die Datei & beenden Sie."], []]
    proc = run_cli("tm", "lookup", "Close the window.", "--tm", tm)  # two pairs: say which
    assert "several language pairs (en-de, en-us-fr, en-us-en-gb)" in assert_one_error_line(proc, 2)
    out = tmp_path / "out.tmx"
    proc = run_cli("tm", "export", "-o", str(out), "--tm", tm)
    assert proc.returncode == 0 and "5 segments written" in proc.stderr, proc.stderr
    dtd = etree.DTD(str(DATA / "tmx14.dtd"))
    assert dtd.validate(etree.parse(str(out))), dtd.error_log.filter_from_errors()
    proc = run_cli("tm", "stats", "--json", "--tm", tm)
    stats = json.loads(proc.stdout)
    assert stats["entries"] == 5
    assert {(p["source_language"], p["target_language"], p["entries"]) for p in stats["pairs"]} == {
        ("en", "de", 3), ("en-us", "fr", 1), ("en-us", "en-gb", 1)}
    other = str(tmp_path / "other.sqlite")  # the export imports into a fresh memory as the same entries
    assert run_cli("tm", "import", str(out), "--tm", other).returncode == 0
    with TranslationMemory(tm) as a, TranslationMemory(other) as b:
        assert sorted((e.source, e.target, str(e.pair)) for e in a.entries()) == \
            sorted((e.source, e.target, str(e.pair)) for e in b.entries())


def test_bad_input_is_one_line(tmp_path):
    assert "no translation memory there" in assert_one_error_line(
        run_cli("tm", "stats", "--tm", str(tmp_path / "none.sqlite")), 1)
    bad = tmp_path / "bad.tmx"
    bad.write_text('<tmx version="1.4"><body>\n<tu>\n</body></tmx>', encoding="utf-8")
    line = assert_one_error_line(run_cli("tm", "import", str(bad), "--tm", str(tmp_path / "tm.sqlite")), 1)
    assert f"{bad}: line 3: not well-formed XML" in line
    line = assert_one_error_line(run_cli("tm", "import", str(tmp_path / "notes.txt"), "--tm", str(tmp_path / "tm.sqlite")), 1)
    assert "no such file" in line
    assert "tm needs an action" in assert_one_error_line(run_cli("tm"), 2)


def _committed(path: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT count(*) FROM entries").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # not made yet, or its tables not yet committed
        return 0


def test_kill_9_during_a_100k_import_keeps_every_committed_entry(tmp_path):
    if not TATOEBA.is_file():
        pytest.skip(f"the shared corpus {TATOEBA} is not here (shared/data/README.md)")
    pairs = []
    with open(TATOEBA, encoding="utf-8") as corpus:
        for line in corpus:
            source, target = line.rstrip("\n").split("\t")[:2]
            pairs.append((source, target))
            if len(pairs) == 100_000:
                break
    big, tm = tmp_path / "big.tmx", tmp_path / "tm.sqlite"
    _write_tmx(big, pairs)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    child = subprocess.Popen([sys.executable, "-m", "nmt_desktop", "tm", "import", str(big), "--tm", str(tm)],
                             cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while _committed(tm) < CHUNK:  # bounded by the child: it commits a chunk or ends (pytest-timeout above all)
            assert child.poll() is None, f"the import ended before it could be killed: {child.stderr.read()!r}"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        child.stderr.close()
    with TranslationMemory(tm, create=False) as memory:
        kept = [(e.source, e.target) for e in memory.entries()]
    distinct = list(dict.fromkeys(pairs))  # the corpus repeats a few pairs: merged, not stored twice
    assert CHUNK <= len(kept) < len(distinct)
    assert kept == distinct[:len(kept)]  # every entry before the cut, in order, and nothing after it
    proc = run_cli("tm", "import", str(big), "--tm", str(tm))
    assert proc.returncode == 0, proc.stderr
    assert f"{big}: {len(distinct) - len(kept)} segments added, {len(pairs) - len(distinct) + len(kept)} already" in proc.stderr
    with TranslationMemory(tm, create=False) as memory:
        assert memory.count(Pair("en", "de")) == len(distinct)
        assert memory.search(pairs[-1][0], Pair("en", "de"))[0].exact


def test_export_of_one_pair(tmp_path):
    tm = str(tmp_path / "tm.sqlite")
    assert run_cli("tm", "import", str(DATA / "ImportTest2C.tmx"), "--tm", tm).returncode == 0
    out = tmp_path / "fr.tmx"
    proc = run_cli("tm", "export", "-o", str(out), "--tm", tm, "--target", "fr")
    assert proc.returncode == 0 and "1 segment written" in proc.stderr, proc.stderr
    root = etree.parse(str(out)).getroot()
    assert root.find("header").get("srclang") == "en-us"
    assert [tuv.get("{http://www.w3.org/XML/1998/namespace}lang") for tuv in root.iter("tuv")] == ["en-us", "fr"]
