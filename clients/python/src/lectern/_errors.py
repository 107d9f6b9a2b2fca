"""The errors a Lectern client raises: one base class, one subclass per kind of failure."""

from __future__ import annotations

import email.utils
import json
import math
import time
from typing import Dict, Mapping, Optional, Tuple, Type

#: The API's error types with their HTTP status and the phrase a server started with
#: ``ERROR_STYLE=phrase`` sends instead of the code. The client always reports the code.
ERROR_TYPES: Mapping[str, Tuple[int, str]] = {
    "invalid_parameters": (400, "Invalid parameters"),
    "bad_request": (400, "Bad request"),
    "missing_authorization_header": (401, "Missing authorization header"),
    "invalid_authorization_format": (401, "Invalid authorization format"),
    "invalid_api_key": (401, "Invalid API key"),
    "api_key_inactive": (401, "API key inactive"),
    "insufficient_permissions": (403, "Insufficient permissions"),
    "resource_not_found": (404, "Resource not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "request_timeout": (408, "Request timeout"),
    "uri_too_long": (414, "URI too long"),
    "rate_limit_exceeded": (429, "Rate limit exceeded"),
    "request_header_fields_too_large": (431, "Request header fields too large"),
    "internal_error": (500, "Internal server error"),
    "service_unavailable": (503, "Service unavailable"),
}

#: The ``type`` of a failure whose body is not the API's error envelope (a proxy's error page).
UNEXPECTED_RESPONSE = "unexpected_response"
#: The ``type`` of an :class:`APIConnectionError`.
CONNECTION_ERROR = "connection_error"
#: The ``type`` of a :class:`RedirectLimitError`.
TOO_MANY_REDIRECTS = "too_many_redirects"


class LecternError(Exception):
    """Any failure of a Lectern request.

    ``type`` is the API's error type in code form (``invalid_api_key``, ``rate_limit_exceeded``…),
    even from a server that sends phrases; ``status`` the HTTP status (``None`` only for an
    :class:`APIConnectionError`, which got no response); ``message`` the API's human-readable text;
    ``request_id`` the response's ``X-Request-Id`` (quote it when reporting a problem);
    ``retry_after`` the seconds the server asked to wait (``Retry-After``), when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        type: str,
        status: Optional[int],
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.status = status
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = [f"{self.status} {self.type}" if self.status is not None else self.type]
        if self.request_id:
            parts.append(f"request id {self.request_id}")
        return f"{self.message} ({', '.join(parts)})"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(message={self.message!r}, type={self.type!r}, "
            f"status={self.status!r}, request_id={self.request_id!r})"
        )


class InvalidRequestError(LecternError):
    """400 (``invalid_parameters``, ``bad_request``), 405, 408, 414 or 431: the request needs fixing."""


class AuthenticationError(LecternError):
    """401: the API key is missing, malformed, unknown, revoked or inactive."""


class PermissionDeniedError(LecternError):
    """403 ``insufficient_permissions``: the key's role or scopes lack the permission the endpoint
    needs, or its forms leave out this form; the message names the permission (and the form)."""


class NotFoundError(LecternError):
    """404 ``resource_not_found``: the form (or path) does not exist."""


class RateLimitError(LecternError):
    """429 ``rate_limit_exceeded``: over the hourly or per-second limit; see ``retry_after``."""


class ServerError(LecternError):
    """500 and other 5xx (``internal_error``, or ``unexpected_response`` for a body that is not the API's)."""


class ServiceUnavailableError(LecternError):
    """503 ``service_unavailable``: the server cannot reach its database for now; see ``retry_after``."""


class APIConnectionError(LecternError):
    """No response: the connection failed, was cut, or timed out (``type`` is ``connection_error``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, type=CONNECTION_ERROR, status=None)


class RedirectLimitError(LecternError):
    """A :class:`RedirectLoader` found more active redirects than its ``max_redirects`` (``type`` is
    ``too_many_redirects``, ``status`` ``None``: no response failed); it keeps the ones it had."""

    def __init__(self, max_redirects: int) -> None:
        super().__init__(
            f"Lectern has more than {max_redirects} active redirects, the loader's max_redirects: raise it, "
            "or serve them from the web server's configuration (lectern redirects export)",
            type=TOO_MANY_REDIRECTS,
            status=None,
        )
        self.max_redirects = max_redirects


_CLASS_BY_STATUS: Dict[int, Type[LecternError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: InvalidRequestError,
    408: InvalidRequestError,
    414: InvalidRequestError,
    429: RateLimitError,
    431: InvalidRequestError,
    500: ServerError,
    503: ServiceUnavailableError,
}

_TYPE_BY_LABEL: Dict[str, str] = {}
for _type, (_status, _phrase) in ERROR_TYPES.items():
    _TYPE_BY_LABEL[_type] = _type
    _TYPE_BY_LABEL[_phrase] = _type


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds: either a number of seconds or an HTTP date (``None`` if neither)."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if text.isdigit() and text.isascii():
        return float(int(text))
    try:
        date = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if date.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return float(max(0, math.ceil(date.timestamp() - current)))


def error_from_response(
    status: int,
    body: bytes,
    request_id: Optional[str],
    retry_after: Optional[str],
) -> LecternError:
    """The error a failed response stands for, read from its ``{"error", "message"}`` body."""
    error: object = None
    message: object = None
    try:
        parsed = json.loads(body.decode("utf-8"))
        if isinstance(parsed, dict):
            error = parsed.get("error")
            message = parsed.get("message")
    except (UnicodeDecodeError, ValueError):
        pass  # not the API's envelope (a proxy's error page): an unexpected response below
    type_ = _TYPE_BY_LABEL.get(error) if isinstance(error, str) else None
    text = message if isinstance(message, str) else f"Unexpected HTTP {status} response from Lectern"
    if type_ is not None:
        cls = _CLASS_BY_STATUS.get(ERROR_TYPES[type_][0], LecternError)
    elif status in _CLASS_BY_STATUS:
        cls = _CLASS_BY_STATUS[status]
    else:
        cls = ServerError if status >= 500 else LecternError
    return cls(
        text,
        type=type_ or UNEXPECTED_RESPONSE,
        status=status,
        request_id=request_id,
        retry_after=parse_retry_after(retry_after),
    )
