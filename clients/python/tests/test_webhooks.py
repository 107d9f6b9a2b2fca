"""Every delivery of ``spec/webhook-vectors.json``, verified by :func:`lectern.verify_webhook`."""

from __future__ import annotations

import datetime
from typing import Any, Dict, List

import pytest
from conftest import load_spec

import lectern
from lectern import WebhookVerificationError, verify_webhook

VECTORS: List[Dict[str, Any]] = load_spec("webhook-vectors.json")["vectors"]
VALID = [vector for vector in VECTORS if "event" in vector["expect"]]


def verify(vector: Dict[str, Any], payload: Any = None, headers: Any = None) -> Any:
    options: Dict[str, Any] = {"now": vector["now"]}
    if "tolerance" in vector:
        options["tolerance"] = vector["tolerance"]
    return verify_webhook(
        vector["payload"] if payload is None else payload,
        vector["headers"] if headers is None else headers,
        vector["secret"],
        **options,
    )


def test_the_vectors_hold_valid_and_refused_deliveries_of_every_kind() -> None:
    assert len(VALID) > 5
    reasons = {vector["expect"]["error"] for vector in VECTORS if "error" in vector["expect"]}
    assert reasons == {
        "missing_header",
        "invalid_timestamp",
        "stale_timestamp",
        "invalid_signature",
        "invalid_secret",
        "invalid_payload",
    }


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_vector(vector: Dict[str, Any]) -> None:
    if "event" in vector["expect"]:
        assert verify(vector) == vector["expect"]["event"]
        # The raw bytes of the body, as a WSGI or ASGI app reads them, verify the same.
        assert verify(vector, payload=vector["payload"].encode("utf-8")) == vector["expect"]["event"]
    else:
        with pytest.raises(WebhookVerificationError) as caught:
            verify(vector)
        assert caught.value.reason == vector["expect"]["error"]
        assert str(caught.value)


def test_headers_may_be_name_value_pairs_in_any_case() -> None:
    vector = VALID[0]
    pairs = [(name.upper(), value) for name, value in vector["headers"].items()]
    assert verify(vector, headers=pairs) == vector["expect"]["event"]


def test_now_may_be_an_aware_datetime() -> None:
    vector = VALID[0]
    now = datetime.datetime.fromtimestamp(vector["now"], tz=datetime.timezone.utc)
    assert verify_webhook(vector["payload"], vector["headers"], vector["secret"], now=now) == vector["expect"]["event"]
    with pytest.raises(WebhookVerificationError) as caught:
        verify_webhook(
            vector["payload"], vector["headers"], vector["secret"], now=now + datetime.timedelta(seconds=301)
        )
    assert caught.value.reason == "stale_timestamp"


def test_a_negative_tolerance_is_a_programming_error() -> None:
    vector = VALID[0]
    with pytest.raises(ValueError, match="tolerance"):
        verify_webhook(vector["payload"], vector["headers"], vector["secret"], tolerance=-1)


def test_the_verification_error_is_exported_and_a_value_error() -> None:
    assert issubclass(lectern.WebhookVerificationError, ValueError)
    assert "verify_webhook" in lectern.__all__
