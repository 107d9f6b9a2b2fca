"""The items the API returns, as frozen dataclasses with snake_case attributes.

Each item's attributes are the API's fields renamed to snake_case (``fromPath`` → ``from_path``);
``to_dict()`` gives them back under the API's names. Timestamps stay the API's strings
(``2024-01-05T10:00:00Z``, UTC): :func:`parse_timestamp` turns one into an aware ``datetime``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Dict, Generic, Iterator, List, Mapping, Optional, Tuple, Type, TypeVar

_Item = TypeVar("_Item")
_Model = TypeVar("_Model", bound="_ApiModel")


class ResponseShapeError(ValueError):
    """A response body that does not have the shape the API documents."""


def parse_timestamp(value: str) -> datetime.datetime:
    """An API timestamp (``2024-01-05T10:00:00Z``) as an aware UTC ``datetime``."""
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


class _ApiModel:
    """Maps between the API's camelCase fields and the dataclass's snake_case attributes."""

    #: (API field name, attribute name), in the API's order.
    _FIELDS: Tuple[Tuple[str, str], ...] = ()

    @classmethod
    def from_dict(cls: Type[_Model], item: Mapping[str, Any]) -> _Model:
        """The item from an API object (the API's field names); fields the client does not know are ignored."""
        if not isinstance(item, Mapping):
            raise ResponseShapeError(f"{cls.__name__}: expected an object, got {type(item).__name__}")
        try:
            values = {attribute: item[field] for field, attribute in cls._FIELDS}
        except KeyError as missing:
            raise ResponseShapeError(f"{cls.__name__}: the API object has no {missing} field") from None
        return cls(**values)

    def to_dict(self) -> Dict[str, Any]:
        """The item as the API sends it: the API's field names, in its order."""
        return {field: getattr(self, attribute) for field, attribute in self._FIELDS}


@dataclass(frozen=True)
class Form(_ApiModel):
    """A form (``GET /api/v1/forms``). API fields: ``id``, ``title``, ``description``."""

    id: str
    title: str
    description: Optional[str]

    _FIELDS = (("id", "id"), ("title", "title"), ("description", "description"))


@dataclass(frozen=True)
class FormField(_ApiModel):
    """A field a form expects (in :class:`FormDetail`).

    ``type`` is one of ``text``, ``textarea``, ``email``, ``url``, ``tel``, ``number``, ``date``,
    ``checkbox``, ``select``; ``options`` the values a ``select`` accepts (``None`` for other types);
    ``max_length`` (API ``maxLength``) the most characters a value may have, or ``None``.
    """

    name: str
    label: str
    type: str
    required: bool
    options: Optional[List[str]]
    max_length: Optional[int]

    _FIELDS = (
        ("name", "name"),
        ("label", "label"),
        ("type", "type"),
        ("required", "required"),
        ("options", "options"),
        ("maxLength", "max_length"),
    )


@dataclass(frozen=True)
class FormIntake(_ApiModel):
    """Whether a form takes public posts now (``enabled``: its intake is on and it is active), and
    ``url``, the absolute address a site posts it to."""

    enabled: bool
    url: str

    _FIELDS = (("enabled", "enabled"), ("url", "url"))


@dataclass(frozen=True)
class FormDetail(_ApiModel):
    """One form with its field definitions and intake address (``GET /api/v1/forms/{id}``), so a
    site can render it. API fields: ``id``, ``title``, ``description``, ``fields``, ``intake``."""

    id: str
    title: str
    description: Optional[str]
    fields: List[FormField]
    intake: FormIntake

    _FIELDS = (
        ("id", "id"),
        ("title", "title"),
        ("description", "description"),
        ("fields", "fields"),
        ("intake", "intake"),
    )

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> FormDetail:
        """The form from the API's object, its fields and intake as their own dataclasses."""
        if not isinstance(item, Mapping):
            raise ResponseShapeError(f"FormDetail: expected an object, got {type(item).__name__}")
        fields = item.get("fields")
        if not isinstance(fields, list):
            raise ResponseShapeError("FormDetail: the API object has no fields list")
        try:
            return cls(
                id=item["id"],
                title=item["title"],
                description=item["description"],
                fields=[FormField.from_dict(field) for field in fields],
                intake=FormIntake.from_dict(item["intake"]),
            )
        except KeyError as missing:
            raise ResponseShapeError(f"FormDetail: the API object has no {missing} field") from None

    def to_dict(self) -> Dict[str, Any]:
        """The form as the API sends it, nested objects included."""
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "fields": [field.to_dict() for field in self.fields],
            "intake": self.intake.to_dict(),
        }


