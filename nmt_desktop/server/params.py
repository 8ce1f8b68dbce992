"""A request's parameters as LibreTranslate reads them: a JSON object when the body is JSON (anything else
there is "Invalid JSON format"), else the query string and the form (url-encoded or multipart) together,
as Flask's `request.values`."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from nmt_desktop.server.errors import ApiError


def is_json(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


async def read_params(request: Request, body: bytes) -> dict[str, Any]:
    """The parameters of a request whose body was read (context.body); the form's files are left out."""
    if is_json(request):
        try:
            data = json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: arrays nested 100,000 deep
            data = None
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
