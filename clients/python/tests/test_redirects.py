"""The redirect matcher beyond the shared cases, the loader (against the real test server and a
scripted one), and the WSGI and ASGI middleware's handling of what servers hand them."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Dict, List

import pytest
from conftest import FakeClock, LecternServer, ScriptedUpstream

import lectern
from lectern import Lectern, RedirectLoader, RedirectMatch, RedirectMatcher
from lectern import asgi as lectern_asgi
from lectern import wsgi as lectern_wsgi


def redirect(from_path: str, to_path: str, kind: str = "permanent", active: bool = True) -> Dict[str, Any]:
    return {"id": f"r{from_path}", "fromPath": from_path, "toPath": to_path, "type": kind, "isActive": active,
            "createdAt": "2024-01-05T10:00:00Z", "updatedAt": "2024-01-05T10:00:00Z"}


def test_the_first_of_two_redirects_for_one_path_wins() -> None:
    matcher = RedirectMatcher([redirect("/a", "/first"), redirect("/a", "/second", "temporary")])
    assert matcher.match("/a") == RedirectMatch(301, "/first")
    assert len(matcher) == 1


def test_an_inactive_duplicate_does_not_hide_the_active_one() -> None:
    matcher = RedirectMatcher([redirect("/a", "/off", active=False), redirect("/a", "/on")])
    assert matcher.match("/a") == RedirectMatch(301, "/on")


def test_a_loop_redirects_nowhere_and_says_so_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    matcher = RedirectMatcher([redirect("/a", "/b"), redirect("/b", "/a"), redirect("/self", "/self")])
    with caplog.at_level(logging.WARNING, logger="lectern"):
        assert matcher.match("/a") is None
        assert matcher.match("/b") is None
        assert matcher.match("/self") is None
        assert matcher.match("/a") is None
    assert "loop" in caplog.text


def test_a_long_chain_lands_in_one_hop_with_the_weakest_status() -> None:
    items = [redirect(f"/p{i}", f"/p{i + 1}", "temporary" if i == 500 else "permanent") for i in range(1000)]
    matcher = RedirectMatcher(items)
    assert matcher.match("/p0") == RedirectMatch(302, "/p1000")
    assert matcher.match("/p501?x") == RedirectMatch(301, "/p1000?x")


def test_match_path_takes_a_path_a_framework_already_decoded() -> None:
    matcher = RedirectMatcher([redirect("/über", "/neu-ü"), redirect("/100%", "/pct")])
    assert matcher.match_path("/über", "a=1") == RedirectMatch(301, "/neu-%C3%BC?a=1")
    assert matcher.match_path("/100%") == RedirectMatch(301, "/pct")
    assert matcher.match_path("/%C3%BCber") is None


def test_a_destination_off_the_site_is_never_applied(caplog: pytest.LogCaptureFixture) -> None:
    matcher = RedirectMatcher([redirect("/a", "//evil.example/x"), redirect("/b", "https://evil.example"), redirect("/c", "/a")])
    with caplog.at_level(logging.WARNING, logger="lectern"):
        assert [matcher.match(path) for path in ("/a", "/b", "/c")] == [None, None, None]
    assert "off the site" in caplog.text


def test_a_lone_surrogate_in_a_destination_is_sent_as_u_fffd() -> None:
    assert RedirectMatcher([redirect("/a", "/x\ud800y")]).match("/a") == RedirectMatch(301, "/x%EF%BF%BDy")


def test_a_target_that_cannot_be_utf8_matches_nothing() -> None:
    assert RedirectMatcher([redirect("/a", "/b")]).match("/\ud800") is None


def test_refuses_redirects_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="toPath"):
        RedirectMatcher([{"fromPath": "/a", "type": "permanent"}])
    with pytest.raises(ValueError, match="type"):
        RedirectMatcher([{"fromPath": "/a", "toPath": "/b", "type": "moved"}])
    with pytest.raises(TypeError):
        RedirectMatcher(["/a"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        RedirectMatcher([]).match(b"/a")  # type: ignore[arg-type]


def wsgi_call(middleware: Any, environ: Dict[str, Any]) -> Any:
    answer: Dict[str, Any] = {}

    def start_response(status: str, headers: List[Any]) -> None:
        answer["status"], answer["headers"] = status, dict(headers)

    answer["body"] = b"".join(middleware(environ, start_response))
    return answer


def downstream_wsgi(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"app"]


MATCHER = RedirectMatcher([redirect("/old", "/new"), redirect("/über", "/neu-ü", "temporary")])


def test_wsgi_reads_an_absolute_form_raw_uri() -> None:
    environ = {"REQUEST_METHOD": "GET", "RAW_URI": "http://example.com/old?x=1", "PATH_INFO": "/ignored"}
    answer = wsgi_call(lectern_wsgi.RedirectMiddleware(downstream_wsgi, MATCHER), environ)
    assert (answer["status"], answer["headers"]["Location"]) == ("301 Moved Permanently", "/new?x=1")


def test_wsgi_reads_script_name_and_a_latin1_path_info_as_utf8() -> None:
    environ = {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/über".encode("utf-8").decode("latin-1"),
        "QUERY_STRING": "q=%C3%BC",
    }
    answer = wsgi_call(lectern_wsgi.RedirectMiddleware(downstream_wsgi, MATCHER), environ)
    assert (answer["status"], answer["headers"]["Location"]) == ("302 Found", "/neu-%C3%BC?q=%C3%BC")
    mounted = {"REQUEST_METHOD": "GET", "SCRIPT_NAME": "/ol", "PATH_INFO": "d", "QUERY_STRING": ""}
    assert wsgi_call(lectern_wsgi.RedirectMiddleware(downstream_wsgi, MATCHER), mounted)["headers"]["Location"] == "/new"


def test_wsgi_passes_a_path_info_that_is_not_utf8_to_the_app() -> None:
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/\u00fcber", "QUERY_STRING": ""}
    assert wsgi_call(lectern_wsgi.RedirectMiddleware(downstream_wsgi, MATCHER), environ)["body"] == b"app"


def test_wsgi_redirects_only_the_methods_it_is_given() -> None:
    middleware = lectern_wsgi.RedirectMiddleware(downstream_wsgi, MATCHER, methods=["get", "post"])
    assert wsgi_call(middleware, {"REQUEST_METHOD": "POST", "REQUEST_URI": "/old"})["status"] == "301 Moved Permanently"
    assert wsgi_call(middleware, {"REQUEST_METHOD": "HEAD", "REQUEST_URI": "/old"})["body"] == b"app"


async def downstream_asgi(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": scope["type"].encode()})


def asgi_call(middleware: Any, scope: Dict[str, Any]) -> List[Dict[str, Any]]:
    sent: List[Dict[str, Any]] = []

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    return sent


def test_asgi_passes_lifespan_and_websocket_scopes_to_the_app() -> None:
    middleware = lectern_asgi.RedirectMiddleware(downstream_asgi, MATCHER)
    for kind in ("lifespan", "websocket"):
        assert asgi_call(middleware, {"type": kind, "path": "/old", "raw_path": b"/old"})[1]["body"] == kind.encode()


def test_asgi_carries_query_bytes_over_byte_for_byte() -> None:
    scope = {"type": "http", "method": "GET", "path": "/old", "raw_path": b"/old", "query_string": b"a=\xff&b=%FF+c"}
    start = asgi_call(lectern_asgi.RedirectMiddleware(downstream_asgi, MATCHER), scope)[0]
    assert (start["status"], dict(start["headers"])[b"location"]) == (301, b"/new?a=\xff&b=%FF+c")


def test_asgi_uses_the_decoded_path_when_raw_path_is_missing_and_strips_a_query_left_on_raw_path() -> None:
    middleware = lectern_asgi.RedirectMiddleware(downstream_asgi, MATCHER)
    no_raw = {"type": "http", "method": "GET", "path": "/über", "query_string": b""}
    assert dict(asgi_call(middleware, no_raw)[0]["headers"])[b"location"] == b"/neu-%C3%BC"
    with_query = {"type": "http", "method": "GET", "path": "/old", "raw_path": b"/old?x=1", "query_string": b"x=1"}
    assert dict(asgi_call(middleware, with_query)[0]["headers"])[b"location"] == b"/new?x=1"


def test_asgi_redirects_every_method_unless_told_which() -> None:
    scope = {"type": "http", "method": "POST", "path": "/old", "raw_path": b"/old", "query_string": b""}
    assert asgi_call(lectern_asgi.RedirectMiddleware(downstream_asgi, MATCHER), scope)[0]["status"] == 301
    only_get = lectern_asgi.RedirectMiddleware(downstream_asgi, MATCHER, methods=("GET", "HEAD"))
    assert asgi_call(only_get, scope)[0]["status"] == 200


@pytest.fixture
def viewer_client(lectern_server: LecternServer) -> Lectern:
    return Lectern(base_url=lectern_server.base_url, api_key=lectern_server.keys["viewer"])


def test_loader_applies_the_apis_active_redirects(viewer_client: Lectern) -> None:
    loader = RedirectLoader(viewer_client)
    assert loader.match("/chain-a?x=1") == RedirectMatch(301, "/chain-c?x=1")
    assert loader.match("/%C3%BCber") == RedirectMatch(302, "/neu-%C3%BC")
    assert loader.match("/promo") == RedirectMatch(302, "/pricing")
    assert loader.match("/retired") is None
    assert len(loader.matcher) == 5


def test_loader_refreshes_with_a_304_and_keeps_its_matcher(viewer_client: Lectern, clock: FakeClock) -> None:
    loader = RedirectLoader(viewer_client, refresh_interval=60, clock=clock)
    first = loader.matcher
    seen = viewer_client.last_response
    clock.now += 59
    assert loader.matcher is first and viewer_client.last_response is seen
    clock.now += 1
    assert loader.due
    assert loader.matcher is first
    assert viewer_client.last_response is not None and viewer_client.last_response.status == 304
    assert loader.refresh() is False


def test_loader_rebuilds_when_the_redirects_changed(upstream: ScriptedUpstream, clock: FakeClock) -> None:
    def listing(*items: Dict[str, Any]) -> Dict[str, Any]:
        return {"data": list(items), "meta": {"total": len(items), "page": 1, "pageSize": 100, "totalPages": 1}}

    upstream.add(200, listing(redirect("/a", "/one")), {"ETag": '"1"'})
    upstream.add(200, listing(redirect("/a", "/two", "temporary")), {"ETag": '"2"'})
    upstream.add(304, None)
    loader = RedirectLoader(Lectern(base_url=upstream.base_url, api_key="k", sleep=clock.sleep), clock=clock)
    assert loader.match("/a") == RedirectMatch(301, "/one")
    assert loader.refresh() is True
    assert loader.match("/a") == RedirectMatch(302, "/two")
    assert loader.refresh() is False
    assert [path for path, _ in upstream.requests] == ["/api/v1/page-builder/redirects?page=1&pageSize=100&active=true"] * 3
    assert upstream.requests[2][1]["if-none-match"] == '"2"'


def test_loader_keeps_serving_when_the_api_fails(
    lectern_server: LecternServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    client = Lectern(base_url=lectern_server.base_url, api_key=lectern_server.keys["revoked"])
    loader = RedirectLoader(client, clock=clock)
    with caplog.at_level(logging.ERROR, logger="lectern"):
        assert loader.match("/chain-a") is None
    assert "could not refresh" in caplog.text
    with pytest.raises(lectern.AuthenticationError):
        loader.refresh()


def test_loader_holds_at_most_max_redirects_and_keeps_the_ones_it_had(
    upstream: ScriptedUpstream, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    def page(number: int, total: int) -> Dict[str, Any]:
        first = (number - 1) * 100
        items = [redirect(f"/from-{n}", f"/to-{n}") for n in range(first, min(first + 100, total))]
        return {"data": items, "meta": {"total": total, "page": number, "pageSize": 100, "totalPages": -(-total // 100)}}

    upstream.add(200, page(1, 200))
    upstream.add(200, page(2, 200))
    for number in (1, 2, 3):
        upstream.add(200, page(number, 300))
    loader = RedirectLoader(Lectern(base_url=upstream.base_url, api_key="k", sleep=clock.sleep), max_redirects=250, clock=clock)
    assert loader.match("/from-199") == RedirectMatch(301, "/to-199")
    with pytest.raises(lectern.RedirectLimitError) as raised:
        loader.refresh()
    assert (raised.value.type, raised.value.status, raised.value.max_redirects) == ("too_many_redirects", None, 250)
    assert "more than 250 active redirects" in raised.value.message
    assert len(upstream.requests) == 5
    assert loader.match("/from-199") == RedirectMatch(301, "/to-199")
    with pytest.raises(ValueError):
        RedirectLoader(Lectern(base_url=upstream.base_url, api_key="k"), max_redirects=0)


def test_wsgi_and_asgi_middleware_apply_a_loaders_redirects(viewer_client: Lectern) -> None:
    loader = RedirectLoader(viewer_client)
    answer = wsgi_call(lectern_wsgi.RedirectMiddleware(downstream_wsgi, loader), {"REQUEST_METHOD": "GET", "REQUEST_URI": "/promo?x=1"})
    assert (answer["status"], answer["headers"]["Location"]) == ("302 Found", "/pricing?x=1")
    scope = {"type": "http", "method": "GET", "path": "/blog-old", "raw_path": b"/blog-old", "query_string": b""}
    start = asgi_call(lectern_asgi.RedirectMiddleware(downstream_asgi, RedirectLoader(viewer_client)), scope)[0]
    assert (start["status"], dict(start["headers"])[b"location"]) == (301, b"/blog")
