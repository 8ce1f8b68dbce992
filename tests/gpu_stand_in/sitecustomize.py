"""Started with this folder on PYTHONPATH and NMT_TEST_GPU_TOKENS / NMT_TEST_GPU_AFTER set, a training child runs
on a pretend GPU that holds that many padded tokens after that many forwards (tests/small_gpu.py)."""

import os
import sys

if os.environ.get("NMT_TEST_GPU_TOKENS"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from small_gpu import small_gpu_setup

    from nmt_desktop.core.training.train import Trainer

    Trainer.setup = small_gpu_setup(Trainer.setup, int(os.environ["NMT_TEST_GPU_TOKENS"]),
                                    int(os.environ.get("NMT_TEST_GPU_AFTER", "0")), [])
