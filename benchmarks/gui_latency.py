"""Desktop app latency: Translate -> first/last token painted, start-up to window shown, event-loop stalls.

Everything runs in the real app (`nmt_desktop.gui.app.MainWindow`), offscreen
(QT_QPA_PLATFORM=offscreen) unless a display is set, with temporary settings and log folders
(NMT_DESKTOP_CONFIG_DIR / NMT_DESKTOP_LOG_DIR), so the user's settings are neither read nor changed.

(a) Translate -> first / last token painted. The benchmark triggers the window's Translate > Translate
    action (the Ctrl+Enter shortcut; it calls `TranslatePanel.translate()`) and takes t0 just before.
    (The Translate button itself is not used: its `clicked(bool)` passes `False` as the text, see the
    note in benchmarks/RESULTS.md.) A check runs on every change of the output text
    (`output.textChanged`), on `translationFinished`, and from a 1 ms Qt.PreciseTimer poll:
    * first token: the output pane shows a token (its plain text, minus the streaming cursor, is not
      empty) and `view.painted_rows() >= 1`;
    * last token: the request has finished (`translationFinished`) and `view.painted_rows()` equals
      the best hypothesis' length.
    `painted_rows()` counts rows handed to the ImageItems, not pixels, so the reported time is the
    first *Paint event* of both the output pane's viewport and the attention grid's viewport after
    the condition held (an event filter on both viewports records Paint events); `first_data_ms` /
    `last_data_ms` in --json give the condition times alone. The worker's own first `step` and `finished` emissions are
    recorded too (a direct-connected slot in the worker thread) to split model time from GUI time.
    Per token: (last - first token painted) / (tokens - 1); beside it the median interval between the grid
    viewport's first Paint events after each new row (rows that arrive together share a paint: 0) and the
    median interval between the worker's steps (model time per token).
(b) Process start -> window shown. The parent takes time.time() just before spawning
    `python benchmarks/gui_latency.py --child-startup MODEL`, which imports nmt_desktop.cli.main and runs
    the real launch: plain `nmt-desktop` (`cli_main([])`, the model being the last-used one in a fresh
    settings folder; --startup app, the default) or `nmt-desktop gui -m MODEL` (--startup gui), with
    MainWindow subclassed only to report: "shown" = after the first paint of the main window (the
    whole first frame), "ready" = the first paint of the Translate panel (it replaces the "Loading…"
    page once the model has loaded). The first run is reported as "first" (the OS file cache is not dropped, and the
    parent has already imported torch and PySide6, so it is not a true cold start); the rest are warm.
(c) Longest event-loop stall while a translation streams: a 5 ms Qt.PreciseTimer records the time of
    each timeout from the trigger until the last token is painted; stall = max gap - 5 ms. The same
    timer with no translation running gives the machine's own baseline. Beside it, the GUI thread's CPU
    time inside one gap (time.thread_time() at each tick), the largest: about the stall on a machine where
    nothing else wants the CPU (the app's own decoder threads still compete). The first translation after the
    model loaded (a warm-up, greedy then beam, kept out of the medians) is reported on its own row: it
    builds the attention grid for the model's layers x heads.

Model: `-m MODEL`, else the bundled default model (`core.locations.default_model_path()`), else a
stand-in built in a temporary folder: the "small" preset (d 256, 3+3 layers, 4 heads, ffn 1024) with
random weights (seed 0) and a joint BPE vocabulary trained (target 8000) on 2,000 generated lines of
English (words from the Python standard library's docstrings plus the default sentence). With the
stand-in, exactly `--tokens` (default 40) target tokens are generated: Min length = N, Max length =
0 x n + N in the panel's decoding options. With a real model, the output length is the model's own
unless --tokens is given (the same forcing: `--tokens 40` streams exactly 40 tokens from any model,
random weights included). The table's header names the attention grid's layers x heads and cells.
--no-startup skips (b). benchmarks/opus_size_app.py runs this for the bundled and an OPUS-MT-size
model alternately (issue 29).

    python benchmarks/gui_latency.py --repeats 5
    python benchmarks/gui_latency.py -m models/en-de --json
"""

from __future__ import annotations

# Only the standard library at the top: the start-up child imports this file before the app.
import argparse
import ast
import datetime as _dt
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEFAULT_TEXT = ("The old man who lives next to the station told me yesterday that the trains will not run on "
                "Sunday because of the storm.")
