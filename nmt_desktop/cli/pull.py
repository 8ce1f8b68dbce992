"""The `pull` command: download an OPUS-MT model from the Hugging Face Hub (core/hub/pull.py) into the
user data folder's models/, after which `-m NAME` finds it like a bundled model."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from nmt_desktop.cli.common import HUB_NOTE


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "pull", parents=[common], help="download an OPUS-MT model from the Hugging Face Hub",
        description="Download a Marian model (e.g. Helsinki-NLP/opus-mt-en-de; the Helsinki-NLP/ prefix may be "
                    "left out), check every file against the Hub's checksums, convert it without transformers "
                    "or pickle and install it into the user data folder's models/ as NAME (default: the repo's "
                    "name). Only the files the converter needs are fetched (~300 MB for a 6+6-layer model). "
                    + HUB_NOTE)
    p.add_argument("repo", metavar="REPO", help="Hub model id, e.g. Helsinki-NLP/opus-mt-en-de")
    p.add_argument("--int8", action="store_true", help="store the weights as int8 (under half the size)")
    p.add_argument("--name", metavar="NAME", help="install under this name (default: the repo's name)")
    p.add_argument("--revision", metavar="REV", help="branch, tag or commit to download (default: main)")
    p.add_argument("--force", action="store_true", help="replace an installed model of the same name")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


class _PullBar:
    """The overall download as one tqdm bar on stderr, then a line per later stage."""

    def __init__(self, quiet: bool):
        self.quiet, self.bar, self.stage = quiet, None, ""

    def __call__(self, p: Any) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        if p.stage == "download":
            if self.bar is None:
                self.bar = tqdm(total=p.total_bytes or None, unit="B", unit_scale=True, unit_divisor=1024,
                                desc="download", file=sys.stderr, dynamic_ncols=True)
            self.bar.update(p.done_bytes - self.bar.n)
        elif p.stage != self.stage and p.stage in ("verify", "convert"):
            self.close()
            print({"verify": "checking checksums…", "convert": "converting…"}[p.stage], file=sys.stderr, flush=True)
        self.stage = p.stage

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.pull import pull_model

    bar = _PullBar(args.quiet)
    try:
        result = pull_model(args.repo, int8=args.int8, name=args.name, revision=args.revision, force=args.force,
                            progress=bar)
    finally:
        bar.close()
    print(f"installed {result.name} from {result.repo} (revision {result.revision[:12]}, license "
          f"{result.license or 'see the model page'}) in {result.path}")
    print(f"use it:  nmt-desktop translate -m {result.name} \"Hello, world!\"")
    print(f"         nmt-desktop gui -m {result.name}")
    return 0
