"""WSGI middleware that applies Lectern redirects before the application sees a request.

::

    from lectern import Lectern, RedirectLoader
    from lectern.wsgi import RedirectMiddleware

    loader = RedirectLoader(Lectern(base_url=..., api_key=...), refresh_interval=60)
    application = RedirectMiddleware(application, loader)
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ._redirects import RedirectMatch, RedirectMatcher, RedirectSource, current_matcher

__all__ = ["RedirectMiddleware"]

StartResponse = Callable[..., Any]
WSGIApplication = Callable[[Dict[str, Any], StartResponse], Iterable[bytes]]

_REASONS = {301: "Moved Permanently", 302: "Found"}


def _split_request_uri(uri: str) -> Tuple[bytes, Optional[str]]:
    """The raw path bytes and raw query (a WSGI native string) of a ``REQUEST_URI``/``RAW_URI``."""
    uri = uri.split("#", 1)[0]
    if not uri.startswith("/") and "://" in uri:
        # absolute-form (a request through a proxy): keep what follows the authority
        rest = uri.split("://", 1)[1]
        cut = min([len(rest)] + [i for i in (rest.find("/"), rest.find("?")) if i >= 0])
        uri = rest[cut:] if rest[cut:].startswith("/") else "/" + rest[cut:]
    path, has_query, query = uri.partition("?")
    try:
        raw = path.encode("latin-1")  # WSGI strings carry the request's bytes as latin-1
    except UnicodeEncodeError:
        raw = path.encode("utf-8")
    return raw, (query if has_query else None)


def match_environ(matcher: RedirectMatcher, environ: Dict[str, Any]) -> Optional[RedirectMatch]:
    """Where the request ``environ`` describes goes, or ``None``.

    ``REQUEST_URI`` (uWSGI, mod_wsgi) or ``RAW_URI`` (Gunicorn) hold the target as received and are
    used when present. Otherwise ``SCRIPT_NAME + PATH_INFO`` is used: the server has already
    percent-decoded it once, and PEP 3333 hands it over as latin-1, so it is turned back into its
    bytes and read as UTF-8 (not decoded a second time); ``QUERY_STRING`` is the query as received.
    """
    uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if isinstance(uri, str) and uri:
        raw, query = _split_request_uri(uri)
        return matcher._finish(matcher._resolve_encoded(raw), query)
    path = str(environ.get("SCRIPT_NAME", "")) + str(environ.get("PATH_INFO", ""))
    try:
        decoded = path.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
    query = environ.get("QUERY_STRING")
    # a raw "#" is never part of a query (an encoded one is %23): what follows is a fragment
    query = query.split("#", 1)[0] if isinstance(query, str) else None
    return matcher._finish(matcher._resolve(decoded), query)


class RedirectMiddleware:
    """Answers a request that a Lectern redirect matches with its ``301``/``302`` and ``Location``;
    passes every other request to ``app`` untouched.

    ``redirects`` is a :class:`lectern.RedirectMatcher` (a fixed list) or a
    :class:`lectern.RedirectLoader` (kept fresh from the API). Every method is redirected, as the
    server's exported web-server configurations do; ``methods=("GET", "HEAD")`` limits it to those
    (a browser turns a redirected ``POST`` into a ``GET`` and loses its body).
    """

    def __init__(
        self,
        app: WSGIApplication,
        redirects: RedirectSource,
        *,
        methods: Optional[Iterable[str]] = None,
    ) -> None:
        self.app = app
        self.redirects = redirects
        self.methods = None if methods is None else frozenset(method.upper() for method in methods)

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.methods is None or str(environ.get("REQUEST_METHOD", "GET")).upper() in self.methods:
            found = match_environ(current_matcher(self.redirects), environ)
            if found is not None:
                headers: List[Tuple[str, str]] = [
                    ("Location", found.location),
                    ("Content-Length", "0"),
                ]
                start_response(f"{found.status} {_REASONS[found.status]}", headers)
                return [b""]
        return self.app(environ, start_response)
