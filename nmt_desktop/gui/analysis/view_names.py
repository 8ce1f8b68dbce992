"""The Analysis views' keys (`gui --analysis-view KEY`), in tab order, without Qt.

The CLI builds its `--analysis-view` choices from these, and its --help must stay fast and free of Qt, so
they cannot be read off the registry (which imports every view). `registry.py` refuses at import a list of
entries whose keys are not exactly these, in this order: a new view is its entry there and its key here.
Nothing Qt (nor anything importing Qt) may be imported here.
"""

from __future__ import annotations

VIEW_KEYS: tuple[str, ...] = ("stats", "ablation", "alignments", "coverage", "forced", "beam-tree", "compare",
                               "attribution", "dataset")
