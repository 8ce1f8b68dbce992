"""An OPUS-MT-size model in the desktop app (issue 29, "At the size users pull").

Builds (once) a random-weight model of Helsinki-NLP/opus-mt-en-de's architecture (6+6 layers, 8 heads,
d 512, ffn 2048, shared vocabulary 58,101: `vs_peers.make_hf_folder(..., "opus-mt")`, then
`nmt-desktop import-marian`), then:

* latency (default): `gui_latency.py --json --no-startup --tokens N` (N = 40) on the bundled model
  and on the OPUS-MT-size one, alternating (`--rounds` rounds, each `--repeats` greedy and beam runs
  per model), so background load hits both alike; every run streams exactly N target tokens into the
  real MainWindow's attention grid (all layer x head cells: 16 for the bundled 3 x 4 model, 55 =
  6 x (8 heads + avg) + "all" for the 6 x 8 one). Reports the first-token, per-token and last-token
  latency and the longest event-loop stall per model and mode (median and range over all runs), the
  idle baseline stall, how many runs stalled >= `--bound` ms (100), and the load average.
* views (`--views`): in one MainWindow with the OPUS-MT-size model (offscreen, temporary settings and
  log folders), a translation of exactly N tokens, then every page of the Analysis tab
  (`window.analysis_panel.tabs`) is shown in turn, timed from `setCurrentIndex` to the first Paint
  event of the page (or a widget in it), with the longest event-loop stall meanwhile; the views that
  run a job are run once (Head ablation: Re-translate with the default selection; Forced prefix:
  the second alternative at step 2; Beam tree: Decode with beam search; Compare: the first model the
  picker offers), timed to the job's end. The Translate tab's attention kinds, colour scales, merged
  words and focus view are shown too. Any exception reaching sys.excepthook, and every Qt warning or
  critical message, is reported.

    .venv/bin/python benchmarks/opus_size_app.py --rounds 3 --repeats 2
    .venv/bin/python benchmarks/opus_size_app.py --views --no-latency
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

KEYS = ("first_ms", "per_token_ms", "token_paint_interval_ms", "worker_step_interval_ms", "last_ms",
        "done_to_painted_ms", "stall_ms", "max_gap_cpu_ms", "gui_thread_cpu_ms")


def build_opus(folder: Path) -> Path:
    """The OPUS-MT-size nmt-desktop model folder (built once; reused when config.json is there)."""
    if (folder / "config.json").exists():
        return folder
    from vs_peers import make_hf_folder

    hf = folder.parent / f"{folder.name}-hf"
    shutil.rmtree(hf, ignore_errors=True)
    make_hf_folder(hf, "opus-mt")
    cli = Path(sys.executable).parent / "nmt-desktop"
    subprocess.run([str(cli), "import-marian", str(hf), "--out", str(folder), "--src-lang", "en", "--tgt-lang", "de"],
                   check=True)
    return folder


def model_facts(folder: Path) -> dict:
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return {k: cfg[k] for k in ("encoder_layers", "decoder_layers", "n_heads", "d_model", "ffn_dim", "tgt_vocab_size")}


def _stats(values: list[float]) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1),
            "max": round(max(values), 1), "n": len(values)}


# --- latency: gui_latency.py runs, alternating ----------------------------------------------------------

def latency(models: dict[str, Path], args: argparse.Namespace) -> dict:
    """{model name: [gui_latency.py --json result per round]}."""
    raw: dict[str, list[dict]] = {name: [] for name in models}
    for rnd in range(args.rounds):
        order = list(models) if rnd % 2 == 0 else list(reversed(models))  # alternate who goes first too
        for name in order:
            cmd = [sys.executable, str(HERE / "gui_latency.py"), "-m", str(models[name]), "--json", "--no-startup",
                   "--tokens", str(args.tokens), "--repeats", str(args.repeats), "--beam", str(args.beam)]
            load_before = os.getloadavg()[0]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"gui_latency.py failed for {name}:\n{proc.stderr[-3000:]}")
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res["load_before"] = load_before
            res["load_after"] = os.getloadavg()[0]
            raw[name].append(res)
            g = res["summary"]["greedy"]
            print(f"# round {rnd + 1} {name}: greedy stall max {g['stall_ms']['max']} ms, "
                  f"load {load_before:.1f} -> {res['load_after']:.1f}", file=sys.stderr, flush=True)
    return raw


def aggregate(raw: dict[str, list[dict]], bound: float) -> dict:
    out: dict[str, Any] = {}
    for name, results in raw.items():
        entry: dict[str, Any] = {"settings": results[0]["settings"], "machine": results[0]["machine"]}
        for mode in ("greedy", "beam"):
            runs = [r for res in results for r in res["runs"][mode]]
            entry[mode] = {k: _stats([r.get(k) for r in runs]) for k in KEYS}
            entry[mode]["runs"] = len(runs)
            entry[mode]["target_tokens"] = sorted({r["target_tokens"] for r in runs})
            entry[mode]["stalls_over_bound"] = sum(r["stall_ms"] >= bound for r in runs)
            entry[mode]["stall_end_ms"] = [r["stall_end_ms"] for r in runs]
        cold = [res["warmup_runs"]["greedy"] for res in results if "warmup_runs" in res]
        entry["first_translation"] = {k: _stats([r.get(k) for r in cold]) for k in ("first_ms", "last_ms", "stall_ms",
                                                                               "max_gap_cpu_ms")}
        entry["first_translation"]["stalls_over_bound"] = sum(r["stall_ms"] >= bound for r in cold)
        entry["first_translation"]["runs"] = len(cold)
        entry["idle_stall_ms"] = _stats([v for res in results for v in res["idle_stall_runs_ms"]])
        entry["other_load_cpus"] = [res["machine"]["other_load_cpus"] for res in results]
        entry["loadavg"] = [round(res["load_before"], 2) for res in results]
        out[name] = entry
    return out


def _f(s: dict | None, digits: int = 0) -> str:
    return "–" if s is None else f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def print_latency(lat: dict, bound: float) -> None:
    names = list(lat)
    for name in names:
        st = lat[name]["settings"]
        gr = st.get("grid", {})
        print(f"{name}: {st['model_name']}, decoder {st['decoder']}, target vocabulary {st['target_vocab']}, "
              f"grid {gr.get('layers_x_heads')} = {gr.get('cells')} cells ({gr.get('cells_fully_visible')} wholly "
              f"visible); {st['source_tokens']} source tokens; load average before each invocation "
              f"{lat[name]['loadavg']}; other processes' CPUs {lat[name]['other_load_cpus']}")
    print()
    print("| measurement | " + " | ".join(f"{n} greedy | {n} beam" for n in names) + " |")
    print("|---|" + "---:|" * (2 * len(names)))
    rows = (("Translate → first token painted (ms)", "first_ms", 0),
            ("per token: (last − first painted) / 39 (ms)", "per_token_ms", 1),
            ("… median interval between grid paints of successive rows (ms)", "token_paint_interval_ms", 1),
            ("… median interval between the worker's steps (ms)", "worker_step_interval_ms", 1),
            ("Translate → last token painted (ms)", "last_ms", 0),
            ("… decode finished → final view painted (ms)", "done_to_painted_ms", 0),
            ("longest event-loop stall (ms over the 5 ms tick)", "stall_ms", 0),
            ("… GUI-thread CPU inside one tick gap, the largest (ms)", "max_gap_cpu_ms", 0),
            ("GUI-thread CPU during the translation (ms)", "gui_thread_cpu_ms", 0))
    for label, key, digits in rows:
        print(f"| {label} | " + " | ".join(f"{_f(lat[n][m][key], digits)}" for n in names
                                           for m in ("greedy", "beam")) + " |")
    print(f"| runs with a stall ≥ {bound:.0f} ms | " + " | ".join(
        f"{lat[n][m]['stalls_over_bound']} of {lat[n][m]['runs']}" for n in names for m in ("greedy", "beam")) + " |")
    for label, key in (("first translation after the model loaded, greedy: first token painted (ms)", "first_ms"),
                       ("… last token painted (ms)", "last_ms"), ("… longest event-loop stall (ms)", "stall_ms"),
                       ("… GUI-thread CPU inside one tick gap, the largest (ms)", "max_gap_cpu_ms")):
        print(f"| {label} | " + " | ".join(f"{_f(lat[n]['first_translation'][key])} | " for n in names) + " |")
    print(f"| … runs with a stall ≥ {bound:.0f} ms | " + " | ".join(
        f"{lat[n]['first_translation']['stalls_over_bound']} of {lat[n]['first_translation']['runs']} | "
        for n in names) + " |")
    print("| target tokens | " + " | ".join(f"{lat[n][m]['target_tokens']}" for n in names
                                            for m in ("greedy", "beam")) + " |")
    print("| idle baseline stall, same timer (ms) | " + " | ".join(f"{_f(lat[n]['idle_stall_ms'])} | "
                                                           for n in names) + " |")


# --- views --------------------------------------------------------------------------------------------

def views(model: Path, args: argparse.Namespace) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="opus_size_views_"))
    try:
        return _views(model, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _views(model: Path, args: argparse.Namespace, tmp: Path) -> dict:
    import gui_latency

    env = gui_latency._app_env(tmp)  # offscreen without a display, throw-away settings and logs
    for key in ("NMT_DESKTOP_CONFIG_DIR", "NMT_DESKTOP_LOG_DIR", "QT_QPA_PLATFORM"):
        if key in env:
            os.environ[key] = env[key]
    from PySide6.QtCore import (
        QEvent,
        QEventLoop,
        QObject,
        Qt,
        QTimer,
        qInstallMessageHandler,
    )
    from PySide6.QtWidgets import QWidget

    problems: list[str] = []
    messages: list[str] = []
    old_hook = sys.excepthook

    def hook(etype: Any, value: Any, tb: Any) -> None:
        import traceback

        problems.append("".join(traceback.format_exception(etype, value, tb))[-1500:])

    sys.excepthook = hook
    qInstallMessageHandler(lambda mode, _ctx, msg: messages.append(f"{mode.name}: {msg}"))

    bench = gui_latency.Bench(model, gui_latency.DEFAULT_TEXT, args.tokens)
    window, app = bench.window, bench.app
    bench.set_mode(1)
    first = bench.run_once()  # the translation every view below analyses
    translation = bench.panel.document.current().translation
    rows: list[dict] = []

    class PaintSeen(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.page: QWidget | None = None
            self.at: float | None = None

        def eventFilter(self, obj: Any, event: Any) -> bool:  # Qt's name
            if (self.at is None and self.page is not None and event.type() == QEvent.Paint
                    and isinstance(obj, QWidget) and (obj is self.page or self.page.isAncestorOf(obj))):
                self.at = time.perf_counter()
            return False

    seen = PaintSeen()
    app.installEventFilter(seen)

    def timed(name: str, page: QWidget, action: Any, done: Any = None, timeout_s: float = 300.0) -> None:
        """Run `action`, wait for a Paint of `page` (and for `done()` when given); time both, and the stall."""
        ticks: list[float] = []
        tick = QTimer(interval=5)
        tick.setTimerType(Qt.PreciseTimer)
        tick.timeout.connect(lambda: ticks.append(time.perf_counter()))
        n_problems = len(problems)
        tick.start()
        t_settle = time.perf_counter() + 0.05
        while time.perf_counter() < t_settle:
            app.processEvents()
        seen.page, seen.at = page, None
        t0 = time.perf_counter()
        error = ""
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            error = f"{type(exc).__name__}: {exc}"
        deadline = t0 + timeout_s
        no_paint = t0 + 3.0  # an action that changes nothing on screen paints nothing
        while time.perf_counter() < deadline and not ((seen.at is not None or time.perf_counter() > no_paint)
                                                      and (done is None or done())):
            app.processEvents(QEventLoop.AllEvents, 5)
        t_end = time.perf_counter()
        tick.stop()
        window_ticks = [t for t in ticks if t0 <= t <= t_end]
        edges = [t0, *window_ticks, t_end]
        stall = max(b - a for a, b in pairwise(edges)) * 1000 - 5
        rows.append({"view": name, "shown_ms": None if seen.at is None else round((seen.at - t0) * 1000, 1),
                     "done_ms": round((t_end - t0) * 1000, 1) if done is not None else None,
                     "stall_ms": round(stall, 1), "timed_out": time.perf_counter() >= deadline,
                     "error": error or ("; ".join(p.splitlines()[-1] for p in problems[n_problems:]))})

    panel, analysis = bench.panel, window.analysis_panel
    view = panel.view
    # the Translate tab's own views of the 48-head grid
    for i in list(range(1, view.kind_combo.count())) + [0]:  # cross-attention (shown now) last
        if view.kind_combo.model().item(i).isEnabled():
            timed(f"Translate: attention kind “{view.kind_combo.itemText(i)}”", view.grid,
                  lambda i=i: view.kind_combo.setCurrentIndex(i))
    view.kind_combo.setCurrentIndex(0)
    for i in list(range(1, view.scale_combo.count())) + [0]:  # the default (per cell) last
        timed(f"Translate: colour scale “{view.scale_combo.itemText(i)}”", view.grid,
              lambda i=i: view.scale_combo.setCurrentIndex(i))
    timed("Translate: merge words on", view.grid, lambda: view.merge_check.setChecked(True))
    timed("Translate: merge words off", view.grid, lambda: view.merge_check.setChecked(False))
    timed("Translate: focus view (L6 H8)", view.focus_view, lambda: view.focus(5, 7))
    for i in list(range(1, panel.inspect_tabs.count())) + [0]:
        timed(f"Translate: inspect tab “{panel.inspect_tabs.tabText(i)}”", panel.inspect_tabs.widget(i),
              lambda i=i: panel.inspect_tabs.setCurrentIndex(i))
    # the Analysis tab: show it, then every page
    timed("Analysis tab", analysis, lambda: window.show_tab("analysis"))
    tabs = analysis.tabs
    for i in list(range(1, tabs.count())) + [0]:  # the page shown first (Head statistics) last
        timed(f"Analysis: {tabs.tabText(i)}", tabs.widget(i), lambda i=i: tabs.setCurrentIndex(i))
    # the views that run a job, once each
    abl = analysis.ablation
    tabs.setCurrentWidget(abl)
    if abl.run_button.isEnabled():
        timed("Analysis: Head ablation → Re-translate", abl, abl.run_button.click, lambda: not abl.running)
    forced = analysis.forced
    alts = translation.best.alternatives[1] if len(translation.best.alternatives) > 1 else []
    token = alts[1].token_id if len(alts) > 1 else translation.best.token_ids[1]
    timed("Analysis: Forced prefix (2nd alternative at step 2)", forced,
          lambda: analysis.force_alternative(translation, 1, token, panel.last_config), lambda: not forced.running)
    beam = analysis.beam_tree
    tabs.setCurrentWidget(beam)
    if beam.run_button.isEnabled():
        timed("Analysis: Beam tree → Decode with beam search", beam, beam.run_button.click, lambda: not beam.running)
    cmp = analysis.compare
    tabs.setCurrentWidget(cmp)
    offered = [(cmp.picker.itemText(i), cmp.picker.itemData(i)) for i in range(cmp.picker.count())]
    pick = next((i for i, (_, path) in enumerate(offered) if path and Path(path).resolve() != model.resolve()), -1)
    picked = offered[pick][0] if pick >= 0 else ""
    if pick >= 0:  # as a user's choice in the picker (its activated signal), then Compare
        timed(f"Analysis: Compare models → pick B = {picked}", cmp,
              lambda: (cmp.picker.setCurrentIndex(pick), cmp.picker.activated.emit(pick)),
              lambda: not cmp.running and cmp.other is not None)
    if cmp.run_button.isEnabled():
        timed(f"Analysis: Compare models → Compare (B = {picked})", cmp, cmp.run_button.click,
              lambda: not cmp.running)
    else:
        rows.append({"view": "Analysis: Compare models → Compare", "shown_ms": None, "done_ms": None,
                     "stall_ms": None, "timed_out": False,
                     "error": f"not run: button disabled (picker offers {offered})"})
    status = {name: w.status_label().text()[:160] for name, w in (("ablation", abl), ("forced", forced),
                                                             ("beam_tree", beam), ("compare", cmp))
              if hasattr(w, "status")}
    app.removeEventFilter(seen)
    bench.close()
    sys.excepthook = old_hook
    return {"first_translation": {k: first[k] for k in ("first_ms", "last_ms", "stall_ms", "target_tokens")},
            "rows": rows, "exceptions": problems, "qt_messages": messages, "job_status": status}


def print_views(res: dict) -> None:
    ft = res["first_translation"]
    print(f"\nViews with the OPUS-MT-size model after one translation ({ft['target_tokens']} target tokens, "
          f"last token painted at {ft['last_ms']:.0f} ms, stall {ft['stall_ms']:.0f} ms)\n")
    print("| view | shown: action → first paint (ms) | job done (ms) | longest stall meanwhile (ms) | error |")
    print("|---|---:|---:|---:|---|")
    for r in res["rows"]:
        shown = "–" if r["shown_ms"] is None else f"{r['shown_ms']:.0f}"
        done = "" if r["done_ms"] is None else f"{r['done_ms']:.0f}" + (" (timed out)" if r["timed_out"] else "")
        stall = "–" if r["stall_ms"] is None else f"{r['stall_ms']:.0f}"
        print(f"| {r['view']} | {shown} | {done} | {stall} | {r['error'] or 'none'} |")
    print(f"\nExceptions reaching sys.excepthook: {len(res['exceptions'])}")
    for p in res["exceptions"]:
        print(p)
    print(f"Qt messages: {len(res['qt_messages'])}")
    for m in res["qt_messages"][:20]:
        print("  " + m)
    print(f"Job views' status lines: {res['job_status']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--opus", default=None,
                   help="the OPUS-MT-size model folder (built there if missing; default: a temporary folder)")
    p.add_argument("--bundled", default=None, help="the bundled model (default: core.locations.default_model_path())")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    p.add_argument("--repeats", type=int, default=2, help="gui_latency.py --repeats per round and model (default 2)")
    p.add_argument("--tokens", type=int, default=40, help="target tokens forced (default 40)")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--bound", type=float, default=100.0, help="the stall bound in ms (default 100)")
    p.add_argument("--views", action="store_true", help="also visit every view with the OPUS-MT-size model")
    p.add_argument("--no-latency", action="store_true", help="skip the latency runs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--from-json", metavar="FILE", help="print the tables of an earlier --json run")
    args = p.parse_args(argv)
    if args.from_json:
        res = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        if "latency_raw" in res:
            print_latency(aggregate(res["latency_raw"], args.bound), args.bound)
        if "views" in res:
            print_views(res["views"])
        return 0
    tmp = None
    if args.opus:
        opus = Path(args.opus)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="opus_size_model_"))
        opus = tmp / "opus-mt-size"
    try:
        t = time.perf_counter()
        build_opus(opus)
        facts = model_facts(opus)
        print(f"# OPUS-MT-size model {opus} ({time.perf_counter() - t:.1f}s): {facts}", file=sys.stderr)
        from nmt_desktop.core.locations import default_model_path

        bundled = Path(args.bundled) if args.bundled else default_model_path()
        res: dict[str, Any] = {"opus_model": facts}
        if not args.no_latency:
            res["latency_raw"] = latency({"bundled": bundled, "opus-mt-size": opus}, args)
            res["latency"] = aggregate(res["latency_raw"], args.bound)
        if args.views:
            res["views"] = views(opus, args)
        if args.json:
            print(json.dumps(res))
        else:
            if "latency" in res:
                print_latency(res["latency"], args.bound)
            if "views" in res:
                print_views(res["views"])
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
