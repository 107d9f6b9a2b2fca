"""Authenticated ``GET`` requests to the API: retries, conditional requests, rate-limit state."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from typing import Any, Callable, List, Mapping, Optional, Tuple

from ._errors import (
    UNEXPECTED_RESPONSE,
    APIConnectionError,
    LecternError,
    ServerError,
    error_from_response,
)
from ._models import LastResponse, RateLimit

#: Only these are retried: the server asked the client to come back later.
RETRIED_STATUSES = frozenset({429, 503})

#: The most bytes a response body may hold unless ``max_response_bytes`` says otherwise: the body
#: is held in memory, and a server (or what stands in front of it) may send any amount.
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

_CHUNK = 64 * 1024


def retry_delay(
    error: LecternError,
    attempt: int,
    *,
    max_retries: int,
    base_delay: float,
    max_delay: float,
    random: Callable[[], float],
) -> Optional[float]:
    """Seconds to wait before retrying after ``error`` (``attempt`` counts from 0), or ``None`` to give up.

    Gives up when the status is not 429/503, the retries are used up, or the wait would exceed
    ``max_delay`` (an exhausted hourly quota is not slept through: the error is raised at once with
    its ``retry_after``). A ``Retry-After`` is honoured, never shortened, with up to ``base_delay``
    of jitter on top so that clients do not all come back at once; without one the wait doubles from
    ``base_delay`` on each attempt with "equal jitter" (between half and all of it).
    """
    if attempt >= max_retries or error.status not in RETRIED_STATUSES:
        return None
    if error.retry_after is not None:
        delay = error.retry_after + random() * base_delay
    else:
        delay = min(max_delay, base_delay * 2**attempt) * (0.5 + random() / 2)
    return delay if delay <= max_delay else None


def _read_rate_limit(headers: Mapping[str, str]) -> Optional[RateLimit]:
    try:
        return RateLimit(
            limit=int(headers["x-ratelimit-limit"]),
            remaining=int(headers["x-ratelimit-remaining"]),
            reset=int(headers["x-ratelimit-reset"]),
        )
    except (KeyError, ValueError):
        return None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one would send the API key wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Attempt:
    """The connections of one attempt, so that a watchdog can cut them when its time is up.

    urllib's ``timeout`` bounds each socket operation, not the attempt: a server sending a byte
    now and then would hold it for ever. Shutting the socket down wakes any read blocked on it.
    """

    def __init__(self) -> None:
        self.expired = False
        self._connections: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def track(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._connections.append(connection)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for connection in self._connections:
                sock = connection.sock
                if sock is not None:
                    try:
                        # The plain socket's shutdown, also under TLS: it only has to wake the reader.
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)
                    except OSError:
                        pass


class _TrackedConnections:
    """Mixed into urllib's HTTP(S) handlers: every connection they open is tracked by the attempt."""

    _attempt: _Attempt

    def do_open(self, http_class: Any, req: Any, **http_conn_args: Any) -> Any:
        attempt = self._attempt

        def connection(host: str, **kwargs: Any) -> http.client.HTTPConnection:
            made: http.client.HTTPConnection = http_class(host, **kwargs)
            attempt.track(made)
            return made

        return super().do_open(connection, req, **http_conn_args)  # type: ignore[misc]


class _TrackedHTTPHandler(_TrackedConnections, urllib.request.HTTPHandler):
    def __init__(self, attempt: _Attempt) -> None:
        super().__init__()
        self._attempt = attempt


class _TrackedHTTPSHandler(_TrackedConnections, urllib.request.HTTPSHandler):
    def __init__(self, attempt: _Attempt) -> None:
        super().__init__()
        self._attempt = attempt


