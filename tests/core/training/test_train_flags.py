"""One spelling of `train` flags for the CLI's parser and the Train tab's command (core/training/train_flags.py)."""

from __future__ import annotations

import shlex

from nmt_desktop.cli.main import build_parser
from nmt_desktop.core.config import TrainConfig
from nmt_desktop.core.training.train_flags import train_command_line, train_flag


def test_flag_names():
    assert train_flag("warmup_steps") == "--warmup-steps"
    assert train_flag("from_model") == "--from"


def test_the_command_line_parses_back_into_the_same_config(tmp_path):
    cfg = TrainConfig(train=str(tmp_path / "my data.tsv"), dev=str(tmp_path / "dev.tsv"), lr=TrainConfig().lr * 2, max_steps=123,
                      from_model=str(tmp_path / "base model"), joint_vocab=not TrainConfig().joint_vocab)
    line = train_command_line(cfg)
    assert line.startswith("nmt-desktop train ") and "--progress" not in line
    args = build_parser().parse_args(shlex.split(line)[1:])
    for name in ("train", "dev", "lr", "max_steps", "from_model", "joint_vocab"):
        assert getattr(args, name) == getattr(cfg, name), name
