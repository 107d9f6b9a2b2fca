"""Applying redirects as Lectern does, without network, and keeping them fresh from the API."""

from __future__ import annotations

import logging
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ._models import Redirect

if TYPE_CHECKING:
    from ._client import Lectern

logger = logging.getLogger("lectern")

#: The most redirects a :class:`RedirectLoader` holds unless ``max_redirects`` says otherwise.
DEFAULT_MAX_REDIRECTS = 100_000

#: A redirect as :class:`RedirectMatcher` takes it: the client's object, or the API's JSON object.
RedirectItem = Union[Redirect, Mapping[str, Any]]

_STATUS_BY_TYPE = {"permanent": 301, "temporary": 302}
_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
# Only unreserved characters (letters, digits, `-._~`) and `/` go into a Location as they are.
_LOCATION_SAFE = "/"


@dataclass(frozen=True)
class RedirectMatch:
    """Where to send a request: ``status`` 301 or 302, and ``location``, the ``Location`` header's value."""

    status: int
    location: str


@dataclass(frozen=True)
class _Edge:
    to_path: str
    permanent: bool


def _percent_decode(raw: bytes) -> Optional[str]:
    """``raw`` percent-decoded once as UTF-8; ``None`` for a stray ``%`` or bytes that are not UTF-8."""
    if _ESCAPE.search(raw):
        return None
    try:
        return urllib.parse.unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _encode_location(path: str) -> Optional[str]:
    """``path`` percent-encoded for a ``Location``, or ``None`` when it is not a path of this site
    (it must start with ``/`` and never ``//``, which a browser reads as another host)."""
    if not path.startswith("/") or path.startswith("//"):
        return None
    # A lone surrogate is not UTF-8: it becomes U+FFFD, as in the other clients.
    well_formed = path.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return urllib.parse.quote(well_formed, safe=_LOCATION_SAFE)


def _edge_of(item: RedirectItem) -> Tuple[str, _Edge, bool]:
    """``(fromPath, edge, isActive)`` of a redirect given as the client's object or the API's dict."""
    if isinstance(item, Redirect):
        from_path, to_path, kind, active = item.from_path, item.to_path, item.type, item.is_active
    elif isinstance(item, Mapping):
        try:
            from_path, to_path, kind = item["fromPath"], item["toPath"], item["type"]
        except KeyError as missing:
            raise ValueError(f"RedirectMatcher: a redirect has no {missing} field") from None
        active = item.get("isActive", True)
    else:
        raise TypeError(f"RedirectMatcher: a redirect must be a dict or a lectern.Redirect, not {type(item).__name__}")
    if not isinstance(from_path, str) or not isinstance(to_path, str):
        raise ValueError("RedirectMatcher: fromPath and toPath must be strings")
    if kind not in _STATUS_BY_TYPE:
        raise ValueError(f"RedirectMatcher: type must be 'permanent' or 'temporary' (got {kind!r})")
    # Only an explicit false switches a redirect off (as in the other clients): lists of active
    # redirects may leave the field out.
    return from_path, _Edge(to_path, kind == "permanent"), active is not False


class RedirectMatcher:
    """Lectern's redirect matching over a list of redirects, with no network (the cases every
    runtime shares are ``spec/redirect-cases.json``).

    ``redirects`` are the API's redirect objects as dicts (``fromPath``, ``toPath``, ``type``,
    ``isActive``) or :class:`lectern.Redirect` objects; inactive ones are ignored, and should a
    ``fromPath`` repeat, the first wins. :meth:`match` takes a request target and answers ``None``
    (serve the request as usual) or a :class:`RedirectMatch`. Safe to share between threads.
    """

    def __init__(self, redirects: Iterable[RedirectItem]) -> None:
        self._next: Dict[str, _Edge] = {}
        for item in redirects:
            from_path, edge, active = _edge_of(item)
            if active and from_path not in self._next:
                self._next[from_path] = edge
        # fromPath → (status, encoded final toPath), or None for a path that leads into a loop.
        self._resolved: Dict[str, Optional[Tuple[int, str]]] = {}

    def __len__(self) -> int:
        """How many active redirects apply."""
        return len(self._next)

    def match(self, target: str) -> Optional[RedirectMatch]:
        """Where a request for ``target`` (a path with an optional ``?query``; a ``#fragment`` is ignored) goes.

        The path is percent-decoded once (UTF-8; an invalid encoding matches nothing) and compared
        exactly with every active redirect's ``fromPath``; a chain is followed to its end (301 only
        if every link is permanent); ``location`` is the final ``toPath`` percent-encoded, followed
        by ``?`` and the query exactly as given.
        """
        if not isinstance(target, str):
            raise TypeError(f"RedirectMatcher.match: target must be a str, not {type(target).__name__}")
        target = target.split("#", 1)[0]
        path, has_query, query = target.partition("?")
        try:
            raw = path.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return self._finish(self._resolve_encoded(raw), query if has_query else None)

    def match_path(self, path: str, query: Optional[str] = None) -> Optional[RedirectMatch]:
        """Like :meth:`match` for a path a framework has already percent-decoded (Django's
        ``request.path``, Starlette's ``scope["path"]``); ``query`` is appended as given."""
        return self._finish(self._resolve(path), query)

    def _resolve_encoded(self, raw: bytes) -> Optional[Tuple[int, str]]:
        decoded = _percent_decode(raw)
        return None if decoded is None else self._resolve(decoded)

    @staticmethod
    def _finish(resolved: Optional[Tuple[int, str]], query: Optional[str]) -> Optional[RedirectMatch]:
        if resolved is None:
            return None
        status, location = resolved
        return RedirectMatch(status, f"{location}?{query}" if query else location)

    def _resolve(self, path: str) -> Optional[Tuple[int, str]]:
        if path not in self._next:
            return None
        if path in self._resolved:
            return self._resolved[path]
        edge = self._next[path]
        permanent = edge.permanent
        seen = {path}
        current = edge.to_path
        while current in self._next:
            if current in seen:
                logger.warning("lectern: the redirect from %s leads into a loop; it is not applied", path)
                self._resolved[path] = None
                return None
            seen.add(current)
            edge = self._next[current]
            permanent = permanent and edge.permanent
            current = edge.to_path
        location = _encode_location(current)
        if location is None:
            logger.warning("lectern: the redirect from %s leads off the site (%r); it is not applied", path, current)
        result = None if location is None else (301 if permanent else 302, location)
        self._resolved[path] = result
        return result


