"""Screenshot of the Train tab during a run: a tiny model on a synthetic word-mapping corpus
(tests/tiny_models.py), taken after a few evaluations. Usage:
    QT_QPA_PLATFORM=offscreen OMP_NUM_THREADS=1 .venv/bin/python resources/screenshots/make_train_shot.py resources/screenshots/train.png
"""
import os, sys, tempfile, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
tmp = Path(tempfile.mkdtemp(prefix="train-shot-"))
os.environ["NMT_DESKTOP_CONFIG_DIR"] = str(tmp / "config")
os.environ["NMT_DESKTOP_LOG_DIR"] = str(tmp / "logs")
os.environ["NMT_DESKTOP_DATA_DIR"] = str(tmp / "data")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
from tiny_models import synthetic_pairs
from nmt_desktop.core.config import TrainConfig
from nmt_desktop.gui.app import MainWindow, create_app, wait_until
from nmt_desktop.gui.lifetime import close_down
from PySide6.QtWidgets import QApplication

pairs = synthetic_pairs(3000, seed=11)
train, dev = tmp / "train.tsv", tmp / "dev.tsv"
train.write_text("".join(f"{s}\t{t}\n" for s, t in pairs[:2900]), encoding="utf-8")
dev.write_text("".join(f"{s}\t{t}\n" for s, t in pairs[2900:]), encoding="utf-8")
app = create_app()
w = MainWindow(model=None)
w.show_error = lambda m, t="Error": print("error:", m)
p = w.train_panel
p.process.extra_env = {"OMP_NUM_THREADS": "1"}
p.form.set_form(TrainConfig(train=str(train), dev=str(dev), src_lang="en", tgt_lang="xx", preset="tiny", vocab_size=400,
                       batch_tokens=1200, lr=2e-3, warmup_steps=100, max_steps=1500, eval_every=50, log_every=5,
                       eval_sentences=100, threads=1, device="cpu", probe="big red dog sleeps green tree"))
p.check_data_now()
wait_until(lambda: p.form.preview_table.rowCount() > 0, 60, "preview")
w.show_tab("train")
w.resize(1500, 940)
w.show()
assert p.start()
evals = []
p.trainEvent.connect(lambda e: evals.append(e) if e["event"] == "eval" else None)
wait_until(lambda: len(evals) >= int(sys.argv[2]) if len(sys.argv) > 2 else len(evals) >= 8, 300, "evaluations")
wait_until(lambda: p.last_step >= evals[-1]["step"] + 20, 60, "a few more steps")
p.bottom_tabs.setCurrentIndex(0)
for _ in range(10):
    QApplication.processEvents(); time.sleep(0.02)
w.grab().save(sys.argv[1], "PNG")
print("saved", sys.argv[1], "at step", p.last_step, "BLEU", evals[-1]["bleu"])
close_down(app)  # the training child stopped, the window deleted before the interpreter exits
