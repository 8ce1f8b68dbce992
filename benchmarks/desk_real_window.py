"""The post-editing desk in a real window, keyboard only (issue 44's "must show"): under Xvfb, the app is
started, File > Post-edit file… (Ctrl+Shift+E) opened, the path of a 30-segment XLIFF typed into the file
dialog, 20 segments confirmed (typed, Ctrl+Enter), a screenshot of the desk taken (xwd -id), the app's own
Python process killed with SIGKILL, the app started again and the file opened again: it counts the confirmed
segments in the file before the kill (autosave) and after the reopening (its save of the replayed journal),
and asks `nmt-desktop tm lookup` for each of the 20. It waits for the autosave after the tenth
confirmation; the kill comes within the autosave's debounce of the twentieth, so those ten reach the file
through the journal and the reopening's save.

Responsiveness: the time from each Ctrl+Enter (xdotool) to the journal's fsync'd line (the file changes),
the first ten while the background suggestions run, the next ten after Esc stopped them: the ratio of the
medians says what the suggestion worker costs the GUI thread.

    .venv/bin/python benchmarks/desk_real_window.py --work /tmp/desk-run --screenshot resources/screenshots/desk.png
    .venv/bin/python benchmarks/desk_real_window.py --work /tmp/desk-opus --models /path/with/en-de  # another model

Needs Xvfb, xdotool and xwd (apt-get install xvfb xdotool x11-apps) and Pillow or ImageMagick's convert.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from adaptation_real_window import capture, focus, window as wait_window, xdo  # noqa: E402 - the same Xvfb driving

SEGMENTS = [
    ("The meeting starts at nine o'clock.", "Die Besprechung beginnt um neun Uhr."),
    ("Please close the window.", "Bitte schließen Sie das Fenster."),
    ("The train is late again.", "Der Zug hat wieder Verspätung."),
    ("We need more time for this project.", "Wir brauchen mehr Zeit für dieses Projekt."),
    ("My sister lives in Berlin.", "Meine Schwester wohnt in Berlin."),
    ("The children are playing in the garden.", "Die Kinder spielen im Garten."),
    ("Where is the nearest station?", "Wo ist der nächste Bahnhof?"),
    ("I have read the book twice.", "Ich habe das Buch zweimal gelesen."),
    ("The shop opens on Monday.", "Der Laden öffnet am Montag."),
    ("He forgot his keys at home.", "Er hat seine Schlüssel zu Hause vergessen."),
    ("The weather will be warm tomorrow.", "Das Wetter wird morgen warm."),
    ("She drinks coffee every morning.", "Sie trinkt jeden Morgen Kaffee."),
    ("The file %s could not be opened.", "Die Datei konnte nicht geöffnet werden."),  # %s left out: flagged
    ("Our team won the last game.", "Unser Team hat das letzte Spiel gewonnen."),
    ("The doctor will see you now.", "Die Ärztin empfängt Sie jetzt."),
    ("This road leads to the lake.", "Diese Straße führt zum See."),
    ("The price includes breakfast.", "Der Preis enthält das Frühstück."),
    ("Turn left at the church.", "Biegen Sie an der Kirche links ab."),
    ("The museum is closed on Sundays.", "Das Museum ist sonntags geschlossen."),
    ("I would like a glass of water.", "Ich hätte gern ein Glas Wasser."),
    ("The dog sleeps under the table.", ""),
    ("Save your work before you leave.", ""),
    ("The letter arrived yesterday.", ""),
    ("They are building a new bridge.", ""),
    ("You can pay by card.", ""),
    ("The concert was sold out.", ""),
    ("Check the settings and try again.", ""),
    ("The old house needs a new roof.", ""),
    ("Her brother plays the piano.", ""),
    ("The bus leaves in ten minutes.", ""),
]
CONFIRMED = 20
MEMORY = [("The bus leaves in five minutes.", "Der Bus fährt in fünf Minuten ab."),
          ("The old house needs a new door.", "Das alte Haus braucht eine neue Tür."),
          ("Her brother plays the guitar.", "Ihr Bruder spielt Gitarre.")]  # fuzzy matches of three segments


def xliff(path: Path) -> None:
    units = "\n".join(f'   <trans-unit id="t{i + 1}"><source>{s}</source></trans-unit>'
                      for i, (s, _) in enumerate(SEGMENTS))
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
                    'xmlns="urn:oasis:names:tc:xliff:document:1.2">\n <file original="demo.txt" '
                    'source-language="en" target-language="de" datatype="plaintext">\n  <body>\n'
                    f'{units}\n  </body>\n </file>\n</xliff>\n', encoding="utf-8")


def start_app(env: dict, log: Path) -> subprocess.Popen:
    """The app's own Python process (not a wrapper), so SIGKILL hits the app itself; its output in `log`."""
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-c", "import sys; from nmt_desktop.gui.app import main; "
                                 "sys.exit(main())"], env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)


def open_desk(path: Path) -> str:
    main = wait_window(r"→")  # the main window's title names the loaded model's languages
    focus(main)
    xdo("key", "ctrl+shift+e")
    dialog = wait_window("^Post-edit file$")
    focus(dialog)
    xdo("type", "--delay", "10", str(path))
    xdo("key", "Return")
    desk = wait_window(f"Post-edit {path.name}")
    xdo("windowsize", desk, "1500", "760")
    focus(desk)
    return desk


def journal_state(folder: Path) -> tuple:
    files = list(folder.glob("*.jsonl")) if folder.exists() else []
    return tuple((f.stat().st_ino, f.stat().st_size, f.stat().st_mtime_ns) for f in files)