class RedirectLoader:
    """A :class:`RedirectMatcher` built from the API's active redirects, refreshed every ``refresh_interval`` seconds.

    The first use loads every active redirect (``client.redirects.all(active=True)``); later
    refreshes revalidate each page with ``If-None-Match``, so an unchanged list costs one ``304``
    per page and keeps the matcher already built. A refresh that fails is logged (logger
    ``lectern``) and the previous redirects keep applying (none before a first success); it is
    tried again after ``refresh_interval``. It holds at most ``max_redirects`` (default 100 000):
    a list with more fails to load with :class:`RedirectLimitError`, like any failed refresh,
    instead of growing without bound. Give the loader a client of its own: it reads the
    client's conditional-request state. Safe to share between threads: one refreshes, the others
    keep using the current matcher meanwhile.
    """

    def __init__(
        self,
        client: Lectern,
        *,
        refresh_interval: float = 60.0,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if refresh_interval < 0:
            raise ValueError("RedirectLoader: refresh_interval must be at least 0")
        if isinstance(max_redirects, bool) or not isinstance(max_redirects, int) or max_redirects < 1:
            raise ValueError(f"RedirectLoader: max_redirects must be a whole number of at least 1 (got {max_redirects!r})")
        self._max_redirects = max_redirects
        self._client = client
        self._interval = refresh_interval
        self._clock = clock
        self._matcher: Optional[RedirectMatcher] = None
        self._checked_at: Optional[float] = None
        self._lock = threading.Lock()

    @property
    def due(self) -> bool:
        """Whether the next :attr:`matcher` access fetches from the API."""
        return self._checked_at is None or self._clock() - self._checked_at >= self._interval

    def refresh(self) -> bool:
        """Fetch the active redirects now; ``True`` if they changed (the matcher was rebuilt).

        Raises the client's errors, unlike :attr:`matcher`.
        """
        with self._lock:
            return self._refresh_locked()

    def _refresh_locked(self) -> bool:
        self._checked_at = self._clock()
        items, changed = self._client.redirects._all_with_changes(active=True, max_items=self._max_redirects)
        if changed or self._matcher is None:
            self._matcher = RedirectMatcher(items)
            logger.info("lectern: %d active redirects loaded", len(self._matcher))
            return True
        return False

    @property
    def matcher(self) -> RedirectMatcher:
        """The current matcher, refreshed first when due (never raises: failures are logged)."""
        current = self._matcher
        if not self.due and current is not None:
            return current
        # With a matcher in hand, nobody waits for another thread's refresh.
        if not self._lock.acquire(blocking=current is None):
            return current if current is not None else _EMPTY
        try:
            if self.due:
                try:
                    self._refresh_locked()
                except Exception:
                    logger.exception("lectern: could not refresh the redirects; the previous ones still apply")
            return self._matcher if self._matcher is not None else _EMPTY
        finally:
            self._lock.release()

    def match(self, target: str) -> Optional[RedirectMatch]:
        """:meth:`RedirectMatcher.match` on the current matcher (refreshed first when due)."""
        return self.matcher.match(target)

    def match_path(self, path: str, query: Optional[str] = None) -> Optional[RedirectMatch]:
        """:meth:`RedirectMatcher.match_path` on the current matcher (refreshed first when due)."""
        return self.matcher.match_path(path, query)


_EMPTY = RedirectMatcher([])

#: What the middleware take: a fixed matcher, or a loader that keeps one fresh.
RedirectSource = Union[RedirectMatcher, RedirectLoader]


def current_matcher(source: RedirectSource) -> RedirectMatcher:
    """The matcher a middleware applies now."""
    return source.matcher if isinstance(source, RedirectLoader) else source


__all__: List[str] = ["RedirectMatcher", "RedirectMatch", "RedirectLoader", "RedirectItem", "RedirectSource"]
