"""The `models` command: list the bundled and installed models (the default action), search the Hub's
OPUS-MT models by language, or remove an installed model. Each action sets `models_action` to its function."""

from __future__ import annotations

import argparse
import json
import sys

from nmt_desktop.cli.common import HUB_NOTE


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser("models", parents=[common], help="list, search for or remove models",
                       description="Without an action: list the bundled and installed models. " + HUB_NOTE)
    p.set_defaults(models_action=_list, json=False)
    actions = p.add_subparsers(title="actions", metavar="ACTION", parser_class=type(p))
    ls = actions.add_parser("list", parents=[common], help="list bundled and installed models (the default)")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ls.set_defaults(models_action=_list)
    search = actions.add_parser(
        "search", parents=[common], help="find OPUS-MT models on the Hub by language",
        description="List Helsinki-NLP OPUS-MT models on the Hub whose languages match: one term matches "
                    "either side, two terms are source then target. Terms are codes (de, deu) or English "
                    "names (German). When the Hub cannot be reached, the catalogue shipped with the app "
                    "answers (without sizes and licenses) and says so.")
    search.add_argument("terms", nargs="*", metavar="LANGUAGE", help="e.g. 'en de', 'German', 'fr'")
    search.add_argument("--offline", action="store_true", help="search only the shipped catalogue")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(models_action=_search)
    rm = actions.add_parser("remove", parents=[common], help="delete an installed model")
    rm.add_argument("name", metavar="NAME", help="the installed model's name, as `models` lists it")
    rm.set_defaults(models_action=_remove)
    return p


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def _list(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.installed import list_models
    from nmt_desktop.core.locations import user_models_dir
    from nmt_desktop.core.formats.model_folder import human_size

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


def _search(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.catalogue import search_models
    from nmt_desktop.core.formats.model_folder import human_size

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


def _remove(args: argparse.Namespace) -> int:
    from nmt_desktop.core.hub.installed import remove_model

    print(f"removed {remove_model(args.name)}")
    return 0


def run(args: argparse.Namespace) -> int:
    return args.models_action(args)
