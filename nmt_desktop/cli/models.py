"""The `models` (list, search, remove) and `pull` subcommands (registered by nmt_desktop.cli).

`pull` downloads an OPUS-MT model from the Hugging Face Hub (core/hub/pull.py) into the user data
folder's models/, after which `-m NAME` finds it like a bundled model.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

_HUB_NOTE = ("Models come from the Hugging Face Hub (HF_ENDPOINT overrides the address; HF_TOKEN or "
             "`hf auth login` for private models; HF_HUB_OFFLINE=1 never contacts it).")


def add_models(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("models", parents=[common], help="list, search for or remove models",
                       description="Without an action: list the bundled and installed models. " + _HUB_NOTE)
    p.set_defaults(handler=_cmd_list, json=False)
    actions = p.add_subparsers(title="actions", metavar="ACTION", parser_class=type(p))
    ls = actions.add_parser("list", parents=[common], help="list bundled and installed models (the default)")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ls.set_defaults(handler=_cmd_list)
    search = actions.add_parser(
        "search", parents=[common], help="find OPUS-MT models on the Hub by language",
        description="List Helsinki-NLP OPUS-MT models on the Hub whose languages match: one term matches "
                    "either side, two terms are source then target. Terms are codes (de, deu) or English "
                    "names (German). When the Hub cannot be reached, the catalogue shipped with the app "
                    "answers (without sizes and licenses) and says so.")
    search.add_argument("terms", nargs="*", metavar="LANGUAGE", help="e.g. 'en de', 'German', 'fr'")
    search.add_argument("--offline", action="store_true", help="search only the shipped catalogue")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(handler=_cmd_search)
    rm = actions.add_parser("remove", parents=[common], help="delete an installed model")
    rm.add_argument("name", metavar="NAME", help="the installed model's name, as `models` lists it")
    rm.set_defaults(handler=_cmd_remove)


def add_pull(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "pull", parents=[common], help="download an OPUS-MT model from the Hugging Face Hub",
        description="Download a Marian model (e.g. Helsinki-NLP/opus-mt-en-de; the Helsinki-NLP/ prefix may be "
                    "left out), check every file against the Hub's checksums, convert it without transformers "
                    "or pickle and install it into the user data folder's models/ as NAME (default: the repo's "
                    "name). Only the files the converter needs are fetched (~300 MB for a 6+6-layer model). "
                    + _HUB_NOTE)
    p.add_argument("repo", metavar="REPO", help="Hub model id, e.g. Helsinki-NLP/opus-mt-en-de")
    p.add_argument("--int8", action="store_true", help="store the weights as int8 (under half the size)")
    p.add_argument("--name", metavar="NAME", help="install under this name (default: the repo's name)")
    p.add_argument("--revision", metavar="REV", help="branch, tag or commit to download (default: main)")
    p.add_argument("--force", action="store_true", help="replace an installed model of the same name")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_cmd_pull)


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def _cmd_list(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.installed import list_models
    from nmt_desktop.core.locations import user_models_dir
    from nmt_desktop.core.formats.model_dir import human_size

    models = list_models()
    if getattr(args, "json", False):
        print(json.dumps([{"name": m.name, "path": str(m.path), "bundled": m.bundled, "size_bytes": m.size_bytes,
                           "languages": m.languages, "source": m.source, "license": m.license} for m in models],
                         ensure_ascii=False, indent=2))
        return 0
    rows = [[m.name, m.languages or "?", human_size(m.size_bytes), "bundled" if m.bundled else "installed",
             m.source if not m.bundled else "", m.license] for m in models]
    print(_table(rows, ["NAME", "LANGUAGES", "SIZE", "KIND", "FROM", "LICENSE"]) if rows else "no models installed")
    print(f"\nInstalled models live in {user_models_dir()}; get more with 'nmt-desktop models search LANG' "
          "and 'nmt-desktop pull REPO'.")
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.catalogue import search_models
    from nmt_desktop.core.formats.model_dir import human_size

    result = search_models(args.terms, offline=args.offline)
    if args.json:
        print(json.dumps({"offline": result.offline, "reason": result.reason, "snapshot": result.snapshot,
                          "models": [{"repo": m.repo, "source": m.source, "target": m.target,
                                      "languages": m.languages, "license": m.license, "size_bytes": m.size_bytes,
                                      "downloads": m.downloads} for m in result.models]},
                         ensure_ascii=False, indent=2))
        return 0
    if result.offline:
        print(f"nmt-desktop: {result.reason.rstrip('.')}; showing the offline catalogue "
              f"(snapshot {result.snapshot or 'unknown'}, no sizes or licenses).", file=sys.stderr)
    if not result.models:
        print(f"no OPUS-MT model matches {' '.join(args.terms) or 'anything'}")
        return 0
    rows = [[m.repo, m.languages, human_size(m.size_bytes) if m.size_bytes else "-", m.license or "-",
             f"{m.downloads:,}" if m.downloads is not None else "-"] for m in result.models]
    print(_table(rows, ["MODEL", "LANGUAGES", "SIZE", "LICENSE", "DOWNLOADS"]))
    print(f"\n{len(rows)} model{'s' if len(rows) != 1 else ''}; install one with 'nmt-desktop pull MODEL'.")
    return 0


def _cmd_remove(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.installed import remove_model

    print(f"removed {remove_model(args.name)}")
    return 0


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


def _cmd_pull(args: argparse.Namespace) -> int:
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
