"""LibreTranslate's API (libretranslate/app.py) as its clients send it: POST /translate, /detect,
/translate_file; GET /languages, /download_file/<name>, /frontend/settings, /health. Fields, defaults,
status codes and error texts are LibreTranslate's; `trust` and `alignment` are this server's additions
(extensions.py), present only when asked for."""

from __future__ import annotations

import asyncio
import mimetypes
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from nmt_desktop.core.hub.catalogue import language_name
from nmt_desktop.server.batcher import DecodeKey, QueueFull
from nmt_desktop.server.context import ServerContext, note, queue_full
from nmt_desktop.server.decode_requests import FileRequest, TextRequest
from nmt_desktop.server.detection import detect
from nmt_desktop.server.errors import ApiError, missing
from nmt_desktop.server.file_jobs import SUPPORTED
from nmt_desktop.server.params import is_json, read_params
from nmt_desktop.server.segments import html_segment, text_segment

MAX_ALTERNATIVES = 3  # LibreTranslate's --alternatives-limit default


def _flag(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"))


def _source_language(ctx: ServerContext, source: str, texts: list[str]) -> tuple[str, dict[str, Any] | None]:
    """The source code to route by, and LibreTranslate's detectedLanguage for "auto" (else None)."""
    if source != "auto":
        return source, None
    found = detect("\n".join(texts), ctx.models.sources(), 1)
    best = found[0] if found else {"confidence": 0.0, "language": ctx.models.sources()[0]}
    return best["language"], best


def translate_route(ctx: ServerContext):
    limits = ctx.settings.limits

    async def translate(request: Request) -> Response:
        body = await ctx.body(request, limits.max_body_bytes)
        params = await read_params(request, body)
        ctx.check_access(request, params.get("api_key"))
        q, source, target = params.get("q"), params.get("source"), params.get("target")
        if not q:
            raise missing("q")
        if not source:
            raise missing("source")
        if not target:
            raise missing("target")
        try:
            count = max(0, int(params.get("alternatives", 0) or 0))
        except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999 in JSON is infinity
            raise ApiError(400, "Invalid request: alternatives parameter is not a number") from None
        if count > MAX_ALTERNATIVES:
            raise ApiError(400, f"Invalid request: alternatives parameter must be <= {MAX_ALTERNATIVES}")
        batch = isinstance(q, list)
        texts = q if batch else [q]
        limits.check(texts, batch)
        if not is_json(request):
            texts = ["\n".join(t.splitlines()) for t in texts]
        fmt = params.get("format") or "text"
        if fmt not in ("text", "html"):
            raise ApiError(400, f"{fmt} format is not supported")
        # language identification and HTML parsing in a worker thread: the event loop only routes and waits
        code, detected = (await asyncio.to_thread(_source_language, ctx, "auto", texts) if source == "auto"
                          else (str(source), None))
        model = ctx.models.route(code, str(target))
        want_trust, want_alignment = _flag(params.get("trust")), _flag(params.get("alignment"))
        segments = (await asyncio.to_thread(lambda: [html_segment(t) for t in texts]) if fmt == "html"
                    else [text_segment(t) for t in texts])
        characters = sum(s.characters for s in segments)
        note(request, len(segments), characters, model.name)
        key = DecodeKey(max(ctx.settings.beam_size, count + 1) if count else ctx.settings.beam_size,
                        count + 1 if count else 1, ctx.models.code(str(target)) if model.multilingual else None,
                        keep_spans=not count)
        wanted = TextRequest(tuple(texts), key, fmt == "html", "libre", count, want_trust, want_alignment)
        try:
            future = model.worker.submit(wanted, segments)
        except QueueFull as exc:
            raise queue_full(exc) from None
        answers = await ctx.wait(future)
        result: dict[str, Any] = {"translatedText": [a["text"] for a in answers] if batch else answers[0]["text"]}
        if detected is not None:
            result["detectedLanguage"] = [detected] * len(texts) if batch else detected
        for name in ("alternatives", "trust", "alignment"):
            if answers and name in answers[0]:
                result[name] = [a[name] for a in answers] if batch else answers[0][name]
        return JSONResponse(result)

    return translate


def languages_route(ctx: ServerContext):
    async def languages(request: Request) -> Response:
        codes = ctx.models.all_codes()
        return JSONResponse([{"code": c, "name": language_name(c), "targets": ctx.models.targets_of(c)}
                             for c in codes])
    return languages


def detect_route(ctx: ServerContext):
    async def detect_language(request: Request) -> Response:
        body = await ctx.body(request, ctx.settings.limits.max_body_bytes)
        params = await read_params(request, body)
        ctx.check_access(request, params.get("api_key"))
        q = params.get("q")
        if not q:
            raise missing("q")
        texts = q if isinstance(q, list) else [q]
        ctx.settings.limits.check(texts, isinstance(q, list))
        text = "\n".join(texts)
        note(request, len(texts), len(text))
        return JSONResponse(await asyncio.to_thread(detect, text))
    return detect_language


def translate_file_route(ctx: ServerContext):
    limits = ctx.settings.limits

    async def translate_file(request: Request) -> Response:
        await ctx.body(request, limits.max_file_bytes + 64 * 1024)
        try:
            form = await request.form(max_files=1, max_fields=16)
        except Exception as exc:  # noqa: BLE001
            raise ApiError(400, f"Invalid request: the form cannot be read ({exc})") from None
        ctx.check_access(request, form.get("api_key") or request.query_params.get("api_key"))
        upload, source, target = form.get("file"), form.get("source"), form.get("target")
        if upload is None or isinstance(upload, str):
            raise missing("file")
        if not source:
            raise missing("source")
        if not target:
            raise missing("target")
        filename = upload.filename or ""
        if filename == "":
            raise ApiError(400, "Invalid request: empty file")
        suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
        if suffix not in SUPPORTED:
            raise ApiError(400, "Invalid request: file format not supported")
        data = await upload.read()
        if len(data) > limits.max_file_bytes:
            raise ApiError(400, f"Invalid request: the file ({len(data)} bytes) is larger than this server takes "
                                f"({limits.max_file_bytes} bytes)")
        if source == "auto":
            source = (ctx.models.sources()[0] if len(ctx.models.sources()) == 1
                      else await asyncio.to_thread(_auto_file_source, ctx, data))
        model = ctx.models.route(str(source), str(target))
        note(request, 1, len(data), model.name)
        path = ctx.files.upload_path(filename)
        path.write_bytes(data)
        target_code = ctx.models.code(str(target))
        wanted = FileRequest(str(path), filename, target_code, target_code if model.multilingual else None,
                             str(ctx.files.folder), ctx.settings.batch_size)
        try:
            future = model.worker.submit_file(wanted)
        except QueueFull as exc:
            path.unlink(missing_ok=True)
            raise queue_full(exc) from None
        name = await ctx.wait(future)
        return JSONResponse({"translatedFileUrl": str(request.url_for("download_file", filename=name))})

    return translate_file


def _auto_file_source(ctx: ServerContext, data: bytes) -> str:
    found = detect(data[:20000].decode("utf-8", "ignore"), ctx.models.sources(), 1)
    return found[0]["language"] if found else ctx.models.sources()[0]


def download_route(ctx: ServerContext):
    async def download_file(request: Request) -> Response:
        data, name = await asyncio.to_thread(ctx.files.read, request.path_params["filename"])
        return Response(data, media_type=mimetypes.guess_type(name)[0] or "text/plain",
                        headers={"content-disposition": f'attachment; filename="{name}"'})
    return download_file


def settings_route(ctx: ServerContext):
    async def frontend_settings(request: Request) -> Response:
        sources = ctx.models.sources()
        source = sources[0] if sources else "en"
        targets = ctx.models.targets_of(source) or [source]
        return JSONResponse({
            "charLimit": ctx.settings.limits.max_chars, "frontendTimeout": 500,
            "apiKeys": bool(ctx.settings.keys), "keyRequired": bool(ctx.settings.keys), "suggestions": False,
            "filesTranslation": True, "supportedFilesFormat": list(SUPPORTED),
            "language": {"source": {"code": source, "name": language_name(source)},
                         "target": {"code": targets[0], "name": language_name(targets[0])}}})
    return frontend_settings


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def routes(ctx: ServerContext) -> list[Route]:
    return [
        Route("/translate", translate_route(ctx), methods=["POST"]),
        Route("/detect", detect_route(ctx), methods=["POST"]),
        Route("/languages", languages_route(ctx), methods=["GET"]),
        Route("/translate_file", translate_file_route(ctx), methods=["POST"]),
        Route("/download_file/{filename:str}", download_route(ctx), methods=["GET"], name="download_file"),
        Route("/frontend/settings", settings_route(ctx), methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
