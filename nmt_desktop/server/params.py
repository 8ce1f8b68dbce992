"""A request's parameters as LibreTranslate reads them: a JSON object when the body is JSON (anything else
there is "Invalid JSON format"), else the query string and the form (url-encoded or multipart) together,
as Flask's `request.values`. One client's slip is forgiven: Subtitle Edit's JSON lacks the comma before
`"api_key"` when a key is set (src/libse/AutoTranslate/LibreTranslate.cs)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from nmt_desktop.server.errors import ApiError


_SUBTITLE_EDIT_KEY = re.compile(rb'"\s+"api_key"\s*:')


def _json(body: bytes) -> object:
    """The body's JSON value, None when it is not JSON (RecursionError: arrays nested 100,000 deep)."""
    try:
        return json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def is_json(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


async def read_params(request: Request, body: bytes) -> dict[str, Any]:
    """The parameters of a request whose body was read (context.body); the form's files are left out."""
    if is_json(request):
        data = _json(body)
        if data is None:  # Subtitle Edit writes its key without the comma before it: '"target": "de" "api_key": "K"'
            data = _json(_SUBTITLE_EDIT_KEY.sub(rb'", "api_key":', body, count=1))
        if not isinstance(data, dict):
            raise ApiError(400, "Invalid JSON format")
        return data
    params: dict[str, Any] = dict(request.query_params)
    if body:
        try:
            form = await request.form(max_files=0, max_fields=64)
        except Exception as exc:  # noqa: BLE001  (a malformed form, in one sentence)
            raise ApiError(400, f"Invalid request: the form cannot be read ({exc})") from None
        for name, value in form.items():
            if isinstance(value, str):
                params.setdefault(name, value)
    return params
