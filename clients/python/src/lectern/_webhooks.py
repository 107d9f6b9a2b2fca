"""Verifying the webhooks Lectern sends, as the Standard Webhooks specification says.

The ``webhook-signature`` header holds ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``,
keyed by the endpoint secret's decoded bytes (the secret is ``whsec_`` and base64).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import json
import re
import time
from typing import Any, Iterable, Mapping, Optional, Tuple, Union

#: How far a delivery's timestamp may be from now, in seconds, unless ``tolerance`` says otherwise.
DEFAULT_WEBHOOK_TOLERANCE = 300

_SECRET_PREFIX = "whsec_"
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")

#: A request's headers: a dict, a ``Mapping`` (WSGI frameworks' header objects), or ``(name, value)`` pairs.
WebhookHeaders = Union[Mapping[str, Any], Iterable[Tuple[str, str]]]


class WebhookVerificationError(ValueError):
    """A delivery that is not provably from Lectern, or not from now: answer it with a 4xx and drop it.

    ``reason`` says why: ``missing_header``, ``invalid_timestamp``, ``stale_timestamp``,
    ``invalid_signature``, ``invalid_secret`` or ``invalid_payload``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _header(headers: WebhookHeaders, name: str) -> str:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    for key, value in pairs:
        if isinstance(key, bytes):
            key = key.decode("latin-1")
        if not isinstance(key, str) or key.lower() != name:
            continue
        if isinstance(value, (list, tuple)):
            value = value[0] if value else ""
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        return value if isinstance(value, str) else ""
    return ""


def _secret_key(secret: str) -> bytes:
    encoded = secret[len(_SECRET_PREFIX) :] if isinstance(secret, str) and secret.startswith(_SECRET_PREFIX) else secret
    if not isinstance(encoded, str) or encoded == "" or not _BASE64.fullmatch(encoded):
        raise WebhookVerificationError("invalid_secret", "The webhook secret is not `whsec_` followed by base64")
    try:
        return base64.b64decode(encoded, validate=True)
    except binascii.Error:  # pragma: no cover - the pattern above only lets valid base64 through
        raise WebhookVerificationError("invalid_secret", "The webhook secret is not valid base64") from None


def verify_webhook(
    payload: Union[str, bytes, bytearray, memoryview],
    headers: WebhookHeaders,
    secret: str,
    *,
    tolerance: float = DEFAULT_WEBHOOK_TOLERANCE,
    now: Union[datetime.datetime, float, None] = None,
) -> Any:
    """Checks that a webhook delivery comes from Lectern and is recent, and returns its event.

    ``payload`` is the raw request body, exactly as received (``bytes`` or ``str``): parsing and
    re-serialising it breaks the signature. ``headers`` are the request's headers, names in any
    case. ``secret`` is the endpoint's signing secret (``whsec_…``). The ``webhook-timestamp`` may be
    at most ``tolerance`` seconds from ``now`` (an aware ``datetime`` or Unix seconds; the real time
    by default). Returns the parsed JSON event (a dict with ``id``, ``type``, ``createdAt`` and
    ``data``); raises :class:`WebhookVerificationError` otherwise.
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise ValueError(f"verify_webhook: tolerance must be a number of seconds of at least 0 (got {tolerance!r})")
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    for name, value in (("webhook-id", message_id), ("webhook-timestamp", timestamp), ("webhook-signature", signatures)):
        if value == "":
            raise WebhookVerificationError("missing_header", f"The {name} header is missing")
    key = _secret_key(secret)
    if not _TIMESTAMP.fullmatch(timestamp):
        raise WebhookVerificationError("invalid_timestamp", "The webhook-timestamp header is not a Unix time in seconds")
    if now is None:
        current = time.time()
    elif isinstance(now, datetime.datetime):
        current = now.timestamp()
    else:
        current = float(now)
    age = int(current // 1) - int(timestamp)
    if abs(age) > tolerance:
        direction = "old" if age > 0 else "ahead"
        raise WebhookVerificationError(
            "stale_timestamp",
            f"The webhook-timestamp is {abs(age)} seconds {direction}, more than the {tolerance} allowed",
        )

    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    signed = f"{message_id}.{timestamp}.".encode("utf-8") + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    # Several signatures may be sent at once (a secret being rotated): any valid ``v1`` one passes.
    valid = False
    for entry in signatures.split(" "):
        version, comma, signature = entry.partition(",")
        if comma and version == "v1" and hmac.compare_digest(signature.encode("utf-8"), expected.encode("ascii")):
            valid = True
    if not valid:
        raise WebhookVerificationError("invalid_signature", "No webhook-signature matches the payload")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise WebhookVerificationError("invalid_payload", "The webhook payload is not JSON") from None