class _ETagCache:
    """The ``ETag`` and raw body of the most recently used URLs, least recently used evicted first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str, Tuple[str, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, url: str) -> Optional[Tuple[str, bytes]]:
        with self._lock:
            entry = self._entries.get(url)
            if entry is not None:
                self._entries.move_to_end(url)
            return entry

    def put(self, url: str, etag: str, body: bytes) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._entries[url] = (etag, body)
            self._entries.move_to_end(url)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class Transport:
    """Sends the client's requests. Not part of the public API."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        timeout: float,
        max_response_bytes: int,
        max_retries: int,
        base_delay: float,
        max_delay: float,
        cache_size: int,
        user_agent: str,
        sleep: Callable[[float], None],
        random: Callable[[], float],
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.user_agent = user_agent
        self.sleep = sleep
        self.random = random
        self.cache = _ETagCache(cache_size)
        self.last_response: Optional[LastResponse] = None

    def url(self, path: str, query: Mapping[str, object]) -> str:
        """The full URL of an API path with the query parameters that are set; booleans as ``true``/``false``."""
        params = []
        for name, value in query.items():
            if value is None:
                continue
            params.append((name, ("true" if value else "false") if isinstance(value, bool) else str(value)))
        text = urllib.parse.urlencode(params)
        return f"{self.base_url}/api/v1{path}" + (f"?{text}" if text else "")

    def get(self, path: str, query: Mapping[str, object]) -> Tuple[Any, int]:
        """The parsed JSON body of a successful ``GET`` and its status (200, or 304 with the remembered body)."""
        url = self.url(path, query)
        attempt = 0
        while True:
            cached = self.cache.get(url)
            headers = {
                "Authorization": f"Bearer {self._api_key}",
                "Accept": "application/json",
                "User-Agent": self.user_agent,
            }
            if cached is not None:
                headers["If-None-Match"] = cached[0]
            status, response_headers, body = self._send(url, headers)
            rate_limit = _read_rate_limit(response_headers)
            request_id = response_headers.get("x-request-id")
            self.last_response = LastResponse(status=status, request_id=request_id, rate_limit=rate_limit)
            if status == 200:
                etag = response_headers.get("etag")
                parsed = self._parse(body, status, request_id)
                if etag:
                    self.cache.put(url, etag, body)
                return parsed, status
            if status == 304 and cached is not None:
                self.cache.put(url, cached[0], cached[1])
                return self._parse(cached[1], status, request_id), status
            error = error_from_response(status, body, request_id, response_headers.get("retry-after"))
            delay = retry_delay(
                error,
                attempt,
                max_retries=self.max_retries,
                base_delay=self.base_delay,
                max_delay=self.max_delay,
                random=self.random,
            )
            if delay is None:
                raise error
            self.sleep(delay)
            attempt += 1

    def _send(self, url: str, headers: Mapping[str, str]) -> Tuple[int, Mapping[str, str], bytes]:
        """One attempt, response body included, within ``timeout`` seconds."""
        request = urllib.request.Request(url, headers=dict(headers), method="GET")
        attempt = _Attempt()
        opener = urllib.request.build_opener(_NoRedirects(), _TrackedHTTPHandler(attempt), _TrackedHTTPSHandler(attempt))
        watchdog = threading.Timer(self.timeout, attempt.expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            try:
                with opener.open(request, timeout=self.timeout) as response:
                    status, response_headers = response.status, _lower(response.headers)
                    body = self._read(response, attempt, status, response_headers)
            except urllib.error.HTTPError as error:
                # urllib raises every non-2xx status; for the API they are answers, not failures.
                status, response_headers = error.code, _lower(error.headers)
                try:
                    body = self._read(error, attempt, status, response_headers)
                except (OSError, http.client.HTTPException):
                    body = b""
                finally:
                    error.close()
            if attempt.expired:
                raise self._timed_out()
            return status, response_headers, body
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as error:
            if attempt.expired:
                raise self._timed_out() from error
            reason = getattr(error, "reason", None) or error
            raise APIConnectionError(f"Could not get a response from Lectern at {self.base_url}: {reason}") from error
        finally:
            watchdog.cancel()

    def _timed_out(self) -> APIConnectionError:
        return APIConnectionError(f"Lectern at {self.base_url} did not answer within {self.timeout:g} s")

    def _read(self, response: Any, attempt: _Attempt, status: int, headers: Mapping[str, str]) -> bytes:
        """The body, a chunk at a time, refused past ``max_response_bytes``."""
        chunks: List[bytes] = []
        size = 0
        while not attempt.expired:
            chunk: bytes = response.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ServerError(
                    f"The response from Lectern is larger than max_response_bytes ({self.max_response_bytes} bytes)",
                    type=UNEXPECTED_RESPONSE,
                    status=status,
                    request_id=headers.get("x-request-id"),
                )
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _parse(body: bytes, status: int, request_id: Optional[str]) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ServerError(
                "The response from Lectern is not JSON",
                type=UNEXPECTED_RESPONSE,
                status=status,
                request_id=request_id,
            ) from None


def _lower(headers: Any) -> Mapping[str, str]:
    """Response headers by lower-case name (the last value of a repeated header)."""
    if headers is None:
        return {}
    return {str(name).lower(): str(value) for name, value in headers.items()}
