"""Instant adaptation in a real window (issue 45's "must show"): under Xvfb the app starts with the bundled en-de
model and a fresh memory; File > Post-edit file… opens an XLIFF of eleven Multi30k-style image captions (a domain
the Tatoeba-trained model never saw); the first ten are confirmed in the desk (typed, Ctrl+Enter: each goes into
the memory); then the eleventh is typed on the Translate tab and translated (Ctrl+Enter). The output's tokens that
came from the memory are tinted and underlined; the pointer is moved onto one of them (found by the tint's colour
in a capture) so its tooltip names the memory segment; `xwd -id` of the main window is the screenshot.

It prints the eleventh's translation by the plain model (the core, adaptation off) beside what the window showed
(read back with `nmt-desktop translate --memory`, adaptation on, the same memory file).

    .venv/bin/python benchmarks/adaptation_real_window.py --work /tmp/adapt-run \
        --screenshot resources/screenshots/adaptation.png

With --learned the ten captions are confirmed by `nmt-desktop translate --memory M --learn` before the app starts
(online learning keeps the learned weights beside the memory), and the app, started on that memory, loads them: the
eleventh is translated by the learned weights and the memory's neighbours together, as the CLI translates it.

Needs Xvfb, xdotool, xwd and ImageMagick's convert, and Pillow.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CAPTIONS = [  # the first ten "Two dogs" captions of Multi30k's train split, nine words or fewer, as translated there
    ("Two dogs are wrestling in a grassy field.", "Zwei Hunde balgen sich auf einer Wiese."),
    ("Two dogs are playing together on green grass.", "Zwei Hunde spielen zusammen auf grünem Gras."),
    ("Two dogs shaking off water droplets on a beach.", "Zwei Hunde schütteln am Strand Wassertropfen ab."),
    ("Two dogs in the water fighting over a stick.", "Zwei Hunde, die im Wasser um einen Stock kämpfen."),
    ("Two dogs play in a grassy field.", "Zwei Hunde spielen auf einer Wiese."),
    ("Two dogs playing with each other", "Zwei Hunde spielen miteinander"),
    ("Two dogs wrestle in the ground.", "Zwei Hunde balgen sich auf dem Boden."),
    ("Two dogs and a puppy.", "Zwei Hunde und ein Welpe."),
    ("Two dogs play in the grass.", "Zwei Hunde spielen im Gras."),
    ("Two dogs are running through the surf.", "Zwei Hunde rennen durch die Brandung."),
]
ELEVENTH = "Two dogs are wrestling in a grassy field!"  # the same scene again, another caption's punctuation
MEMORY_TINT = {"#dcfce7", "#14392a"}  # gui/theme.py memory_background, light and dark


def xliff(path: Path) -> None:
    units = "\n".join(f'   <trans-unit id="t{i + 1}"><source>{s}</source></trans-unit>'
                      for i, s in enumerate([s for s, _ in CAPTIONS] + [ELEVENTH]))
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
                    'xmlns="urn:oasis:names:tc:xliff:document:1.2">\n <file original="captions.txt" '
                    'source-language="en" target-language="de" datatype="plaintext">\n  <body>\n'
                    f'{units}\n  </body>\n </file>\n</xliff>\n', encoding="utf-8")


def xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, env=os.environ).stdout.strip()


def wait_for(what: str, check, timeout: float = 300):
    """Poll `check()` until it gives something true (the app's own state, seen from outside)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not after {timeout} s")


def window(name: str) -> str:
    return wait_for(f"a window named {name!r}",
                    lambda: (xdo("search", "--onlyvisible", "--name", name).split() or [None])[-1])


def focus(win: str) -> None:
    xdo("windowraise", win)  # no window manager under Xvfb: raise and focus by hand
    xdo("windowfocus", "--sync", win)


def capture(win: str, out: Path) -> Path:
    raw = out.with_suffix(".xwd")
    subprocess.run(["xwd", "-id", win, "-out", str(raw)], check=True, env=os.environ)
    subprocess.run(["convert", str(raw), str(out)], check=True)
    raw.unlink()
    return out


def geometry(win: str) -> tuple[int, int, int, int]:
    """x, y, width, height of a window on the screen."""
    values = dict(line.split("=") for line in xdo("getwindowgeometry", "--shell", win).splitlines() if "=" in line)
    return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])


def with_tooltip(main_window: str, shot: Path, known: set[str]) -> str | None:
    """The tooltip is a window of its own, which `xwd -id` of the main window leaves black: capture it the same
    way and put it where it is on the screen."""
    mx, my, mw, mh = geometry(main_window)
    for win in xdo("search", "--onlyvisible", "--name", ".*").split():
        x, y, w, h = geometry(win)
        if win in known or w >= mw or h >= mh or not (mx <= x < mx + mw and my <= y < my + mh):
            continue
        part = capture(win, shot.with_name("tooltip.png"))
        subprocess.run(["convert", str(shot), str(part), "-geometry", f"+{x - mx}+{y - my}", "-composite",
                        str(shot)], check=True)
        part.unlink()
        return win
    return None