TICK_MS = 5
POLL_MS = 1
GOALS = {"first_token_ms": 150.0, "shown_s": 3.0, "stall_ms": 50.0}
RUN_TIMEOUT_S = 300


# --- machine load ------------------------------------------------------------------------------------

def _load_meter() -> Any:
    """decode_speed.LoadMeter, imported only when measuring (it imports torch; the start-up child must not)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from decode_speed import LoadMeter

    return LoadMeter()


def machine_info() -> dict:
    import torch

    name = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        name = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name:")), name)
    except (OSError, subprocess.CalledProcessError):
        pass
    import PySide6

    return {"cpu": name, "logical_cpus": os.cpu_count(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "pyside6": PySide6.__version__,
            "python": platform.python_version(), "qt_platform": os.environ.get("QT_QPA_PLATFORM", "(default)"),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "other_load_cpus": None}


# --- environment ---------------------------------------------------------------------------------------

def _app_env(tmp: Path) -> dict[str, str]:
    """Environment for the app: offscreen without a display, throw-away settings and logs."""
    env = dict(os.environ)
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env["QT_QPA_PLATFORM"] = "offscreen"
    env["NMT_DESKTOP_CONFIG_DIR"] = str(tmp / "config")
    env["NMT_DESKTOP_LOG_DIR"] = str(tmp / "logs")
    return env


# --- the stand-in model -----------------------------------------------------------------------------

def standin_corpus(lines: int = 2000, seed: int = 0) -> list[str]:
    """Varied English lines: words from stdlib docstrings, plus shuffles of the default sentence."""
    words: list[str] = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py"))[:250]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    words.extend(re.findall(r"[A-Za-z][a-z]{1,14}", doc))
    base = DEFAULT_TEXT.rstrip(".").split()
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        if i % 10 == 0:
            ws = base[:]
            rng.shuffle(ws)
        else:
            ws = [rng.choice(words) for _ in range(rng.randint(6, 24))]
        text = " ".join(ws)
        out.append(text[:1].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!"]))
    return out


def build_standin(folder: Path) -> Path:
    from nmt_desktop.core.config import PRESETS, ModelConfig
    from nmt_desktop.core.formats.model_folder import save_model
    from nmt_desktop.core.tokenizer import TokenizerPair
    from nmt_desktop.core.model.transformer import build_model

    lines = standin_corpus()
    tok = TokenizerPair.train(lines, lines, vocab_size=8000, joint=True)
    v = tok.source.vocab_size
    cfg = ModelConfig(src_vocab_size=v, tgt_vocab_size=v, shared_vocab=True, max_positions=256, dropout=0.0,
                      **PRESETS["small"])
    model = build_model(cfg, seed=0).eval()
    card = {"name": "random-weight small (gui_latency stand-in)",
            "data": "none: random weights; BPE vocabulary from 2,000 generated English lines"}
    return save_model(folder, model, tok, card=card)


# --- (b) start-up, child side ---------------------------------------------------------------------------

def child_startup(model: str, how: str) -> int:
    """Run `nmt-desktop` (how="app") or `nmt-desktop gui -m MODEL` (how="gui"); print SHOWN/READY
    wall-clock times and quit once ready."""
    from nmt_desktop.cli.main import main as cli_main
    from nmt_desktop.gui import app as gui_app
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    class ReadyFilter(QObject):
        def __init__(self, window: Any) -> None:
            super().__init__(window)
            self.window = window

        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt name
            if event.type() == QEvent.Paint and self.window.ready_at is None:
                self.window.ready_at = time.time()
                QTimer.singleShot(0, self.window.report_ready)
            return False

    class ProbeWindow(gui_app.MainWindow):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.shown_at: float | None = None
            self.ready_at: float | None = None
            super().__init__(*args, **kwargs)
            self._filter = ReadyFilter(self)
            self.translate_panel.installEventFilter(self._filter)

        def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt name
            super().paintEvent(event)
            if self.shown_at is None:
                self.shown_at = -1.0
                QTimer.singleShot(0, self.report_shown)  # after the rest of this first frame is painted

        def report_shown(self) -> None:
            self.shown_at = time.time()
            print(f"SHOWN {self.shown_at:.6f}", flush=True)

        def report_ready(self) -> None:
            print(f"READY {self.ready_at:.6f}", flush=True)
            # `gui -m` may still be in its own processEvents() loop, where quit() does nothing: repeat it
            self._quit_timer = QTimer(self, interval=10)
            self._quit_timer.timeout.connect(QApplication.quit)
            self._quit_timer.start()

    gui_app.MainWindow = ProbeWindow  # type: ignore[misc]
    if how == "gui":
        return int(cli_main(["gui", "-m", model]) or 0)
    # plain `nmt-desktop`: the model comes from the settings' last_model (as after an earlier session)
    from nmt_desktop.gui.settings import Settings

    settings = Settings()
    settings.set("last_model", str(Path(model).resolve()))
    settings.save()
    return int(cli_main([]) or 0)


def measure_startup(model: Path, runs: int, tmp: Path, how: str) -> list[dict]:
    results = []
    for i in range(runs):
        env = _app_env(tmp / f"startup{i}")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child-startup", str(model), "--startup", how]
        with _load_meter() as load:
            t0 = time.time()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=REPO)
            t_exit = time.time()
        marks = dict(ln.split() for ln in proc.stdout.splitlines() if ln.startswith(("SHOWN ", "READY ")))
        if proc.returncode != 0 or "SHOWN" not in marks or "READY" not in marks:
            raise SystemExit(f"start-up child failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}")
        results.append({"shown_s": float(marks["SHOWN"]) - t0, "ready_s": float(marks["READY"]) - t0,
                        "exit_s": t_exit - t0, "other_load_cpus": load.other_cpus})
    return results


# --- (a) and (c): in-process --------------------------------------------------------------------------

class Bench:
    def __init__(self, model: Path, text: str, tokens: int) -> None:
        from PySide6.QtCore import QEvent, QObject, Qt, QTimer
        from PySide6.QtGui import QAction

        from nmt_desktop.gui.app import MainWindow, create_app, wait_until

        self.Qt, self.QTimer, self.QEvent = Qt, QTimer, QEvent
        self.app = create_app()
        self.window = MainWindow(model=str(model))
        self.window.show_error = lambda message, title="Error": self.errors.append(message)  # never a dialog
        self.errors: list[str] = []
        self.window.errorShown.connect(self.errors.append)
        self.window.resize(1360, 860)
        self.window.show()
        wait_until(lambda: self.window.info is not None or bool(self.errors), 300, "the model to load")
        if self.window.info is None:
            raise SystemExit(f"cannot load {model}: {self.errors}")
        self.panel = self.window.translate_panel
        self.panel.source.setPlainText(text)
        self.tokens = tokens
        # Translate > Translate (Ctrl+Enter). Not translate_button.click(): clicked(bool) passes
        # checked=False into TranslatePanel.translate(text=...), which then raises TypeError.
        self.translate_action = next(a for a in self.window.findChildren(QAction)
                                     if a.text() == "&Translate" and not a.menu())

        bench = self

        class PaintFilter(QObject):
            def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt name
                if event.type() == QEvent.Paint:
                    bench.paints[obj].append(time.perf_counter())
                return False

        self._filter = PaintFilter()
        self.viewports = {"output": self.panel.output.viewport(), "grid": self.panel.view.grid.viewport()}
        self.paints: dict[Any, list[float]] = {vp: [] for vp in self.viewports.values()}
        for vp in self.viewports.values():
            vp.installEventFilter(self._filter)
        # worker-thread marks (direct connection: runs in the worker thread as the signal is emitted)
        self.worker_steps: list[float] = []
        self.worker_done: list[float] = []
        self.panel.worker.step.connect(lambda *_: self.worker_steps.append(time.perf_counter()), Qt.DirectConnection)
        self.panel.worker.finished.connect(lambda *_: self.worker_done.append(time.perf_counter()),
                                           Qt.DirectConnection)

    def set_mode(self, beam: int) -> None:
        opts = self.panel.options
        opts.set_beam(beam)
        if self.tokens:
            opts.min_length.setValue(self.tokens)
            opts.max_len_a.setValue(0.0)
            opts.max_len_b.setValue(self.tokens)
        cfg = opts.config()
        assert cfg.beam_size == beam and (not self.tokens or (cfg.min_length, cfg.max_len_b) == (self.tokens,) * 2)

    def _shows_token(self) -> bool:
        text = self.panel.output.toPlainText().replace("▍", "").replace("\u00a0", " ").strip()
        return bool(text)

    def _paint_after(self, t: float, grid_t: float | None = None) -> float | None:
        """Time by which both viewports have had a Paint event at or after t (the grid's: at or after grid_t when
        given, the last time its cells were handed images: a finish that adds no row repaints nothing) (None if
        not yet)."""
        times = []
        for name, vp in self.viewports.items():
            since = min(grid_t, t) if name == "grid" and grid_t is not None else t
            later = [p for p in self.paints[vp] if p >= since]
            if not later:
                return None
            times.append(later[0])
        return max(times)

    def idle_stall(self, seconds: float = 2.0) -> float:
        """Longest 5 ms timer gap minus 5 ms with nothing running (the machine's own jitter)."""
        from PySide6.QtCore import QEventLoop

        ticks: list[float] = []
        timer = self.QTimer(interval=TICK_MS)
        timer.setTimerType(self.Qt.PreciseTimer)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        loop = QEventLoop()
        timer.start()
        self.QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()
        timer.stop()
        return (max(b - a for a, b in zip(ticks, ticks[1:])) * 1000 - TICK_MS) if len(ticks) > 1 else float("nan")

    def run_once(self) -> dict:
        from PySide6.QtCore import QEventLoop

        panel = self.panel
        st: dict[str, Any] = {"first_data": None, "last_data": None, "finished": False, "target": None,
                              "armed": False, "grid_counts": None, "grid_changed": None}
        row_times: list[float] = []  # row_times[k]: when painted_rows() was first seen >= k + 1
        ticks: list[float] = []
        self.worker_steps.clear()
        self.worker_done.clear()
        for lst in self.paints.values():
            lst.clear()
        loop = QEventLoop()

        def check() -> None:
            now = time.perf_counter()
            if not st["armed"]:
                return
            rows = panel.view.painted_rows()
            counts = (getattr(panel.view, "full_repaints", None), getattr(panel.view, "row_paints", None))
            if counts[0] is not None and counts != st["grid_counts"]:  # the cells were handed new images
                st["grid_counts"], st["grid_changed"] = counts, now
            if panel.view.streaming or st["finished"]:
                while len(row_times) < rows:
                    row_times.append(now)
            if st["first_data"] is None and self._shows_token() and rows >= 1:
                st["first_data"] = now
            if st["finished"] and st["last_data"] is None:
                state = panel.document.current()
                if state is not None and state.translation is not None:
                    st["target"] = len(state.translation.best.tokens)
                    if panel.view.painted_rows() == st["target"]:
                        st["last_data"] = now
            if st["last_data"] is not None and st["first_data"] is not None:
                if (self._paint_after(st["last_data"], st["grid_changed"]) is not None
                        and self._paint_after(st["first_data"]) is not None):
                    loop.quit()
                elif now - st["last_data"] > 2.0:  # no Paint event came: report the condition times only
                    loop.quit()

        def finished(_request: int) -> None:
            st["finished"] = True
            check()

        poll = self.QTimer(interval=POLL_MS)
        poll.setTimerType(self.Qt.PreciseTimer)
        poll.timeout.connect(check)
        tick = self.QTimer(interval=TICK_MS)
        tick.setTimerType(self.Qt.PreciseTimer)
        tick_cpu: dict[float, float] = {}  # tick time -> the GUI thread's CPU time then

        def on_tick() -> None:
            now = time.perf_counter()
            ticks.append(now)
            tick_cpu[now] = time.thread_time()

        tick.timeout.connect(on_tick)
        panel.output.textChanged.connect(check)
        panel.translationFinished.connect(finished)
        guard = self.QTimer(singleShot=True, interval=RUN_TIMEOUT_S * 1000)
        guard.timeout.connect(loop.quit)
        tick.start()
        poll.start()
        guard.start()
        try:
            t_wait = time.perf_counter() + 0.05  # let the tick timer settle
            while time.perf_counter() < t_wait:
                self.app.processEvents()
            st["armed"] = True
            cpu0 = time.thread_time()
            t0 = time.perf_counter()
            self.translate_action.trigger()
            if not panel.running:
                raise SystemExit(f"Translate did not start a request: {self.errors}")
            loop.exec()
            cpu_end = time.thread_time()
            gui_cpu = cpu_end - cpu0
        finally:
            for t in (tick, poll, guard):
                t.stop()
            panel.output.textChanged.disconnect(check)
            panel.translationFinished.disconnect(finished)
        if st["last_data"] is None or st["first_data"] is None:
            raise SystemExit(f"the translation did not finish painting within {RUN_TIMEOUT_S}s: {self.errors}")
        first_paint = self._paint_after(st["first_data"])
        last_paint = self._paint_after(st["last_data"], st["grid_changed"])
        end = last_paint if last_paint is not None else st["last_data"]
        window = [t for t in ticks if t0 <= t <= end]
        edges = [t0] + window + [end]
        gaps = [b - a for a, b in zip(edges, edges[1:])]
        stall_end = edges[1 + max(range(len(gaps)), key=gaps.__getitem__)] if gaps else None
        # the GUI thread's CPU time inside each gap: what the stall would be if nothing else wanted the CPU
        # (the last gap ends a little after `end`, when the loop returned: an upper bound there)
        cpus = [cpu0] + [tick_cpu[t] for t in window] + [cpu_end]
        gap_cpu = [b - a for a, b in pairwise(cpus)]
        longest = max(range(len(gaps)), key=gaps.__getitem__) if gaps else None
        ms = lambda t: None if t is None else round((t - t0) * 1000, 2)  # noqa: E731
        target = st["target"] or 0
        # per token: the grid viewport's first Paint event after each new row was handed to the cells
        grid_paints = self.paints[self.viewports["grid"]]
        row_paints = [next((p for p in grid_paints if p >= t), None) for t in row_times[:target]]
        row_paints = [p for p in row_paints if p is not None]
        def gaps_ms(ts: list[float]) -> list[float]:
            return [(b - a) * 1000 for a, b in pairwise(ts)]

        per_token = (None if first_paint is None or last_paint is None or target < 2
                     else round((last_paint - first_paint) * 1000 / (target - 1), 2))
        return {
            "per_token_ms": per_token,
            "token_paint_interval_ms": (round(statistics.median(gaps_ms(row_paints)), 2)
                                        if len(row_paints) > 1 else None),
            "token_paint_interval_max_ms": (round(max(gaps_ms(row_paints)), 2) if len(row_paints) > 1 else None),
            "worker_step_interval_ms": (round(statistics.median(gaps_ms(self.worker_steps)), 2)
                                        if len(self.worker_steps) > 1 else None),
            "rows_seen": len(row_times),
            "first_ms": ms(first_paint), "first_data_ms": ms(st["first_data"]),
            "last_ms": ms(last_paint), "last_data_ms": ms(st["last_data"]),
            "worker_first_step_ms": ms(self.worker_steps[0]) if self.worker_steps else None,
            "worker_done_ms": ms(self.worker_done[0]) if self.worker_done else None,
            "done_to_painted_ms": (round((end - self.worker_done[0]) * 1000, 2) if self.worker_done else None),
            "stall_ms": round(max(gaps) * 1000 - TICK_MS, 2) if gaps else None,
            "stall_end_ms": ms(stall_end) if gaps else None,
            "stall_cpu_ms": round(gap_cpu[longest] * 1000, 2) if gaps else None,
            "max_gap_cpu_ms": round(max(gap_cpu) * 1000, 2) if gaps else None,
            "mean_tick_ms": round((end - t0) * 1000 / max(1, len(window)), 2),
            "gui_thread_cpu_ms": round(gui_cpu * 1000, 2),
            "ticks": len(window),
            "target_tokens": st["target"], "steps_streamed": len(self.worker_steps),
        }

    def grid_info(self) -> dict:
        """What the attention grid showed at the end: cells, layers x heads, and how many cells lie wholly
        inside the scroll area's visible part (the rest is reached by scrolling)."""
        from PySide6.QtCore import QRect

        view = self.panel.view
        grid, scroll = view.grid, view.scroll
        shown = QRect(-grid.x(), -grid.y(), scroll.viewport().width(), scroll.viewport().height())
        visible = 0
        for cell in view._cells:  # a read-only look at the grid's cells
            rect = grid.mapFromScene(cell.box.sceneBoundingRect()).boundingRect()
            visible += shown.contains(rect)
        return {"kind": view.kind(), "layers_x_heads": [view._layers, view._heads],
                "cells": len(view._cells), "cells_fully_visible": visible,
                "grid_px": [grid.width(), grid.height()],
                "viewport_px": [scroll.viewport().width(), scroll.viewport().height()],
                "grid_visible": grid.isVisible() and view.isVisible(),
                "focus_view_open": not view.focus_view.isHidden()}

    def close(self) -> None:
        from nmt_desktop.gui.lifetime import close_down

        self.window.close()
        close_down(self.app)  # threads joined, the window deleted: the next bench starts clean


# --- driver -------------------------------------------------------------------------------------------

def _stats(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
            "max": round(max(values), 2)}


def run(args: argparse.Namespace) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="gui_latency_"))
    try:
        return _run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(args: argparse.Namespace, tmp: Path) -> dict:
    env = _app_env(tmp / "main")
    os.environ.update({k: env[k] for k in ("NMT_DESKTOP_CONFIG_DIR", "NMT_DESKTOP_LOG_DIR")})
    if "QT_QPA_PLATFORM" in env:
        os.environ["QT_QPA_PLATFORM"] = env["QT_QPA_PLATFORM"]

    from nmt_desktop.core.locations import default_model_path

    standin = False
    model = Path(args.model) if args.model else default_model_path()
    if model is None:
        standin = True
        t = time.perf_counter()
        model = build_standin(tmp / "standin-small")
        print(f"# no bundled model: built the random-weight 'small' stand-in in {time.perf_counter() - t:.1f}s",
              file=sys.stderr)
    tokens = args.tokens if args.tokens is not None else (40 if standin else 0)
    if args.grid_build_slice is not None:  # A/B of the gradual grid build (1e9: every cell at once, as before)
        from nmt_desktop.gui.attention import grid as attention_view

        attention_view.GRID_BUILD_SLICE_S = args.grid_build_slice
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    with _load_meter() as load:
        startup = measure_startup(model, 1 + args.repeats, tmp, args.startup) if not args.no_startup else []
        bench = Bench(model, args.text, tokens)
        try:
            idle = [bench.idle_stall(1.0) for _ in range(2)]
            runs: dict[str, list[dict]] = {"greedy": [], "beam": []}
            modes = [("greedy", 1), ("beam", args.beam)]
            warmup: dict[str, dict] = {}
            for name, beam in modes:  # warm-up: the first translation pays one-off costs (reported apart)
                bench.set_mode(beam)
                warmup[name] = bench.run_once()
            for _ in range(args.repeats):  # interleaved so background load hits both alike
                for name, beam in modes:
                    bench.set_mode(beam)
                    runs[name].append(bench.run_once())
            info = bench.window.info
            grid = bench.grid_info()
            source_tokens = len(bench.panel.document.current().source_tokens)
            vocab = bench.panel.translator.config.tgt_vocab_size
        finally:
            bench.close()

    machine = machine_info()
    machine["other_load_cpus"] = None if load.other_cpus is None else round(load.other_cpus, 2)
    summary: dict[str, Any] = {}
    for name, rs in runs.items():
        summary[name] = {key: _stats([r[key] for r in rs if r[key] is not None])
                         for key in ("first_ms", "first_data_ms", "last_ms", "last_data_ms", "worker_first_step_ms",
                                     "worker_done_ms", "done_to_painted_ms", "stall_ms", "mean_tick_ms",
                                     "gui_thread_cpu_ms", "per_token_ms", "token_paint_interval_ms",
                                     "token_paint_interval_max_ms", "worker_step_interval_ms", "stall_cpu_ms",
                                     "max_gap_cpu_ms")
                         if any(r.get(key) is not None for r in rs)}
        summary[name]["target_tokens"] = sorted({r["target_tokens"] for r in rs})
    summary["startup"] = None if not startup else {"other_load_cpus_median": round(statistics.median(
                              [s["other_load_cpus"] for s in startup if s["other_load_cpus"] is not None] or [0]), 2),
                          "first_shown_s": round(startup[0]["shown_s"], 3),
                          "first_ready_s": round(startup[0]["ready_s"], 3),
                          "warm_shown_s": _stats([s["shown_s"] for s in startup[1:]]),
                          "warm_ready_s": _stats([s["ready_s"] for s in startup[1:]])}
    summary["idle_stall_ms"] = round(max(idle), 2)
    worst_first = max(summary["greedy"]["first_ms"]["median"], summary["beam"]["first_ms"]["median"])
    worst_stall = max(summary["greedy"]["stall_ms"]["max"], summary["beam"]["stall_ms"]["max"])
    median_stall = max(summary["greedy"]["stall_ms"]["median"], summary["beam"]["stall_ms"]["median"])
    goals = {
        "first_token_ms": {"goal": GOALS["first_token_ms"], "measured_median": worst_first,
                           "met": worst_first < GOALS["first_token_ms"]},
        "shown_s": None if not startup else {
            "goal": GOALS["shown_s"], "measured_warm_median": summary["startup"]["warm_shown_s"]["median"],
            "met": summary["startup"]["warm_shown_s"]["median"] < GOALS["shown_s"]},
        "stall_ms": {"goal": GOALS["stall_ms"], "measured_max": worst_stall, "met": worst_stall < GOALS["stall_ms"],
                     "measured_median": median_stall, "met_in_median_run": median_stall < GOALS["stall_ms"]},
    }
    return {
        "machine": machine,
        "settings": {"model": "stand-in: random-weight small" if standin else str(model), "standin": standin,
                     "model_name": info.name, "decoder": f"{info.layers} layers x {info.heads} heads",
                     "target_vocab": vocab, "grid": grid,
                     "text": args.text, "source_tokens": source_tokens, "tokens": tokens or "natural",
                     "beam": args.beam, "repeats": args.repeats, "tick_ms": TICK_MS, "poll_ms": POLL_MS,
                     "grid_build_slice_s": args.grid_build_slice},
        "summary": summary, "goals": goals, "runs": runs, "warmup_runs": warmup, "startup_runs": startup, "idle_stall_runs_ms": idle,
    }


