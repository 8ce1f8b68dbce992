"""Microseconds per product of R rows with one weight matrix: MKL `addmm` on a contiguous (in, out)
copy vs oneDNN's blocked layout (`mkldnn::_linear_pointwise`), warm caches; the numbers behind the
dispatch rule in nmt_desktop/core/decoding/backends/prepared_linear.py.

    .venv/bin/python benchmarks/linear_layouts.py --threads 1
    .venv/bin/python benchmarks/linear_layouts.py --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

SHAPES = [(256, 256), (256, 768), (256, 1024), (1024, 256), (512, 512), (512, 1536), (512, 2048), (256, 8000),
          (512, 32000)]
ROWS = [1, 2, 4, 8, 32, 128]


def _us(fn, n: int = 300) -> float:
    for _ in range(30):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    torch.set_num_threads(ap.parse_args().threads)
    onednn = torch.ops.mkldnn._linear_pointwise.default
    print("| in x out | " + " | ".join(f"{r} rows addmm / oneDNN" for r in ROWS) + " |")
    print("|---|" + "---:|" * len(ROWS))
    with torch.inference_mode():
        for n_in, n_out in SHAPES:
            w, b = torch.randn(n_out, n_in), torch.randn(n_out)
            wt, blocked = w.t().contiguous(), torch.ops.mkldnn._reorder_linear_weight(w, 16)
            cells = []
            for rows in ROWS:
                x = torch.randn(rows, n_in)
                cells.append(f"{_us(lambda: torch.addmm(b, x, wt)):.0f} / "
                             f"{_us(lambda: onednn(x, blocked, b, 'none', [], '')):.0f}")
            print(f"| {n_in} x {n_out} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