def tinted_point(image: Path) -> tuple[int, int] | None:
    """The middle of the first run of memory-tinted pixels in the capture (a token from the memory)."""
    from PIL import Image

    picture = Image.open(image).convert("RGB")
    width, height = picture.size
    pixels = picture.load()
    tints = {tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in MEMORY_TINT}
    for y in range(0, height, 2):
        xs = [x for x in range(width) if pixels[x, y] in tints]
        if len(xs) >= 20:
            return xs[0] + 10, y
    return None


def memory_count(path: Path) -> int:
    from nmt_desktop.core.memory import Pair, TranslationMemory

    if not path.is_file():
        return 0
    with TranslationMemory(path, create=False) as memory:
        return memory.count(Pair.of("en", "de"))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="a new folder for the file, the data and config")
    p.add_argument("--screenshot", type=Path, required=True)
    p.add_argument("--display", default=":145", help="an X display no one else uses")
    p.add_argument("--learned", action="store_true",
                   help="the ten captions confirmed by `translate --memory M --learn` before the app starts (online "
                        "learning keeps its weights beside the memory, which the app loads), not in the desk")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still ends its app and Xvfb
    a.work.mkdir(parents=True, exist_ok=True)
    path = a.work / "captions.xlf"
    xliff(path)
    env = dict(os.environ, DISPLAY=a.display, NMT_DESKTOP_DATA_DIR=str(a.work / "data"),
               NMT_DESKTOP_CONFIG_DIR=str(a.work / "config"), QT_QPA_PLATFORM="xcb")
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    os.environ.update(env)
    memory = a.work / "data" / "memory" / "memory.sqlite"
    xvfb = subprocess.Popen(["Xvfb", a.display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = None
    try:
        wait_for("Xvfb", lambda: subprocess.run(["xdpyinfo"], capture_output=True, env=env).returncode == 0)
        cli = Path(sys.executable).parent / "nmt-desktop"
        if a.learned:
            memory.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(cli), "translate", "-m", "models/en-de", "--memory", str(memory), "--learn"],
                           input="".join(f"{s}\t{t}\n" for s, t in CAPTIONS), text=True, env=env, cwd=REPO,
                           check=True, stdout=subprocess.DEVNULL)
            learned = sorted(memory.parent.glob(f"{memory.name}.learned-*.safetensors"))
            print(f"learned by the CLI: {memory_count(memory)} segments, {[f.name for f in learned]}", flush=True)
        app = subprocess.Popen([sys.executable, "-m", "nmt_desktop"], env=env, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        main_window = window("→")  # the title names the loaded model's languages
        xdo("windowsize", main_window, "1560", "960")
        xdo("windowmove", main_window, "0", "0")
        focus(main_window)
        desk = None
        if not a.learned:
            xdo("key", "ctrl+shift+e")
            dialog = window("^Post-edit file$")
            focus(dialog)
            xdo("type", "--delay", "10", str(path))
            xdo("key", "Return")
            desk = window(f"Post-edit {path.name}")
            focus(desk)
            for n, (_, target) in enumerate(CAPTIONS, start=1):
                xdo("key", "ctrl+a")
                xdo("type", "--delay", "8", target)
                xdo("key", "ctrl+Return")
                wait_for(f"confirmation {n} in the memory", lambda: memory_count(memory) >= n, 120)
            print(f"confirmed in the desk: {memory_count(memory)} segments in {memory}", flush=True)
            xdo("windowunmap", desk)  # out of the way (no window manager to minimize it)
        focus(main_window)
        xdo("key", "ctrl+1")  # View > Translate tab
        xdo("mousemove", "--window", main_window, "250", "170", "click", "1")  # the source box
        xdo("key", "ctrl+a")
        xdo("type", "--delay", "10", ELEVENTH)
        xdo("key", "ctrl+Return")
        probe = a.work / "probe.png"
        point = wait_for("a token from the memory in the output", lambda: tinted_point(capture(main_window, probe)))
        xdo("mousemove", "--window", main_window, str(point[0]), str(point[1] + 4))
        time.sleep(1.5)  # the tooltip's own delay (Qt shows it after the pointer rests): only for the picture
        capture(main_window, a.screenshot)
        tip = with_tooltip(main_window, a.screenshot, {main_window, desk} - {None})
        print(f"tooltip window: {tip}", flush=True)
        print(f"screenshot: {a.screenshot} (pointer on the memory token at {point})", flush=True)
        plain = subprocess.run([str(cli), "translate", "-m", "models/en-de", ELEVENTH], capture_output=True,
                               text=True, env=env, cwd=REPO).stdout.strip()
        adapted = subprocess.run([str(cli), "translate", "-m", "models/en-de", "--memory", str(memory), ELEVENTH],
                                 capture_output=True, text=True, env=env, cwd=REPO).stdout.strip()
        print(f"eleventh: {ELEVENTH}\n  plain model: {plain}\n  with the memory: {adapted}", flush=True)
    finally:
        if app is not None:
            app.terminate()
            app.wait(60)
        xvfb.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