def confirm(text: str, journal: Path) -> float:
    """Type `text`, Ctrl+Enter; seconds from the Ctrl+Enter to the journal's change."""
    xdo("key", "ctrl+a")
    xdo("type", "--delay", "12", text)
    before = journal_state(journal)
    t0 = time.perf_counter()
    xdo("key", "ctrl+Return")
    while journal_state(journal) == before:
        if time.perf_counter() - t0 > 120:
            raise TimeoutError("no journal line 120 s after Ctrl+Enter")
        time.sleep(0.002)
    return time.perf_counter() - t0


def journalled(folder: Path) -> dict[str, str]:
    """Source -> translation of what the journal holds (what the desk received, whatever xdotool typed)."""
    sources = {f"t{i + 1}": s for i, (s, _) in enumerate(SEGMENTS)}
    lines = [json.loads(line) for f in folder.glob("*.jsonl") for line in f.read_text(encoding="utf-8").splitlines()]
    return {sources[row["id"]]: row["target"] for row in lines}


def confirmed_in_file(path: Path) -> dict[str, str]:
    from nmt_desktop.core.bilingual import read_bilingual

    return {u.source: u.target for u in read_bilingual(path).units if u.confirmed}


def in_memory(env: dict, confirmed: dict[str, str]) -> int:
    """How many of the confirmed pairs `nmt-desktop tm lookup` finds exactly (score 100, the same target)."""
    found = 0
    cli = Path(sys.executable).parent / "nmt-desktop"
    for source, target in confirmed.items():
        out = subprocess.run([str(cli), "tm", "lookup", source, "--source", "en", "--target", "de", "--json"],
                             capture_output=True, text=True, env=env, check=True).stdout
        matches = json.loads(out.splitlines()[0]).get("matches", [])
        found += any(m["score"] >= 100 and m["target"] == target for m in matches)
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="a new folder for the file, the data and config")
    p.add_argument("--models", type=Path, help="a models folder with en-de (NMT_DESKTOP_MODELS_DIR); the bundled one")
    p.add_argument("--screenshot", type=Path, help="where the desk's PNG goes")
    p.add_argument("--display", default=":99")
    a = p.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    path = a.work / "demo.xlf"
    xliff(path)
    env = dict(os.environ, DISPLAY=a.display, NMT_DESKTOP_DATA_DIR=str(a.work / "data"),
               NMT_DESKTOP_CONFIG_DIR=str(a.work / "config"), QT_QPA_PLATFORM="xcb")
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    if a.models:
        env["NMT_DESKTOP_MODELS_DIR"] = str(a.models)
    os.environ.update(env)
    from nmt_desktop.core.memory import TranslationMemory
    from nmt_desktop.core.memory.entries import Entry, Pair

    with TranslationMemory() as memory:  # the data folder's memory, the app's
        memory.add([Entry(s, t, Pair.of("en", "de")) for s, t in MEMORY])
    xvfb = subprocess.Popen(["Xvfb", a.display, "-screen", "0", "1600x900x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = a.work / "data" / "desk-journal"
    report: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg()}
    try:
        time.sleep(1)  # Xvfb's socket
        app = start_app(env, a.work / "app-1.log")
        desk = open_desk(path)
        latencies = []
        for i, (_, target) in enumerate(SEGMENTS[:CONFIRMED]):
            if i == CONFIRMED // 2:
                if a.screenshot:
                    capture(desk, a.screenshot.with_name(a.screenshot.stem + "-running.png"))
                xdo("key", "Escape")  # stop the suggestions: the next ten are confirmed without them
                end = time.monotonic() + 120
                while len(confirmed_in_file(path)) < i and time.monotonic() < end:
                    time.sleep(0.1)  # the autosave, a moment after the tenth confirmation
                report["autosaved_after_10"] = len(confirmed_in_file(path))
            latencies.append(confirm(target, journal))
        if a.screenshot:
            for _ in range(9):  # down to the last rows: the memory's matches and unconfirmed segments in view
                xdo("key", "ctrl+Down")
            time.sleep(0.5)
            capture(desk, a.screenshot)
        os.kill(app.pid, signal.SIGKILL)
        report["app_exit"] = app.wait(60)
        at_kill = confirmed_in_file(path)
        confirmed = {**at_kill, **journalled(journal)}
        report["in_file_at_kill"], report["in_journal_at_kill"] = len(at_kill), len(journalled(journal))
        report["confirmed"] = len(confirmed)
        report["typed_as_meant"] = sum(confirmed.get(s) == t for s, t in SEGMENTS[:CONFIRMED])  # xdotool drops
        # a letter now and then (seen: ö, Ä) under Xvfb; the desk's own record is what the checks compare
        app = start_app(env, a.work / "app-2.log")
        open_desk(path)
        end = time.monotonic() + 300
        while confirmed_in_file(path) != confirmed and time.monotonic() < end:
            time.sleep(0.2)
        report["in_file_after_reopen"] = len(confirmed_in_file(path).items() & confirmed.items())
        report["in_memory"] = in_memory(env, confirmed)
        app.terminate()
        app.wait(60)
        first, last = latencies[:CONFIRMED // 2], latencies[CONFIRMED // 2:]
        report["ctrl_enter_to_journal_ms"] = {
            "during_suggestions_median": round(1000 * statistics.median(first), 1),
            "during_suggestions_max": round(1000 * max(first), 1),
            "after_esc_median": round(1000 * statistics.median(last), 1),
            "after_esc_max": round(1000 * max(last), 1),
            "ratio_of_medians": round(statistics.median(first) / statistics.median(last), 2)}
    except Exception:
        subprocess.run(["xwd", "-root", "-out", str(a.work / "failure.xwd")], env=os.environ)
        subprocess.run(["convert", str(a.work / "failure.xwd"), str(a.work / "failure.png")])
        print(json.dumps(report, indent=1))
        raise
    finally:
        xvfb.terminate()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
