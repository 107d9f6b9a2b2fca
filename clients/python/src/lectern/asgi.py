"""ASGI middleware that applies Lectern redirects before the application sees a request.

::

    from lectern import Lectern, RedirectLoader
    from lectern.asgi import RedirectMiddleware

    loader = RedirectLoader(Lectern(base_url=..., api_key=...), refresh_interval=60)
    app = RedirectMiddleware(app, loader)
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable, MutableMapping, Optional

from ._redirects import RedirectLoader, RedirectMatch, RedirectMatcher, RedirectSource, current_matcher

__all__ = ["RedirectMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApplication = Callable[[Scope, Receive, Send], Awaitable[None]]


def match_scope(matcher: RedirectMatcher, scope: Scope) -> Optional[RedirectMatch]:
    """Where the HTTP request ``scope`` describes goes, or ``None``.

    ``raw_path`` (the path bytes as received) is used when the server provides it; otherwise
    ``path``, which the server has already percent-decoded. The query is ``query_string``'s bytes.
    """
    raw_path = scope.get("raw_path")
    query = scope.get("query_string") or b""
    if isinstance(raw_path, (bytes, bytearray)) and raw_path:
        raw = bytes(raw_path)
        if b"?" in raw:
            # a few servers leave the query on raw_path: the path ends where it begins
            raw = raw.split(b"?", 1)[0]
        resolved = matcher._resolve_encoded(raw)
    else:
        resolved = matcher._resolve(str(scope.get("path", "")))
    if resolved is None:
        return None
    status, location = resolved
    # latin-1 keeps every query byte as one character, so the header carries them unchanged
    return RedirectMatch(status, f"{location}?{bytes(query).decode('latin-1')}" if query else location)


class RedirectMiddleware:
    """Answers an HTTP request that a Lectern redirect matches with its ``301``/``302`` and
    ``Location``; passes every other request (and every websocket and lifespan event) to ``app``.

    ``redirects`` is a :class:`lectern.RedirectMatcher` or a :class:`lectern.RedirectLoader`; a
    loader's refreshes (blocking HTTP) run in the event loop's default executor under asyncio, so
    they never block the loop. Every method is redirected unless ``methods`` lists some (e.g.
    ``("GET", "HEAD")``).
    """

    def __init__(
        self,
        app: ASGIApplication,
        redirects: RedirectSource,
        *,
        methods: Optional[Iterable[str]] = None,
    ) -> None:
        self.app = app
        self.redirects = redirects
        self.methods = None if methods is None else frozenset(method.upper() for method in methods)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http" and (
            self.methods is None or str(scope.get("method", "GET")).upper() in self.methods
        ):
            found = match_scope(await self._matcher(), scope)
            if found is not None:
                await send(
                    {
                        "type": "http.response.start",
                        "status": found.status,
                        "headers": [
                            (b"location", found.location.encode("latin-1")),
                            (b"content-length", b"0"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)

    async def _matcher(self) -> RedirectMatcher:
        source = self.redirects
        if isinstance(source, RedirectLoader) and source.due:
            loader = source
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # another event loop (trio): refresh in place
                return loader.matcher
            return await loop.run_in_executor(None, lambda: loader.matcher)
        return current_matcher(source)


