"""OPUS-CAT MT Engine's REST routes (OpusCatMTEngineCore/OWIN/MachineTranslationController.cs), so that its
Trados, memoQ, OmegaT and Wordfast plugins work pointed at this server's port: GET /MtRestService/Translate,
TranslateJson, TranslateStream, BatchTranslate, ListSupportedLanguagePairs, GetLanguagePairModelTags,
CheckModelStatus; POST TranslatePost, PreOrderBatch. Parameters tokenCode, input, srcLangCode, trgLangCode,
modelTag, as query or form fields; paths in any case (ASP.NET Core's routing: the OmegaT plugin writes
/MTRestService/). The plugins send tokenCode=0: it is accepted as OPUS-CAT does, unless
the server has API keys, when tokenCode must be one (OPUS-CAT's own check always passes)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from nmt_desktop.server.batcher import DecodeKey, QueueFull
from nmt_desktop.server.context import ServerContext, note, queue_full
from nmt_desktop.server.decode_requests import TextRequest
from nmt_desktop.server.errors import ApiError, missing
from nmt_desktop.server.routing import ServedModel
from nmt_desktop.server.segments import text_segment

# ISO 639-2/3 codes the plugins may send for a model's two-letter code (OPUS-CAT's IsoLanguage accepts both)
_THREE_LETTER = {"eng": "en", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr", "spa": "es", "ita": "it",
                 "por": "pt", "nld": "nl", "dut": "nl", "fin": "fi", "swe": "sv", "rus": "ru", "pol": "pl"}


def language_code(code: str) -> str:
    """"en-US", "en_GB", "eng" -> "en" (OPUS-CAT's ShortestIsoCode)."""
    base = code.replace("_", "-").split("-")[0].strip().strip('"').lower()
    return _THREE_LETTER.get(base, base)


async def _params(ctx: ServerContext, request: Request) -> dict[str, Any]:
    params: dict[str, Any] = {k: request.query_params.getlist(k) for k in request.query_params.keys()}
    if request.method == "POST":
        body = await ctx.body(request, ctx.settings.limits.max_body_bytes)
        kind = request.headers.get("content-type", "")
        if "json" in kind and body:
            try:
                data = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise ApiError(400, "Invalid JSON format") from None
            if isinstance(data, list):
                params["input"] = [str(x) for x in data]
            elif isinstance(data, dict):
                params.update({k: v if isinstance(v, list) else [v] for k, v in data.items()})
        elif body:
            form = await request.form(max_files=0, max_fields=64)
            for name in form.keys():
                params.setdefault(name, [v for v in form.getlist(name) if isinstance(v, str)])
    return params


def _one(params: dict[str, Any], name: str) -> str:
    values = params.get(name) or [""]
    return str(values[0]) if values[0] is not None else ""


def _route(ctx: ServerContext, params: dict[str, Any]) -> ServedModel:
    for name in ("srcLangCode", "trgLangCode"):
        if not language_code(_one(params, name)):
            raise missing(name)
    return ctx.models.route(language_code(_one(params, "srcLangCode")), language_code(_one(params, "trgLangCode")),
                            _one(params, "modelTag"))


async def _translate(ctx: ServerContext, request: Request, params: dict[str, Any], texts: list[str],
                     pairs: bool) -> list[Any]:
    model = _route(ctx, params)
    ctx.settings.limits.check(texts, True)
    segments = [text_segment(t) for t in texts]
    note(request, len(segments), sum(s.characters for s in segments), model.name)
    target = language_code(_one(params, "trgLangCode"))
    wanted = TextRequest(tuple(texts), DecodeKey(ctx.settings.beam_size, 1, target if model.multilingual else None),
                         shape="pairs" if pairs else "texts")
    try:
        future = model.worker.submit(wanted, segments)
    except QueueFull as exc:
        raise queue_full(exc) from None
    return await ctx.wait(future)


def _text_response(request: Request, text: str) -> Response:
    """A C# string as ASP.NET Core answers it: text/plain, or a JSON string when the client asks only for JSON
    (RestSharp's Accept, which the Trados plugin's JsonConvert then reads)."""
    accept = request.headers.get("accept", "")
    if "json" in accept and "text/plain" not in accept and "*/*" not in accept:
        return JSONResponse(text)
    return PlainTextResponse(text)


ACTIONS = ("Translate", "TranslateJson", "TranslateStream", "TranslatePost", "BatchTranslate",
           "ListSupportedLanguagePairs", "GetLanguagePairModelTags", "CheckModelStatus", "PreOrderBatch")
BASE = "/MtRestService/"
_CANONICAL = {f"{BASE}{action}".lower(): f"{BASE}{action}" for action in ACTIONS}


class CaseInsensitivePaths:
    """ASGI middleware: OPUS-CAT's routes matched without regard to case, as ASP.NET Core matches them (the
    OmegaT plugin calls /MTRestService/TranslateJson, the others /MtRestService/...)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            canonical = _CANONICAL.get(scope["path"].rstrip("/").lower())
            if canonical is not None and canonical != scope["path"]:
                scope = dict(scope, path=canonical)
        await self.app(scope, receive, send)


def routes(ctx: ServerContext) -> list[Route]:
    def handler(kind: str):
        async def handle(request: Request) -> Response:
            params = await _params(ctx, request)
            ctx.check_access(request, _one(params, "tokenCode") if ctx.settings.keys else None)
            if kind == "pairs":
                pairs = [f"{s}-{t}" for s, t in ctx.models.pairs()]
                return JSONResponse(pairs)
            if kind == "tags":
                _route(ctx, params)  # a pair without a model: 400
                names = ctx.models.named(language_code(_one(params, "srcLangCode")),
                                         language_code(_one(params, "trgLangCode")))
                return JSONResponse([m.name for m in names])
            if kind == "status":
                model = _route(ctx, params)
                return _text_response(request, f"Model {model.name} for {model.source}-"
                                               f"{language_code(_one(params, 'trgLangCode'))} is ready.")
            if kind == "preorder":
                return Response(status_code=200)
            inputs = [str(v) for v in params.get("input", [])] or [""]
            if kind == "batch":
                return JSONResponse(await _translate(ctx, request, params, inputs, pairs=False))
            answers = await _translate(ctx, request, params, inputs[:1], pairs=kind in ("json", "post"))
            if kind in ("json", "post"):
                return JSONResponse(answers[0])
            return _text_response(request, answers[0]) if kind == "text" else PlainTextResponse(answers[0])
        return handle

    kinds = {"Translate": ("text", ["GET"]), "TranslateJson": ("json", ["GET"]), "TranslateStream": ("stream", ["GET"]),
             "TranslatePost": ("post", ["GET", "POST"]), "BatchTranslate": ("batch", ["GET", "POST"]),
             "ListSupportedLanguagePairs": ("pairs", ["GET"]), "GetLanguagePairModelTags": ("tags", ["GET"]),
             "CheckModelStatus": ("status", ["GET"]), "PreOrderBatch": ("preorder", ["POST"])}
    return [Route(BASE + action, handler(kinds[action][0]), methods=kinds[action][1]) for action in ACTIONS]
