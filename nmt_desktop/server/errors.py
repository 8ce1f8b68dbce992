"""The one error type a route raises: an HTTP status and one sentence, answered as LibreTranslate does,
`{"error": "..."}` (app.py turns it into the response)."""

from __future__ import annotations


class ApiError(Exception):
    """A request the server refuses or cannot answer: `status` (400, 403, 404, 429, 500, 503) and one sentence."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def missing(name: str) -> ApiError:
    """LibreTranslate's wording for a parameter that is absent or empty."""
    return ApiError(400, f"Invalid request: missing {name} parameter")
