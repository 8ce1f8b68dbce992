"""`AttentionRows`: the attention the grid shows, one stacked buffer of rows (numpy only, no Qt).

Why one buffer: the grid paints L * (H + 1) + 1 cells (each layer's heads, then their mean; the mean of
all heads last), and every cell grows by one target row per decoded token. Keeping those matrices
stacked as `(cells, rows, cols)` lets a streamed step write one row of every cell in place, and lets the
finished translation *extend* what streamed (its last row, or nothing) instead of rebuilding it.
Everything else is a view of this buffer: the weights `(L, H, rows, cols)` behind `AttentionData` and the
exports, a cell's matrix for the focus view. The display transforms (merged words, the log colour
scale) are applied when painting, never stored.

Forms of the attention from the backend to the screen: the search's `BatchStep` `(B, L, H, S)`, the
`Step`'s `(L, H, S)`, and this buffer.

Rows once written are never rewritten in place: new content gets a new buffer, so views handed out
stay valid (and are read-only).
"""

from __future__ import annotations

from collections.abc import Sequence
import numpy as np

from nmt_desktop.core.analysis.attention_data import AttentionData, head_averages
from nmt_desktop.core.analysis.words import join_word, merge_attention, word_groups

_FIRST_CAPACITY = 16  # rows allocated at first; doubled when full


def cell_count(layers: int, heads: int) -> int:
    """Cells of a layers x heads grid: H heads and a head mean per layer, the overall mean; none when empty."""
    return layers * (heads + 1) + 1 if layers and heads else 0


