"""Shared fixtures: the contract's test server, the spec files, and a scripted HTTP upstream."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
SPEC = REPO_ROOT / "spec"


def load_spec(name: str) -> Dict[str, Any]:
    """A file of the shared contract under ``spec/``."""
    with open(SPEC / name, encoding="utf-8") as file:
        data: Dict[str, Any] = json.load(file)
    return data


class LecternServer:
    """A running ``scripts/client-test-server.mjs``: ``base_url`` and the named ``keys``."""

    def __init__(self, base_url: str, keys: Dict[str, str]) -> None:
        self.base_url = base_url
        self.keys = keys


def _read_line(process: "subprocess.Popen[bytes]", timeout: float) -> bytes:
    # readline() alone could wait forever on a launcher that hangs; a thread bounds it.
    result: List[bytes] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return result[0] if result else b""


@pytest.fixture(scope="session")
def lectern_server() -> Iterator[LecternServer]:
    """A real Lectern server with the contract's fixture imported, for the whole test session."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is needed to run scripts/client-test-server.mjs")
        pytest.skip("node is not installed: the tests against a real server are skipped")
    if not (REPO_ROOT / "dist" / "server.js").exists():
        pytest.fail("dist/ is missing: run `npm run build` at the repository root first")
    process = subprocess.Popen(
        [node, "scripts/client-test-server.mjs"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        line = _read_line(process, timeout=60)
        if not line:
            process.kill()
            pytest.fail("scripts/client-test-server.mjs printed nothing (see its stderr above)")
        info = json.loads(line)
        yield LecternServer(info["baseUrl"], info["keys"])
    finally:
        # Closing stdin is the launcher's signal to stop and delete its temporary database.
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


Response = Tuple[int, Dict[str, str], bytes]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (the timeout test) leaves a handler writing to a closed socket.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ScriptedUpstream:
    """A real HTTP server on 127.0.0.1 that answers each request with the next scripted response
    and records what it received: for the client's behaviour on answers the real server only gives
    under faults (503, a proxy's error page, an exhausted quota)."""

    def __init__(self) -> None:
        self.responses: List[Response] = []
        self.requests: List[Tuple[str, Dict[str, str]]] = []
        self.hold = threading.Event()
        self.hold.set()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                upstream.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                upstream.hold.wait(10)
                status, headers, body = (
                    upstream.responses.pop(0) if upstream.responses else (500, {}, b"no scripted response")
                )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def add(self, status: int, body: Any = None, headers: Optional[Dict[str, str]] = None) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
        base = {"Content-Type": "application/json; charset=utf-8"} if not isinstance(body, bytes) else {}
        self.responses.append((status, {**base, **(headers or {})}, raw))

    def close(self) -> None:
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()


class MisbehavingServer:
    """A real HTTP server on 127.0.0.1 whose ``GET`` handler is ``handle(request_handler)``: for
    answers no well-behaved server gives (a body that trickles in, one that never stops)."""

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.paths: List[str] = []
        self.stopping = threading.Event()
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                server_self.paths.append(self.path)
                handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    server = ScriptedUpstream()
    try:
        yield server
    finally:
        server.close()


class FakeClock:
    """``sleep`` that records the waits and advances a clock instead of waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: List[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