def _fmt(s: dict, unit: str = "", digits: int = 0) -> str:
    return f"{s['median']:.{digits}f}{unit} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def print_table(res: dict) -> None:
    m, st, su, g = res["machine"], res["settings"], res["summary"], res["goals"]
    print(f"Machine: {m['cpu']}, {m['logical_cpus']} logical CPUs, torch {m['torch']} ({m['torch_threads']} threads), "
          f"PySide6 {m['pyside6']}, Python {m['python']}, QT_QPA_PLATFORM={m['qt_platform']}, {m['date']}; "
          f"other processes kept {m['other_load_cpus']} CPUs busy meanwhile")
    gr = st.get("grid") or {}
    grid = (f"; attention grid: {gr['kind']}, {gr['layers_x_heads'][0]} x {gr['layers_x_heads'][1]} heads, "
            f"{gr['cells']} cells ({gr['cells_fully_visible']} wholly in view without scrolling)") if gr else ""
    print(f"Model: {st['model']} ({st['model_name']}, decoder {st['decoder']}, target vocabulary {st['target_vocab']}{grid}); {st['source_tokens']} source tokens, "
          f"target tokens {su['greedy']['target_tokens']} greedy / {su['beam']['target_tokens']} beam {st['beam']}; "
          f"{st['repeats']} repeats (median (min–max))\n")
    b = st["beam"]
    print(f"| measurement | greedy | beam {b} | goal | met |")
    print("|---|---:|---:|---|---|")
    print(f"| Translate → first token painted (ms) | {_fmt(su['greedy']['first_ms'])} | {_fmt(su['beam']['first_ms'])} "
          f"| < {g['first_token_ms']['goal']:.0f} ms | {'yes' if g['first_token_ms']['met'] else '**no**'} |")
    print(f"| … worker emitted the first step (ms) | {_fmt(su['greedy']['worker_first_step_ms'])} "
          f"| {_fmt(su['beam']['worker_first_step_ms'])} | | |")
    print(f"| Translate → last token painted (ms) | {_fmt(su['greedy']['last_ms'])} | {_fmt(su['beam']['last_ms'])} "
          f"| | |")
    for key, label in (("per_token_ms", "per token: (last − first painted) / (tokens − 1) (ms)"),
                       ("token_paint_interval_ms", "… median interval between grid paints of successive rows (ms)"),
                       ("worker_step_interval_ms", "… median interval between the worker's steps (ms)")):
        if key in su["greedy"] and key in su["beam"]:
            print(f"| {label} | {_fmt(su['greedy'][key], '', 1)} | {_fmt(su['beam'][key], '', 1)} | | |")
    print(f"| … worker finished decoding (ms) | {_fmt(su['greedy']['worker_done_ms'])} "
          f"| {_fmt(su['beam']['worker_done_ms'])} | | |")
    print(f"| … decode finished → final view painted (ms) | {_fmt(su['greedy']['done_to_painted_ms'])} "
          f"| {_fmt(su['beam']['done_to_painted_ms'])} | | |")
    print(f"| longest event-loop stall while streaming (ms over {TICK_MS}) | {_fmt(su['greedy']['stall_ms'])} "
          f"| {_fmt(su['beam']['stall_ms'])} | < {g['stall_ms']['goal']:.0f} ms "
          f"| median run: {'yes' if g['stall_ms']['met_in_median_run'] else '**no**'}; "
          f"every run: {'yes' if g['stall_ms']['met'] else '**no**'} |")
    if "max_gap_cpu_ms" in su["greedy"] and "max_gap_cpu_ms" in su["beam"]:
        print(f"| … GUI-thread CPU time inside one gap of that timer, the largest (ms) "
              f"| {_fmt(su['greedy']['max_gap_cpu_ms'])} | {_fmt(su['beam']['max_gap_cpu_ms'])} | | |")
    print(f"| GUI-thread CPU time during the translation (ms) | {_fmt(su['greedy']['gui_thread_cpu_ms'])} "
          f"| {_fmt(su['beam']['gui_thread_cpu_ms'])} | | |")
    print(f"| mean interval of the {TICK_MS} ms timer while streaming (ms) | {_fmt(su['greedy']['mean_tick_ms'], '', 1)} "
          f"| {_fmt(su['beam']['mean_tick_ms'], '', 1)} | | |")
    w = res["warmup_runs"]
    print(f"| first translation after the model loaded (warm-up, not in the rows above): first / last token "
          f"painted, longest stall (ms) | {w['greedy']['first_ms']:.0f} / {w['greedy']['last_ms']:.0f}, "
          f"stall {w['greedy']['stall_ms']:.0f} | (beam after it) {w['beam']['first_ms']:.0f} / "
          f"{w['beam']['last_ms']:.0f}, stall {w['beam']['stall_ms']:.0f} | | |")
    print(f"| longest stall of the same timer, app idle (ms over {TICK_MS}) | {su['idle_stall_ms']:.0f} | | | |")
    s = su["startup"]
    if s is None:  # --no-startup
        return
    print(f"| process start → window shown (s), warm | {s['warm_shown_s']['median']:.2f} "
          f"({s['warm_shown_s']['min']:.2f}–{s['warm_shown_s']['max']:.2f}) | | < {g['shown_s']['goal']:.0f} s "
          f"| {'yes' if g['shown_s']['met'] else '**no**'} |")
    print(f"| process start → window shown (s), first run | {s['first_shown_s']:.2f} | | | |")
    print(f"| process start → model loaded, Translate tab painted (s), warm | {s['warm_ready_s']['median']:.2f} "
          f"({s['warm_ready_s']['min']:.2f}–{s['warm_ready_s']['max']:.2f}) | | | |")
    print(f"| process start → model loaded (s), first run | {s['first_ready_s']:.2f} | | | |")
    print(f"\nStart-up runs: other processes kept {s['other_load_cpus_median']} CPUs busy (median over the runs).")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", help="model folder or .zip (default: the bundled default, else a stand-in)")
    p.add_argument("--text", default=DEFAULT_TEXT, help="the text to translate (default: a 20-word sentence)")
    p.add_argument("--repeats", type=int, default=5, help="measured runs of each mode and warm start-ups (default 5)")
    p.add_argument("--beam", type=int, default=5, help="beam size of the beam-search rows (default 5)")
    p.add_argument("--tokens", type=int, default=None,
                   help="force exactly N target tokens (default 40 with the stand-in, natural length otherwise; 0 = natural)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch.set_num_threads for the in-process runs (default 0: torch's default, as the app)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--startup", choices=("app", "gui"), default="app",
                   help="start-up command timed: app = `nmt-desktop` (the model set as the last used one in a "
                        "fresh settings folder), gui = `nmt-desktop gui -m MODEL` (default app)")
    p.add_argument("--no-startup", action="store_true", help="skip (b), the start-up runs")
    p.add_argument("--grid-build-slice", type=float, default=None, metavar="S",
                   help="attention_view.GRID_BUILD_SLICE_S for the in-process runs (A/B: 1e9 builds a new grid "
                        "at once, as before issue 29)")
    p.add_argument("--child-startup", metavar="MODEL", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child_startup:
        return child_startup(args.child_startup, args.startup)
    if args.repeats < 1 or args.beam < 2:
        p.error("--repeats must be >= 1 and --beam >= 2")
    res = run(args)
    if args.json:
        print(json.dumps(res))
    else:
        print_table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