@dataclass(frozen=True)
class Submission(_ApiModel):
    """A form submission (``GET /api/v1/forms/{id}/submissions``).

    ``data`` is the submitted fields as a plain dict. Renamed fields: ``ipAddress`` → ``ip_address``,
    ``userAgent`` → ``user_agent``, ``submittedBy`` → ``submitted_by``, ``isRead`` → ``is_read``,
    ``isStarred`` → ``is_starred``, ``createdAt`` → ``created_at``, ``updatedAt`` → ``updated_at``.
    """

    id: str
    data: Dict[str, Any]
    ip_address: Optional[str]
    user_agent: Optional[str]
    referrer: Optional[str]
    submitted_by: Optional[str]
    is_read: bool
    is_starred: bool
    notes: Optional[str]
    created_at: str
    updated_at: str

    _FIELDS = (
        ("id", "id"),
        ("data", "data"),
        ("ipAddress", "ip_address"),
        ("userAgent", "user_agent"),
        ("referrer", "referrer"),
        ("submittedBy", "submitted_by"),
        ("isRead", "is_read"),
        ("isStarred", "is_starred"),
        ("notes", "notes"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    )


@dataclass(frozen=True)
class Page(_ApiModel):
    """A page (``GET /api/v1/page-builder``).

    Renamed fields: ``pageType`` → ``page_type``, ``isPublished`` → ``is_published``,
    ``publishedAt`` → ``published_at``, ``createdAt`` → ``created_at``, ``updatedAt`` → ``updated_at``.
    """

    id: str
    title: str
    slug: str
    path: str
    page_type: str
    is_published: bool
    published_at: Optional[str]
    created_at: str
    updated_at: str

    _FIELDS = (
        ("id", "id"),
        ("title", "title"),
        ("slug", "slug"),
        ("path", "path"),
        ("pageType", "page_type"),
        ("isPublished", "is_published"),
        ("publishedAt", "published_at"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    )


@dataclass(frozen=True)
class Redirect(_ApiModel):
    """A URL redirect (``GET /api/v1/page-builder/redirects``).

    ``type`` is ``"permanent"`` (301) or ``"temporary"`` (302). Renamed fields: ``fromPath`` →
    ``from_path``, ``toPath`` → ``to_path``, ``isActive`` → ``is_active``, ``createdAt`` →
    ``created_at``, ``updatedAt`` → ``updated_at``.
    """

    id: str
    from_path: str
    to_path: str
    type: str
    is_active: bool
    created_at: str
    updated_at: str

    _FIELDS = (
        ("id", "id"),
        ("fromPath", "from_path"),
        ("toPath", "to_path"),
        ("type", "type"),
        ("isActive", "is_active"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    )


@dataclass(frozen=True)
class ListMeta:
    """Where a page sits in its list: API ``total``, ``page``, ``pageSize``, ``totalPages``."""

    total: int
    page: int
    page_size: int
    total_pages: int

    @classmethod
    def from_dict(cls, meta: Mapping[str, Any]) -> ListMeta:
        """The meta from the API's ``meta`` object."""
        try:
            return cls(
                total=int(meta["total"]),
                page=int(meta["page"]),
                page_size=int(meta["pageSize"]),
                total_pages=int(meta["totalPages"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ResponseShapeError(f"ListMeta: malformed meta object ({error!r})") from None

    def to_dict(self) -> Dict[str, int]:
        """The meta under the API's names."""
        return {
            "total": self.total,
            "page": self.page,
            "pageSize": self.page_size,
            "totalPages": self.total_pages,
        }


@dataclass(frozen=True)
class ListPage(Generic[_Item]):
    """One page of a list: ``data`` (the items, in the API's order) and ``meta``."""

    data: List[_Item]
    meta: ListMeta

    def __iter__(self) -> Iterator[_Item]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class SyncResult:
    """What one ``submissions.sync()`` run read: ``items`` (newest first) and ``until``, the window's
    end as it was sent (ISO 8601 text), to store and pass as ``since`` to the next run."""

    items: List["Submission"]
    until: str


@dataclass(frozen=True)
class RateLimit:
    """The key's rate-limit state as a response said (``X-RateLimit-*`` headers).

    ``limit``: requests per hour; ``remaining``: requests left in the hourly window;
    ``reset``: Unix time in seconds when the window ends.
    """

    limit: int
    remaining: int
    reset: int


@dataclass(frozen=True)
class LastResponse:
    """What the client's latest HTTP response said.

    ``status`` is ``304`` when the client revalidated a page with ``If-None-Match`` and reused its
    remembered body; ``rate_limit`` is ``None`` when the response carried no rate-limit headers.
    """

    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
