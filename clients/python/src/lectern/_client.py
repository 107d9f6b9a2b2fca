"""The client object and its resources: ``forms``, ``pages`` and ``redirects``."""

from __future__ import annotations

import datetime
import random as _random
import time
import urllib.parse
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Type, TypeVar, Union

from ._errors import UNEXPECTED_RESPONSE, RedirectLimitError, ServerError
from ._models import (
    Form,
    FormDetail,
    LastResponse,
    ListMeta,
    ListPage,
    Page,
    RateLimit,
    Redirect,
    ResponseShapeError,
    Submission,
    SyncResult,
    _ApiModel,
)
from ._transport import DEFAULT_MAX_RESPONSE_BYTES, Transport

__version__ = "0.2.0"

_Item = TypeVar("_Item", bound=_ApiModel)

#: The largest page the API serves: ``all()`` asks for it, to make as few requests as possible.
MAX_PAGE_SIZE = 100


def _check_int(name: str, value: Optional[int], low: Optional[int] = None) -> None:
    """A type check only for parameters: their ranges are the API's to judge (``InvalidRequestError``)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low} (got {value})")


def _check_bool(name: str, value: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"{name} must be True, False or None, not {type(value).__name__}")


_TIME_FILTERS = ("since", "until")

#: A moment for a submissions filter: an aware ``datetime``, or ISO 8601 text sent as it is.
TimeValue = Union[datetime.datetime, str]


def _format_time(name: str, value: Optional[TimeValue]) -> Optional[str]:
    """A time as the API reads it: UTC with ``Z``, whole seconds unless the ``datetime`` has a fraction.
    Text is left to the server, which accepts offsets and names the parameter when it is wrong."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"{name} must be a datetime or an ISO 8601 str, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        # The server would read it as UTC, Python code usually means local time: neither is guessed.
        raise ValueError(f"{name} must be a timezone-aware datetime (e.g. datetime.now(timezone.utc))")
    utc = value.astimezone(datetime.timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{utc.microsecond:06d}Z" if utc.microsecond else f"{text}Z"


def _submission_filters(
    since: Optional[TimeValue], until: Optional[TimeValue], is_read: Optional[bool], is_starred: Optional[bool]
) -> Dict[str, object]:
    _check_bool("is_read", is_read)
    _check_bool("is_starred", is_starred)
    return {
        "since": _format_time("since", since),
        "until": _format_time("until", until),
        "isRead": is_read,
        "isStarred": is_starred,
    }


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _page(
        self,
        path: str,
        item_type: Type[_Item],
        page: Optional[int],
        page_size: Optional[int],
        filters: Dict[str, object],
    ) -> Tuple[ListPage[_Item], int]:
        """One page of a list and the status that brought it (200, or 304 for a remembered body)."""
        _check_int("page", page)
        _check_int("page_size", page_size)
        for name, value in filters.items():
            # Times arrive as text already (see _format_time); every other filter is a flag.
            if name not in _TIME_FILTERS:
                _check_bool(name, value)
        query: Dict[str, object] = {"page": page, "pageSize": page_size, **filters}
        body, status = self._transport.get(path, query)
        try:
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                raise ResponseShapeError("expected an object with a data list")
            data = [item_type.from_dict(item) for item in body["data"]]
            meta = ListMeta.from_dict(body.get("meta") or {})
        except ResponseShapeError as error:
            raise self._shape_error(error, status) from None
        return ListPage(data=data, meta=meta), status

    def _shape_error(self, error: ResponseShapeError, status: int) -> ServerError:
        last = self._transport.last_response
        return ServerError(
            f"The response from Lectern does not have the documented shape: {error}",
            type=UNEXPECTED_RESPONSE,
            status=status,
            request_id=last.request_id if last else None,
        )

    def _walk(
        self,
        fetch: Callable[[int, int], ListPage[_Item]],
        page_size: Optional[int],
    ) -> Iterator[_Item]:
        _check_int("page_size", page_size)
        size = MAX_PAGE_SIZE if page_size is None else page_size

        def walk() -> Iterator[_Item]:
            bound = _PageBound()
            page = 1
            while True:
                result = fetch(page, size)
                yield from result.data
                if bound.done(page, result):
                    return
                page += 1

        return walk()


class _PageBound:
    """When a walk through pages ends: at an empty page, or once the first page's ``total`` items
    (or ``total_pages`` pages) have come, so that a server whose later pages announce ever more
    cannot keep it going for ever."""

    def __init__(self) -> None:
        self._total: Optional[int] = None
        self._total_pages: Optional[int] = None
        self._seen = 0

    def done(self, page: int, result: ListPage[_Item]) -> bool:
        if self._total is None or self._total_pages is None:
            self._total, self._total_pages = result.meta.total, result.meta.total_pages
        self._seen += len(result.data)
        return not result.data or self._seen >= self._total or page >= self._total_pages


class Forms(_Resource):
    """``GET /api/v1/forms`` (needs ``forms:read``): forms oldest first; ``GET /api/v1/forms/{id}``
    (needs ``forms:read``): one form with its fields and intake address; and
    ``GET /api/v1/forms/{id}/submissions`` (needs ``submissions:read``): a form's submissions, newest first."""

    def get(self, form_id: str) -> FormDetail:
        """One form with its field definitions and the address a site posts it to, so a site can
        render it; an unknown form raises :class:`NotFoundError`."""
        body, status = self._transport.get(f"/forms/{_path_segment(form_id)}", {})
        try:
            data = body.get("data") if isinstance(body, dict) else None
            if not isinstance(data, dict):
                raise ResponseShapeError("expected an object with a data object")
            return FormDetail.from_dict(data)
        except ResponseShapeError as error:
            raise self._shape_error(error, status) from None

    def list(
        self, *, page: Optional[int] = None, page_size: Optional[int] = None, active: Optional[bool] = None
    ) -> ListPage[Form]:
        """One page of forms; ``active=True`` only active ones, ``False`` only inactive ones, ``None`` all."""
        return self._page("/forms", Form, page, page_size, {"active": active})[0]

    def all(self, *, page_size: Optional[int] = None, active: Optional[bool] = None) -> Iterator[Form]:
        """Every form, fetching page after page (``page_size``, default 100) as the loop asks for more."""
        _check_bool("active", active)
        return self._walk(lambda page, size: self.list(page=page, page_size=size, active=active), page_size)

    def submissions(
        self,
        form_id: str,
        *,
        page: Optional[int] = None,
        page_size: Optional[int] = None,
        since: Optional[TimeValue] = None,
        until: Optional[TimeValue] = None,
        is_read: Optional[bool] = None,
        is_starred: Optional[bool] = None,
    ) -> ListPage[Submission]:
        """One page of a form's submissions, newest first; an unknown form raises :class:`NotFoundError`.

        ``since`` and ``until`` select ``createdAt`` in ``[since, until)`` (an aware ``datetime`` is
        sent as UTC with ``Z``, a ``str`` as it is); ``is_read`` and ``is_starred`` the flags. A value
        the server refuses raises :class:`InvalidRequestError` naming the parameter."""
        path = f"/forms/{_path_segment(form_id)}/submissions"
        filters = _submission_filters(since, until, is_read, is_starred)
        return self._page(path, Submission, page, page_size, filters)[0]

    def all_submissions(
        self,
        form_id: str,
        *,
        page_size: Optional[int] = None,
        since: Optional[TimeValue] = None,
        until: Optional[TimeValue] = None,
        is_read: Optional[bool] = None,
        is_starred: Optional[bool] = None,
    ) -> Iterator[Submission]:
        """Every submission of a form (the filters of :meth:`submissions` apply), newest first, page
        after page as the loop asks for more."""
        _path_segment(form_id)
        _submission_filters(since, until, is_read, is_starred)
        return self._walk(
            lambda page, size: self.submissions(
                form_id,
                page=page,
                page_size=size,
                since=since,
                until=until,
                is_read=is_read,
                is_starred=is_starred,
            ),
            page_size,
        )


class Submissions:
    """Incremental reads of a form's submissions (needs ``submissions:read``): :meth:`sync` reads one
    window ``[since, until)`` to its end and hands back the ``until`` to start the next run from."""

    def __init__(self, forms: Forms, clock: Callable[[], float] = time.time) -> None:
        self._forms = forms
        self._clock = clock

    def sync(
        self,
        form_id: str,
        *,
        since: Optional[TimeValue] = None,
        until: Optional[TimeValue] = None,
        is_read: Optional[bool] = None,
        is_starred: Optional[bool] = None,
        page_size: Optional[int] = None,
    ) -> SyncResult:
        """Every submission created in ``[since, until)``, page by page, and the window's ``until``.

        ``until`` defaults to now, taken once at the start and cut to the whole second: the server
        counts a fraction as the next second, which would let a submission of this very second land
        in this window after it was read, and not in the next. Without ``since`` it reads everything
        before ``until`` (a first run). Store ``result.until`` once the items are handled, and pass it
        as ``since`` next time::

            result = lectern.submissions.sync("form_contact", since=state.get("until"))
            crm.save(result.items)
            state["until"] = result.until
        """
        end = _format_time("until", until)
        if end is None:
            now = datetime.datetime.fromtimestamp(int(self._clock()), datetime.timezone.utc)
            end = _format_time("until", now)
        assert end is not None
        items = list(
            self._forms.all_submissions(
                form_id,
                page_size=page_size,
                since=since,
                until=end,
                is_read=is_read,
                is_starred=is_starred,
            )
        )
        return SyncResult(items=items, until=end)


class Pages(_Resource):
    """``GET /api/v1/page-builder`` (needs ``pages:read``): pages oldest first."""

    def list(
        self, *, page: Optional[int] = None, page_size: Optional[int] = None, published: Optional[bool] = None
    ) -> ListPage[Page]:
        """One page of pages; ``published=True`` only published ones, ``False`` only drafts, ``None`` all."""
        return self._page("/page-builder", Page, page, page_size, {"published": published})[0]

    def all(self, *, page_size: Optional[int] = None, published: Optional[bool] = None) -> Iterator[Page]:
        """Every page, fetching page after page as the loop asks for more."""
        _check_bool("published", published)
        return self._walk(lambda page, size: self.list(page=page, page_size=size, published=published), page_size)


class Redirects(_Resource):
    """``GET /api/v1/page-builder/redirects`` (needs ``redirects:read``): redirects oldest first."""

    _PATH = "/page-builder/redirects"

    def list(
        self, *, page: Optional[int] = None, page_size: Optional[int] = None, active: Optional[bool] = None
    ) -> ListPage[Redirect]:
        """One page of redirects; ``active=True`` only active ones, ``False`` only inactive ones, ``None`` all."""
        return self._page(self._PATH, Redirect, page, page_size, {"active": active})[0]

    def all(self, *, page_size: Optional[int] = None, active: Optional[bool] = None) -> Iterator[Redirect]:
        """Every redirect, fetching page after page as the loop asks for more."""
        _check_bool("active", active)
        return self._walk(lambda page, size: self.list(page=page, page_size=size, active=active), page_size)

    def _all_with_changes(
        self, *, active: Optional[bool], max_items: Optional[int] = None
    ) -> Tuple[List[Redirect], bool]:
        """Every redirect, and whether any page differed from the one remembered (not answered 304);
        :class:`RedirectLimitError` as soon as there are more than ``max_items``."""
        items: List[Redirect] = []
        changed = False
        bound = _PageBound()
        page = 1
        while True:
            result, status = self._page(self._PATH, Redirect, page, MAX_PAGE_SIZE, {"active": active})
            changed = changed or status != 304
            items.extend(result.data)
            if max_items is not None and len(items) > max_items:
                raise RedirectLimitError(max_items)
            if bound.done(page, result):
                return items, changed
            page += 1


def _path_segment(form_id: str) -> str:
    if not isinstance(form_id, str) or form_id == "":
        raise ValueError("form_id must be a non-empty string")
    return urllib.parse.quote(form_id, safe="")


class Lectern:
    """A client of the Lectern API.

    ``base_url`` is where Lectern runs (the API lives under ``/api/v1``); ``api_key`` a key
    (``lk_live_…``). Failed requests raise a :class:`LecternError` subclass; ``429`` and ``503`` are
    retried first, up to ``max_retries`` times, waiting ``Retry-After`` (plus up to ``base_delay``
    seconds of jitter) or an exponential back-off from ``base_delay``; a wait longer than
    ``max_delay`` seconds is not waited for. ``timeout`` bounds each attempt, in seconds, reading
    the whole body included; a body larger than ``max_response_bytes`` (default 32 MiB) raises a
    :class:`ServerError` of type ``unexpected_response`` instead of filling the memory. The last
    ``cache_size`` pages fetched are remembered with their ``ETag`` and revalidated with
    ``If-None-Match`` (``0`` turns that off). ``sleep`` and ``random`` replace ``time.sleep`` and
    ``random.random`` (a test's fake clock, fixed jitter).

    One client object may be shared by threads; ``last_response`` is then the latest response of any.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 2,
        timeout: float = 30.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        cache_size: int = 100,
        user_agent: Optional[str] = None,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        if not isinstance(base_url, str) or not base_url:
            raise ValueError("Lectern: base_url is required")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"Lectern: base_url must start with http:// or https:// (got {base_url!r})")
        if not isinstance(api_key, str) or not api_key:
            raise ValueError("Lectern: api_key is required")
        _check_int("max_retries", max_retries, 0)
        _check_int("cache_size", cache_size, 0)
        _check_int("max_response_bytes", max_response_bytes, 1)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"Lectern: timeout must be a number of seconds above 0 (got {timeout!r})")
        self._transport = Transport(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            max_retries=max_retries,
            base_delay=base_delay,
            max_delay=max_delay,
            cache_size=cache_size,
            user_agent=user_agent or f"lectern-python/{__version__}",
            sleep=sleep,
            random=random,
        )
        self.forms = Forms(self._transport)
        self.submissions = Submissions(self.forms)
        self.pages = Pages(self._transport)
        self.redirects = Redirects(self._transport)

    @property
    def base_url(self) -> str:
        """Where Lectern runs, without a trailing slash."""
        return self._transport.base_url

    @property
    def last_response(self) -> Optional[LastResponse]:
        """What the latest HTTP response said (``status``, ``request_id``, ``rate_limit``), or ``None`` before one."""
        return self._transport.last_response

    @property
    def rate_limit(self) -> Optional[RateLimit]:
        """The key's rate-limit state as the latest response said, or ``None``."""
        last = self._transport.last_response
        return last.rate_limit if last else None

    def __repr__(self) -> str:
        return f"Lectern(base_url={self.base_url!r})"

