"""The `serve` command: the models as a local translation server speaking LibreTranslate's and OPUS-CAT MT
Engine's HTTP APIs (nmt_desktop/server/), for Weblate, Subtitle Edit, OmegaT, Trados, memoQ and browsers.

Binds 127.0.0.1 by default; any other address needs an API key (--api-key or --api-keys), else the command
refuses in one sentence (exit 2). SIGTERM or Ctrl+C stops it gracefully (requests in flight answered, exit 0).
"""

from __future__ import annotations

import argparse
import os

from nmt_desktop.cli.common import (CLIError, UsageError, add_running_options, fix_arg, int_at_least, load_translator,
                                    non_negative_int, positive_int, resolve_model)

SERVE_BATCH_SIZE = 32


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve", parents=[common], help="run a local translation server (LibreTranslate and OPUS-CAT APIs)",
        description="Serve the models over HTTP with LibreTranslate's API (POST /translate, /detect, "
                    "/translate_file; GET /languages) and OPUS-CAT MT Engine's (/MtRestService/...), so that "
                    "Weblate, Subtitle Edit, OmegaT and the OPUS-CAT plugins for Trados, memoQ and Wordfast "
                    "use them. Requests from many clients are decoded together. See the user guide's "
                    "\"Local server\" page.")
    p.add_argument("-m", "--model", dest="models", action="append", metavar="MODEL",
                   help="a model to serve (repeat for several: -m en-de -m en-fr; routed by language pair); "
                        "default: every bundled model")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs an API key)")
    p.add_argument("--port", type=int_at_least(0, "port (0-65535)"), default=5000,
                   help="port (default 5000, LibreTranslate's; 0 picks a free one, said in the listening line)")
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--api-key", metavar="KEY", help="the key every request must carry (api_key, or tokenCode)")
    keys.add_argument("--api-keys", metavar="FILE",
                      help="a file of keys, one per line, each optionally followed by its requests per minute")
    p.add_argument("--rate-limit", type=_positive_float, default=None, metavar="N",
                   help="requests per minute per key (per client address without keys); default: no limit")
    p.add_argument("--cors", action="append", metavar="ORIGIN",
                   help="an origin browsers may call from (repeat; default *, as LibreTranslate)")
    p.add_argument("--log-json", action="store_true",
                   help="one JSON line per event on stdout (listening, each request, stopped)")
    limits = p.add_argument_group("limits")
    limits.add_argument("--max-chars", type=positive_int, default=5000, metavar="N",
                        help="characters of one text (default 5000)")
    limits.add_argument("--max-list", type=positive_int, default=128, metavar="N",
                        help="texts in one request's q list (default 128)")
    limits.add_argument("--max-file-mb", type=_positive_float, default=20.0, metavar="MB",
                        help="size of an uploaded document (default 20)")
    limits.add_argument("--max-queue", type=positive_int, default=1024, metavar="N",
                        help="segments waiting to be decoded before requests get 429 (default 1024)")
    limits.add_argument("--timeout", type=_positive_float, default=120.0, metavar="SECONDS",
                        help="how long a request may wait for its translation (default 120)")
    limits.add_argument("--batch-wait", type=non_negative_int, default=50, metavar="MS",
                        help="how long a batch may wait for the clients the last batches served, who tend to come "
                             "back together (default 50; 0: decode what is queued at once)")
    limits.add_argument("--file-ttl", type=non_negative_int, default=600, metavar="SECONDS",
                        help="translated documents are deleted this long after they are made (default 600)")
    p.add_argument("--decode-in-process", action="store_true",
                   help="decode on a thread of the server's own process, as before issue 43's decode processes "
                        "(for comparison: the HTTP side and the decoding then share one interpreter lock)")
    p.add_argument("--half-batches", action="store_true",
                   help="a decode process's batches hold half the clients at work, so that one half's answers travel "
                        "while the other half decodes (default: every waiting request; halves cost more CPU per "
                        "sentence, see benchmarks/RESULTS.md)")
    p.add_argument("--whole-batches", action="store_true",
                   help="decode plain lines in whole batches, as before continuous batching (default: each sentence "
                        "joins the running search when a row is free and is answered when it ends; for comparison)")
    p.add_argument("--decode-child", metavar="SPEC", help=argparse.SUPPRESS)  # a model's decode process (server/decode_child.py)
    add_running_options(p, "segments (from all clients) decoded")
    for action in p._actions:  # a server batches what many clients send: 32 (the concurrency the issue measures)
        if action.dest == "batch_size":
            action.default = SERVE_BATCH_SIZE
            action.help = f"segments (from all clients) decoded together (default {SERVE_BATCH_SIZE})"
    return p


def run(args: argparse.Namespace) -> int:
    if args.decode_child is not None:  # started by the server itself (server/decode_process.py), never by a user
        from nmt_desktop.server.decode_child import main

        return main(args.decode_child)
    from nmt_desktop.server.access import KeyFileError, is_loopback, read_keys
    from nmt_desktop.server.settings import Limits, ServerSettings

    host = fix_arg(args.host)
    if args.port > 65535:
        raise UsageError(f"--port: expected 0-65535, got {args.port}")
    if args.api_key is not None:
        if not args.api_key.strip():
            raise UsageError("--api-key: the key is empty")
        keys: dict[str, float | None] = {fix_arg(args.api_key): None}
    elif args.api_keys is not None:
        try:
            keys = read_keys(fix_arg(args.api_keys))
        except KeyFileError as exc:
            raise CLIError(str(exc)) from None
    else:
        keys = {}
    if not is_loopback(host) and not keys:
        raise UsageError(f"--host {host} would let other machines use the server: give --api-key KEY or "
                         f"--api-keys FILE, or keep the default 127.0.0.1")
    from nmt_desktop.server.decode_process import ModelLoad, ModelLoadError
    from nmt_desktop.server.run import bind, serve

    try:
        sock = bind(host, args.port)  # before the models load: a port in use is said at once
    except OSError as exc:
        raise CLIError(f"cannot listen on {host}:{args.port}: {exc.strerror or exc}") from None
    try:
        names = [fix_arg(m) for m in args.models] if args.models else _bundled()
        if args.decode_in_process or os.name == "nt":  # Windows: no fd passing for the decode process's socket
            models: list = [load_translator(name, args) for name in names]
        else:  # each model loads in its own decode process (nmt_desktop/server/decode_process.py)
            models = [ModelLoad(str(resolve_model(name)), args.int8, args.backend, args.threads) for name in names]
    except BaseException:
        sock.close()
        raise
    limits = Limits(max_chars=args.max_chars, max_list=args.max_list, max_file_bytes=int(args.max_file_mb * 1024 * 1024),
                    max_queue=args.max_queue, timeout_s=args.timeout)
    settings = ServerSettings(host=host, port=args.port, keys=keys, rate_per_minute=args.rate_limit,
                              cors=tuple(args.cors or ("*",)), log_json=args.log_json, limits=limits,
                              file_ttl_s=float(args.file_ttl), batch_size=args.batch_size,
                              window_s=args.batch_wait / 1000.0, halves=args.half_batches,
                              continuous=not args.whole_batches)
    try:
        return serve(models, settings, sock)
    except ModelLoadError as exc:
        raise CLIError(str(exc)) from None


def _bundled() -> list[str | None]:
    from nmt_desktop.core.locations import bundled_models

    found = [str(p) for p in bundled_models()]
    return found or [None]  # None: resolve_model's one sentence when nothing is installed
