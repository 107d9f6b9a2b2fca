"""Every case of ``spec/redirect-cases.json``: through the matcher, the WSGI middleware over real
HTTP, and the ASGI middleware."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from conftest import load_spec

from lectern import Redirect, RedirectMatcher
from lectern import asgi as lectern_asgi
from lectern import wsgi as lectern_wsgi

SPEC = load_spec("redirect-cases.json")
CASES: List[Dict[str, Any]] = [case for case in SPEC["cases"] if "python" not in case.get("skip", {})]
IDS = [case["name"] for case in CASES]

# Without REQUEST_URI/RAW_URI, a WSGI application only sees PATH_INFO, which the server has already
# percent-decoded, leniently: these cases depend on the bytes as received, which are gone by then.
PATH_INFO_CANNOT = {
    "a bare percent sign is an invalid encoding and matches nothing": "wsgiref leaves a stray % in PATH_INFO",
    "a fragment is ignored": "a raw # stays in PATH_INFO, where it cannot be told from %23",
}


def expected(case: Dict[str, Any]) -> Optional[Tuple[int, str]]:
    return None if case["expect"] is None else (case["expect"]["status"], case["expect"]["location"])


@pytest.fixture(scope="module")
def matcher() -> RedirectMatcher:
    return RedirectMatcher(SPEC["redirects"])


def test_the_cases_skip_nothing_for_python() -> None:
    assert len(CASES) == len(SPEC["cases"])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matcher_from_dicts(case: Dict[str, Any], matcher: RedirectMatcher) -> None:
    found = matcher.match(case["target"])
    assert (None if found is None else (found.status, found.location)) == expected(case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matcher_from_client_objects(case: Dict[str, Any]) -> None:
    found = RedirectMatcher([Redirect.from_dict(item) for item in SPEC["redirects"]]).match(case["target"])
    assert (None if found is None else (found.status, found.location)) == expected(case)


def application(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"app"]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class RequestURIHandler(QuietHandler):
    """wsgiref with the raw request target in ``REQUEST_URI``, as uWSGI and mod_wsgi provide it."""

    def get_environ(self) -> Dict[str, Any]:
        environ = super().get_environ()
        environ["REQUEST_URI"] = self.path
        return environ


def serve(handler: type) -> Iterator[str]:
    server: WSGIServer = make_server(
        "127.0.0.1", 0, lectern_wsgi.RedirectMiddleware(application, RedirectMatcher(SPEC["redirects"])),
        handler_class=handler,
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def request_uri_server() -> Iterator[str]:
    yield from serve(RequestURIHandler)


@pytest.fixture(scope="module")
def path_info_server() -> Iterator[str]:
    yield from serve(QuietHandler)


def http_get(address: str, target: str, method: str = "GET") -> Tuple[int, Optional[str], bytes]:
    """The status, Location and body for a request line carrying ``target``'s UTF-8 bytes unchanged
    (``http.client`` would refuse raw non-ASCII or re-encode it)."""
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            f"{method} ".encode() + target.encode("utf-8") + b" HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
        )
        response = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    location = next((line.split(":", 1)[1].strip() for line in lines[1:] if line.lower().startswith("location:")), None)
    return status, location, body


def assert_http_answer(answer: Tuple[int, Optional[str], bytes], case: Dict[str, Any]) -> None:
    status, location, body = answer
    if case["expect"] is None:
        assert (status, location, body) == (200, None, b"app")
    else:
        assert (status, location, body) == (case["expect"]["status"], case["expect"]["location"], b"")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_wsgi_middleware_over_http_with_request_uri(case: Dict[str, Any], request_uri_server: str) -> None:
    assert_http_answer(http_get(request_uri_server, case["target"]), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_wsgi_middleware_over_http_with_path_info_only(case: Dict[str, Any], path_info_server: str) -> None:
    if case["name"] in PATH_INFO_CANNOT:
        pytest.skip(PATH_INFO_CANNOT[case["name"]])
    assert_http_answer(http_get(path_info_server, case["target"]), case)


def test_wsgi_middleware_redirects_every_method_by_default(request_uri_server: str) -> None:
    assert http_get(request_uri_server, "/old?a=1", method="HEAD")[:2] == (301, "/new?a=1")
    assert http_get(request_uri_server, "/old", method="POST")[:2] == (301, "/new")


def asgi_scope(target: str, method: str = "GET") -> Dict[str, Any]:
    """The scope an ASGI server builds for ``target``: the fragment never reaches it."""
    path, _, query = target.split("#", 1)[0].partition("?")
    raw_path = path.encode("utf-8")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": raw_path.decode("utf-8"),
        "raw_path": raw_path,
        "query_string": query.encode("utf-8"),
        "root_path": "",
        "headers": [(b"host", b"example.com")],
    }


async def downstream(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"app"})


def call_asgi(middleware: Any, scope: Dict[str, Any]) -> List[Dict[str, Any]]:
    sent: List[Dict[str, Any]] = []

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    return sent


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_asgi_middleware(case: Dict[str, Any], matcher: RedirectMatcher) -> None:
    sent = call_asgi(lectern_asgi.RedirectMiddleware(downstream, matcher), asgi_scope(case["target"]))
    start, body = sent
    if case["expect"] is None:
        assert (start["status"], body["body"]) == (200, b"app")
    else:
        headers = dict(start["headers"])
        assert (start["status"], headers[b"location"].decode("latin-1"), body["body"]) == (
            case["expect"]["status"],
            case["expect"]["location"],
            b"",
        )
