"""The attention heatmap widgets every view shares: the layer x head grid (grid.py, `AttentionView`, which
paints a core `AttentionRows`), the one-head focus view (focus.py), heatmap cells and colour scales
(heatmap.py), the token axis (token_axis.py), exports (export.py) and linked tokens (linked_tokens.py)."""