class AttentionRows:
    """One kind of attention with its tokens, held as the grid's stacked cells `(cells, rows, cols)`.

    Cell `layer * (H + 1) + head` is a head, `layer * (H + 1) + H` that layer's head mean, the last one the
    mean of all heads (`cell_index`). Rows = target tokens (queries), cols = source tokens (keys)."""

    def __init__(self) -> None:
        self.kind = "cross"
        self.source_tokens: list[str] = []
        self.target_tokens: list[str] = []  # one piece per row held
        self.layers = self.heads = 0
        self.max_rows: int | None = None  # while streaming: rows kept at most; later rows are counted, not kept
        self.dropped = 0  # steps not kept because of `max_rows`
        self._stack = np.zeros((0, 0, 0), dtype=np.float32)  # (cells, capacity, cols): rows [0, rows) hold data
        self._top = np.zeros(0, dtype=np.float32)  # (cells,) each cell's largest weight so far
        self._rows = 0
        self._groups: tuple[list[list[int]], list[list[int]]] | None = None  # (source, target) words, cached

    # --- shape ------------------------------------------------------------------------------------

    @property
    def rows(self) -> int:
        return self._rows

    @property
    def cols(self) -> int:
        return len(self.source_tokens)

    @property
    def cells(self) -> int:
        return cell_count(self.layers, self.heads)

    def cell_index(self, layer: int, head: int) -> int:
        """The cell of (layer, head); head -1: the layer's head mean; (-1, -1): the overall mean."""
        L, H = self.layers, self.heads
        if (layer, head) == (-1, -1):
            return L * (H + 1)
        if not (0 <= layer < L and -1 <= head < H):
            raise IndexError(f"no cell (layer {layer}, head {head}) in a {L} x {H} grid")
        return layer * (H + 1) + (H if head == -1 else head)

    # --- filling ----------------------------------------------------------------------------------

    def begin(self, source_tokens: Sequence[str], layers: int, heads: int, max_rows: int | None = None) -> None:
        """No rows yet: cross-attention of a translation about to stream, at most `max_rows` rows kept."""
        self._reset("cross", source_tokens, layers, heads, _FIRST_CAPACITY if max_rows is None
                    else min(_FIRST_CAPACITY, max(1, max_rows)))
        self.max_rows = None if max_rows is None else max(1, int(max_rows))

    def clear(self, kind: str = "cross") -> None:
        """Nothing to show."""
        self._reset(kind, [], 0, 0, 0)

    def show(self, data: AttentionData) -> None:
        """Hold `data` (a finished translation's attention of one kind) instead of what was held."""
        L, H, R, _ = data.weights.shape
        self._reset(data.kind, data.source_tokens, L, H, R)
        self._write(data.target_tokens[:R], data.weights)

    def append(self, piece: str, attention: np.ndarray) -> bool:
        """One more target row, `attention` (L, H, cols), in every cell; False when past `max_rows` (counted in
        `dropped`, not kept)."""
        att = np.asarray(attention, dtype=np.float32)
        shape = (self.layers, self.heads, self.cols)
        if att.shape != shape:
            raise ValueError(f"cross_attention must have shape {shape}, got {att.shape}")
        if self.max_rows is not None and self._rows >= self.max_rows:
            self.dropped += 1
            return False
        self._write([piece], att[:, :, None])
        return True

    def extend(self, data: AttentionData) -> int | None:
        """If `data` begins with exactly the rows held (same kind, tokens and weights: what streamed), add its
        remaining rows and return how many (0: it is what is held); else None and nothing changes.

        This is how a finished translation follows its stream: greedy always, beam search when the final best
        hypothesis is the one that streamed."""
        n = self._rows
        w = data.weights
        if (data.kind != self.kind or list(data.source_tokens) != self.source_tokens
                or w.shape[:2] != (self.layers, self.heads) or w.shape[2] < n
                or list(data.target_tokens[:n]) != self.target_tokens
                or not np.array_equal(w[:, :, :n], self.weights())):
            return None
        self.max_rows, self.dropped = None, 0  # finished: every row is shown
        self._write(data.target_tokens[n: w.shape[2]], w[:, :, n:])
        return w.shape[2] - n

    def _reset(self, kind: str, source_tokens: Sequence[str], layers: int, heads: int, capacity: int) -> None:
        self.kind, self.source_tokens, self.target_tokens = kind, list(source_tokens), []
        self.layers, self.heads = (layers, heads) if layers and heads else (0, 0)
        self.max_rows, self.dropped = None, 0
        self._stack = np.zeros((self.cells, capacity, self.cols), dtype=np.float32)  # a new buffer: old views stay
        self._top = np.zeros(self.cells, dtype=np.float32)
        self._rows = 0
        self._groups = None

    def _write(self, pieces: Sequence[str], weights: np.ndarray) -> None:
        """Rows `weights` (L, H, k, cols) after those held: heads, then the averages of `head_averages`."""
        k = weights.shape[2]
        self.target_tokens.extend(pieces)
        self._groups = None
        if k == 0 or self.cells == 0:
            self._rows += k
            return
        r = self._rows
        if r + k > self._stack.shape[1]:
            want = max(2 * self._stack.shape[1], _FIRST_CAPACITY)
            capacity = max(r + k, want if self.max_rows is None else min(want, self.max_rows))
            grown = np.zeros((self.cells, capacity, self.cols), dtype=np.float32)
            grown[:, :r] = self._stack[:, :r]
            self._stack = grown
        L, H = self.layers, self.heads
        per_layer, overall = head_averages(weights)
        block = self._stack[:-1].reshape(L, H + 1, -1, self.cols)  # a view: (L, H + 1, capacity, cols)
        block[:, :H, r: r + k] = weights
        block[:, H, r: r + k] = per_layer
        self._stack[-1, r: r + k] = overall
        if self.cols:
            self._top = np.maximum(self._top, self._stack[:, r: r + k].max(axis=(1, 2)))
        self._rows = r + k

    # --- reading (views, read-only) ----------------------------------------------------------------

    def stack(self) -> np.ndarray:
        """Every cell, (cells, rows, cols): a read-only view of the buffer."""
        return _read_only(self._stack[:, : self._rows])

    def weights(self) -> np.ndarray:
        """The heads alone, (L, H, rows, cols): a read-only view of the buffer."""
        L, H = self.layers, self.heads
        if self.cells == 0:
            return np.zeros((L, H, self._rows, self.cols), dtype=np.float32)
        block = self._stack[:-1].reshape(L, H + 1, -1, self.cols)
        return _read_only(block[:, :H, : self._rows])

    def word_groups(self) -> tuple[list[list[int]], list[list[int]]]:
        """(source, target) pieces grouped into words (`words.word_groups`)."""
        if self._groups is None:
            self._groups = (word_groups(self.source_tokens), word_groups(self.target_tokens))
        return self._groups

    def tokens(self, merged: bool = False) -> tuple[list[str], list[str]]:
        """(source, target) tokens as shown: the pieces, or the words they make."""
        if not merged:
            return list(self.source_tokens), list(self.target_tokens)
        src, tgt = self.word_groups()
        return ([join_word([self.source_tokens[i] for i in g]) for g in src],
                [join_word([self.target_tokens[i] for i in g]) for g in tgt])

    def shown(self, merged: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """What the cells show: (cells (cells, rows, cols), each cell's largest weight (cells,)).

        Pieces: a view of the buffer. Merged words: computed now for this paint (summed over a word's source
        pieces, averaged over its target pieces) and not kept, as the last word changes while streaming."""
        if not merged:
            return self.stack(), _read_only(self._top)
        src, tgt = self.word_groups()
        cells = merge_attention(self.stack(), src, tgt)
        top = cells.max(axis=(1, 2)) if cells.size else np.zeros(len(cells), dtype=np.float32)
        return cells, top


def _read_only(view: np.ndarray) -> np.ndarray:
    view = view.view()
    view.flags.writeable = False
    return view
