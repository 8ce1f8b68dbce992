"""Run `nmt_desktop.cli.main.main(argv)` unchanged and report, on stderr, its wall time, the peak
CUDA memory PyTorch allocated (torch.cuda.max_memory_allocated / max_memory_reserved) and the
third-party modules it imported. Used by benchmarks/gpu_baseline.sh; changes no behaviour.

    python benchmarks/gpu_baseline_run_cli.py train --config ... --device cuda
"""
import json
import sys
import time

sys.path.insert(0, ".")


def main() -> int:
    from nmt_desktop.cli.main import main as cli_main

    t0 = time.perf_counter()
    rc = 1
    try:
        rc = cli_main(sys.argv[1:])
    finally:
        wall = time.perf_counter() - t0
        rep = {"wrapper": "run_cli", "argv": sys.argv[1:3], "rc": rc, "wall_s": round(wall, 2)}
        try:
            import torch

            if torch.cuda.is_available() and torch.cuda.is_initialized():
                rep["cuda_max_allocated_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
                rep["cuda_max_reserved_mib"] = round(torch.cuda.max_memory_reserved() / 2**20, 1)
                rep["cuda_device"] = torch.cuda.get_device_name(0)
            rep["torch"] = torch.__version__
        except Exception as exc:  # report only
            rep["torch_error"] = repr(exc)
        std = set(sys.stdlib_module_names)
        rep["third_party_modules"] = sorted({m.split(".")[0] for m in list(sys.modules)
                                             if m.split(".")[0] not in std and not m.startswith("_")
                                             and m.split(".")[0] != "nmt_desktop"})
        print("RUN_CLI " + json.dumps(rep), file=sys.stderr, flush=True)
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
