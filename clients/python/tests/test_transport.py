"""The client's HTTP behaviour against a scripted upstream: retries and their back-off (on a fake
clock), conditional requests, errors, parameters and connection failures."""

from __future__ import annotations

import json
import socket
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, Iterator, Type

import pytest
from conftest import FakeClock, MisbehavingServer, ScriptedUpstream

import lectern
from lectern import Lectern
from lectern._errors import parse_retry_after

FORMS_PAGE: Dict[str, Any] = {
    "data": [{"id": "form_a", "title": "A", "description": None}],
    "meta": {"total": 1, "page": 1, "pageSize": 20, "totalPages": 1},
}
RATE_LIMITED = {"error": "rate_limit_exceeded", "message": "Rate limit exceeded, try again later"}
UNAVAILABLE = {"error": "service_unavailable", "message": "The database cannot be reached"}


def client_for(upstream: ScriptedUpstream, clock: FakeClock, **options: Any) -> Lectern:
    return Lectern(base_url=upstream.base_url, api_key="lk_live_test", sleep=clock.sleep, random=lambda: 0.5, **options)


def test_waits_out_retry_after_plus_jitter_then_succeeds(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(429, RATE_LIMITED, {"Retry-After": "2"})
    upstream.add(200, FORMS_PAGE)
    page = client_for(upstream, clock).forms.list()
    assert [form.id for form in page.data] == ["form_a"]
    assert clock.sleeps == [2 + 0.5 * 0.5]
    assert len(upstream.requests) == 2


def test_backs_off_exponentially_from_503_without_retry_after_and_gives_up_after_max_retries(
    upstream: ScriptedUpstream, clock: FakeClock
) -> None:
    for _ in range(3):
        upstream.add(503, UNAVAILABLE, {"X-Request-Id": "req-503"})
    with pytest.raises(lectern.ServiceUnavailableError) as raised:
        client_for(upstream, clock).pages.list()
    # base 0.5 s doubled per attempt, times "equal jitter" 0.5 + random/2 = 0.75
    assert clock.sleeps == [0.5 * 0.75, 1.0 * 0.75]
    assert len(upstream.requests) == 3
    assert (raised.value.status, raised.value.type, raised.value.request_id) == (503, "service_unavailable", "req-503")


def test_honours_retry_after_on_a_503(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(503, UNAVAILABLE, {"Retry-After": "5"})
    upstream.add(200, FORMS_PAGE)
    client_for(upstream, clock, base_delay=1.0).forms.list()
    assert clock.sleeps == [5 + 0.5 * 1.0]


def test_caps_the_exponential_back_off_at_max_delay(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    for _ in range(4):
        upstream.add(503, UNAVAILABLE)
    upstream.add(200, FORMS_PAGE)
    client_for(upstream, clock, max_retries=4, base_delay=2.0, max_delay=5.0).forms.list()
    assert clock.sleeps == [2.0 * 0.75, 4.0 * 0.75, 5.0 * 0.75, 5.0 * 0.75]


def test_jitter_stays_between_half_and_all_of_the_back_off(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(503, UNAVAILABLE)
    upstream.add(503, UNAVAILABLE)
    upstream.add(200, FORMS_PAGE)
    randoms = iter([0.0, 0.999])
    client = Lectern(base_url=upstream.base_url, api_key="k", sleep=clock.sleep, random=lambda: next(randoms))
    client.forms.list()
    assert clock.sleeps[0] == pytest.approx(0.25)
    assert clock.sleeps[1] == pytest.approx(0.999 * 1.0 * 0.5 + 0.5)


def test_does_not_retry_when_max_retries_is_zero(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(429, RATE_LIMITED, {"Retry-After": "1"})
    with pytest.raises(lectern.RateLimitError) as raised:
        client_for(upstream, clock, max_retries=0).forms.list()
    assert clock.sleeps == []
    assert raised.value.retry_after == 1
    assert "try again later" in raised.value.message


def test_raises_at_once_when_retry_after_exceeds_max_delay(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(429, RATE_LIMITED, {"Retry-After": "3600"})
    with pytest.raises(lectern.RateLimitError) as raised:
        client_for(upstream, clock).forms.list()
    assert clock.sleeps == []
    assert raised.value.retry_after == 3600
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    ("status", "body", "error_class", "error_type"),
    [
        (500, {"error": "internal_error", "message": "Internal server error"}, lectern.ServerError, "internal_error"),
        (400, {"error": "invalid_parameters", "message": "bad"}, lectern.InvalidRequestError, "invalid_parameters"),
        (401, {"error": "invalid_api_key", "message": "Invalid API key"}, lectern.AuthenticationError, "invalid_api_key"),
        (403, {"error": "insufficient_permissions", "message": "no"}, lectern.PermissionDeniedError, "insufficient_permissions"),
        (404, {"error": "resource_not_found", "message": "Form 'x' not found"}, lectern.NotFoundError, "resource_not_found"),
    ],
)
def test_never_retries_other_errors(
    upstream: ScriptedUpstream, clock: FakeClock, status: int, body: Any, error_class: Type[lectern.LecternError], error_type: str
) -> None:
    upstream.add(status, body)
    with pytest.raises(error_class) as raised:
        client_for(upstream, clock).forms.list()
    assert raised.value.type == error_type and raised.value.status == status
    assert clock.sleeps == [] and len(upstream.requests) == 1


def test_reports_phrase_style_errors_by_their_code(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(401, {"error": "API key inactive", "message": "API key inactive"})
    with pytest.raises(lectern.AuthenticationError) as raised:
        client_for(upstream, clock).forms.list()
    assert raised.value.type == "api_key_inactive"


def test_reports_a_proxys_error_page_as_an_unexpected_response(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(502, b"<html>Bad gateway</html>", {"Content-Type": "text/html", "X-Request-Id": "edge-1"})
    with pytest.raises(lectern.ServerError) as raised:
        client_for(upstream, clock).forms.list()
    assert (raised.value.status, raised.value.type, raised.value.request_id) == (502, "unexpected_response", "edge-1")


def test_reports_a_success_without_the_documented_shape(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(200, {"items": []})
    with pytest.raises(lectern.ServerError, match="documented shape"):
        client_for(upstream, clock).forms.list()


def test_never_follows_a_redirect_that_would_carry_the_key_elsewhere(
    upstream: ScriptedUpstream, clock: FakeClock
) -> None:
    upstream.add(302, b"", {"Location": "http://127.0.0.1:9/steal"})
    with pytest.raises(lectern.LecternError) as raised:
        client_for(upstream, clock).forms.list()
    assert raised.value.status == 302
    assert len(upstream.requests) == 1


def test_sends_the_key_booleans_as_true_and_false_and_canonical_names(
    upstream: ScriptedUpstream, clock: FakeClock
) -> None:
    upstream.add(200, FORMS_PAGE)
    upstream.add(200, {"data": [], "meta": {"total": 0, "page": 1, "pageSize": 5, "totalPages": 0}})
    client = client_for(upstream, clock)
    client.forms.list(page=2, page_size=5, active=True)
    client.pages.list(published=False)
    assert upstream.requests[0][0] == "/api/v1/forms?page=2&pageSize=5&active=true"
    assert upstream.requests[1][0] == "/api/v1/page-builder?published=false"
    headers = upstream.requests[0][1]
    assert headers["authorization"] == "Bearer lk_live_test"
    assert headers["user-agent"].startswith("lectern-python/")


def test_escapes_a_form_id_into_one_path_segment(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(404, {"error": "resource_not_found", "message": "Form 'a/b?c' not found"})
    with pytest.raises(lectern.NotFoundError):
        client_for(upstream, clock).forms.submissions("a/b?c")
    assert upstream.requests[0][0] == "/api/v1/forms/a%2Fb%3Fc/submissions"


def test_refuses_arguments_of_the_wrong_type_before_any_request(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    client = client_for(upstream, clock)
    with pytest.raises(TypeError):
        client.forms.list(active="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.forms.list(page=True)
    with pytest.raises(TypeError):
        client.pages.all(published=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        client.forms.all_submissions("")
    assert upstream.requests == []


def test_revalidates_a_remembered_page_and_reuses_it_on_304(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(200, FORMS_PAGE, {"ETag": '"v1"', "X-Request-Id": "one"})
    upstream.add(304, None, {"ETag": '"v1"', "X-Request-Id": "two"})
    client = client_for(upstream, clock)
    first = client.forms.list()
    second = client.forms.list()
    assert "if-none-match" not in upstream.requests[0][1]
    assert upstream.requests[1][1]["if-none-match"] == '"v1"'
    assert second == first
    assert client.last_response is not None
    assert (client.last_response.status, client.last_response.request_id) == (304, "two")


def test_a_reused_body_cannot_be_changed_through_a_previous_result(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    body = {
        "data": [{"id": "s1", "data": {"name": "Ada"}, "ipAddress": None, "userAgent": None, "referrer": None,
                  "submittedBy": None, "isRead": False, "isStarred": False, "notes": None,
                  "createdAt": "2024-01-05T10:00:00Z", "updatedAt": "2024-01-05T10:00:00Z"}],
        "meta": {"total": 1, "page": 1, "pageSize": 20, "totalPages": 1},
    }
    upstream.add(200, body, {"ETag": '"s"'})
    upstream.add(304, None)
    client = client_for(upstream, clock)
    client.forms.submissions("form_a").data[0].data["name"] = "changed"
    assert client.forms.submissions("form_a").data[0].data == {"name": "Ada"}


def test_forgets_the_least_recently_used_page_beyond_cache_size(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    for tag in ("a", "b", "c", "a2"):
        upstream.add(200, FORMS_PAGE, {"ETag": f'"{tag}"'})
    client = client_for(upstream, clock, cache_size=2)
    for page in (1, 2, 3, 1):
        client.forms.list(page=page)
    assert "if-none-match" not in upstream.requests[3][1]


def test_cache_size_zero_never_sends_if_none_match(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(200, FORMS_PAGE, {"ETag": '"a"'})
    upstream.add(200, FORMS_PAGE, {"ETag": '"a"'})
    client = client_for(upstream, clock, cache_size=0)
    client.forms.list()
    client.forms.list()
    assert "if-none-match" not in upstream.requests[1][1]


def test_exposes_the_rate_limit_state_and_none_without_headers(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(200, FORMS_PAGE, {"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "998", "X-RateLimit-Reset": "1700000000"})
    upstream.add(200, FORMS_PAGE)
    client = client_for(upstream, clock)
    assert client.last_response is None
    client.forms.list()
    assert client.rate_limit == lectern.RateLimit(limit=1000, remaining=998, reset=1700000000)
    client.forms.list(page=2)
    assert client.last_response is not None and client.last_response.rate_limit is None


def test_all_pages_lazily_and_stops_on_the_last_page(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    def page(number: int, ids: Any) -> Dict[str, Any]:
        return {
            "data": [{"id": i, "title": i, "description": None} for i in ids],
            "meta": {"total": 3, "page": number, "pageSize": 2, "totalPages": 2},
        }

    upstream.add(200, page(1, ["a", "b"]))
    upstream.add(200, page(2, ["c"]))
    forms = client_for(upstream, clock).forms.all(page_size=2)
    assert upstream.requests == []
    assert next(forms).id == "a"
    assert len(upstream.requests) == 1
    assert [form.id for form in forms] == ["b", "c"]
    assert [path for path, _ in upstream.requests] == ["/api/v1/forms?page=1&pageSize=2", "/api/v1/forms?page=2&pageSize=2"]


def test_raises_a_connection_error_when_nothing_listens(clock: FakeClock) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = Lectern(base_url=f"http://127.0.0.1:{port}", api_key="k", sleep=clock.sleep)
    with pytest.raises(lectern.APIConnectionError) as raised:
        client.forms.list()
    assert raised.value.status is None and raised.value.type == "connection_error"
    assert isinstance(raised.value, lectern.LecternError)


def test_raises_a_connection_error_on_a_timeout(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.hold.clear()
    upstream.add(200, FORMS_PAGE)
    client = client_for(upstream, clock, timeout=0.2)
    with pytest.raises(lectern.APIConnectionError):
        client.forms.list()


def test_refuses_a_client_without_base_url_or_key() -> None:
    with pytest.raises(ValueError):
        Lectern(base_url="", api_key="k")
    with pytest.raises(ValueError):
        Lectern(base_url="content.example.com", api_key="k")
    with pytest.raises(ValueError):
        Lectern(base_url="https://content.example.com", api_key="")


def test_parses_retry_after_as_seconds_or_an_http_date() -> None:
    assert parse_retry_after("7") == 7
    assert parse_retry_after(" 0 ") == 0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-3") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480) == 30
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 + 60) == 0


def test_str_of_an_error_names_status_type_and_request_id() -> None:
    error = lectern.NotFoundError("Form 'x' not found", type="resource_not_found", status=404, request_id="r-1")
    assert str(error) == "Form 'x' not found (404 resource_not_found, request id r-1)"


@pytest.fixture
def trickling() -> Iterator[MisbehavingServer]:
    """Sends its headers at once, then a byte of body every 0.2 s, for up to 8 s."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.end_headers()
        request.wfile.write(b'{"data": [], "meta": {"total": 0, "page": 1, "pageSize": 20, "totalPages": 0}}')
        request.wfile.flush()
        for _ in range(40):
            if server.stopping.wait(0.2):
                return
            request.wfile.write(b" ")
            request.wfile.flush()

    server = MisbehavingServer(handle)
    try:
        yield server
    finally:
        server.close()


def test_the_timeout_bounds_the_whole_attempt_while_the_body_trickles_in(
    trickling: MisbehavingServer, clock: FakeClock
) -> None:
    client = Lectern(base_url=trickling.base_url, api_key="k", sleep=clock.sleep, timeout=1.0)
    with pytest.raises(lectern.APIConnectionError, match="did not answer within 1 s"):
        client.forms.list()
    assert len(trickling.paths) == 1


def test_refuses_a_body_larger_than_max_response_bytes(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    upstream.add(200, {**FORMS_PAGE, "padding": " " * (2 * 1024 * 1024)}, {"X-Request-Id": "big"})
    client = client_for(upstream, clock, max_response_bytes=1024 * 1024)
    with pytest.raises(lectern.ServerError) as raised:
        client.forms.list()
    assert (raised.value.status, raised.value.type, raised.value.request_id) == (200, "unexpected_response", "big")
    assert "max_response_bytes (1048576 bytes)" in raised.value.message


def test_all_stops_at_the_first_pages_total_though_later_pages_announce_more(
    upstream: ScriptedUpstream, clock: FakeClock
) -> None:
    for number in range(1, 11):
        ids = [f"form_{number}_{n}" for n in range(2)]
        meta = {"total": 2 * number + 2, "page": number, "pageSize": 2, "totalPages": number + 1}
        upstream.add(200, {"data": [{"id": i, "title": i, "description": None} for i in ids], "meta": meta})
    seen = []
    for form in client_for(upstream, clock).forms.all(page_size=2):
        seen.append(form.id)
        if len(seen) > 50:
            break
    assert seen == ["form_1_0", "form_1_1", "form_2_0", "form_2_1"]
    assert len(upstream.requests) == 2


def test_refuses_options_out_of_range() -> None:
    with pytest.raises(ValueError):
        Lectern(base_url="https://content.example.com", api_key="k", max_response_bytes=0)
    with pytest.raises(ValueError):
        Lectern(base_url="https://content.example.com", api_key="k", timeout=0)
