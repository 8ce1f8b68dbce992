"""Screenshot of the Get models… dialog with a download in progress, made by the app itself
(`nmt-desktop gui --get-models QUERY --pull REPO --screenshot`) against the local Hub stand-in of the
tests (tests/hub_stand_in.py): a random Marian model of OPUS-MT's layer sizes (d 512, 6+6 layers, small
vocabulary), served slowly so the PNG catches the download under way. Sizes, licenses and download
counts in the table are the stand-in's. Usage:
    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/make_get_models_shot.py resources/screenshots/get-models.png
"""
import copy
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from hub_stand_in import HubStandIn, make_marian_repo  # noqa: E402

tmp = Path(tempfile.mkdtemp(prefix="get-models-shot-"))
base = make_marian_repo(tmp / "repo", d_model=512, layers=6, heads=8)
repos = []
for name, downloads, params in (("opus-mt-en-de", 412_000, 74_410_496), ("opus-mt-tc-big-en-de", 23_000, 239_000_000),
                                ("opus-mt-en-gem", 1_900, 77_400_000), ("opus-mt-en-gmw", 1_200, 76_100_000),
                                ("opus-mt-en-mul", 31_000, 77_900_000)):
    r = copy.copy(base)
    r.repo, r.downloads, r.parameters = f"Helsinki-NLP/{name}", downloads, params
    repos.append(r)
with HubStandIn(repos) as hub:
    hub.delay_s = 0.004  # per 64 KiB: ~16 MB/s
    env = {**os.environ, "HF_ENDPOINT": hub.url, "NMT_DESKTOP_DATA_DIR": str(tmp / "data"),
           "NMT_DESKTOP_CONFIG_DIR": str(tmp / "config"), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    cmd = [sys.executable, "-m", "nmt_desktop", "gui", "--get-models", "English German", "--pull",
           "Helsinki-NLP/opus-mt-en-de", "--screenshot", sys.argv[1]]
    sys.exit(subprocess.run(cmd, env=env).returncode)
