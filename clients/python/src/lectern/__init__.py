"""The official Python client for the Lectern content API: forms, submissions, pages and redirects.

::

    from lectern import Lectern

    lectern = Lectern(base_url="https://content.example.com", api_key="lk_live_…")
    for form in lectern.forms.all(active=True):
        print(form.id, form.title)
"""

from ._client import MAX_PAGE_SIZE, Forms, Lectern, Pages, Redirects, Submissions, TimeValue, __version__
from ._transport import DEFAULT_MAX_RESPONSE_BYTES
from ._errors import (
    ERROR_TYPES,
    APIConnectionError,
    AuthenticationError,
    InvalidRequestError,
    LecternError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RedirectLimitError,
    ServerError,
    ServiceUnavailableError,
)
from ._models import (
    Form,
    FormDetail,
    FormField,
    FormIntake,
    LastResponse,
    ListMeta,
    ListPage,
    Page,
    RateLimit,
    Redirect,
    Submission,
    SyncResult,
    parse_timestamp,
)
from ._webhooks import DEFAULT_WEBHOOK_TOLERANCE, WebhookHeaders, WebhookVerificationError, verify_webhook
from ._redirects import DEFAULT_MAX_REDIRECTS, RedirectItem, RedirectLoader, RedirectMatch, RedirectMatcher, RedirectSource

__all__ = [
    "__version__",
    "MAX_PAGE_SIZE",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_REDIRECTS",
    "ERROR_TYPES",
    "Lectern",
    "Forms",
    "Pages",
    "Redirects",
    "Submissions",
    "SyncResult",
    "TimeValue",
    "Form",
    "FormDetail",
    "FormField",
    "FormIntake",
    "Submission",
    "Page",
    "Redirect",
    "ListPage",
    "ListMeta",
    "LastResponse",
    "RateLimit",
    "parse_timestamp",
    "LecternError",
    "APIConnectionError",
    "AuthenticationError",
    "InvalidRequestError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RedirectLimitError",
    "ServerError",
    "ServiceUnavailableError",
    "RedirectMatcher",
    "RedirectMatch",
    "RedirectLoader",
    "RedirectItem",
    "RedirectSource",
    "verify_webhook",
    "WebhookVerificationError",
    "WebhookHeaders",
    "DEFAULT_WEBHOOK_TOLERANCE",
]
