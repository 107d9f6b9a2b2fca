"""The submissions filters and the sync helper against the contract's real test server."""

from __future__ import annotations

import datetime

import pytest
from conftest import LecternServer

from lectern import Lectern, Submissions, SyncResult

UTC = datetime.timezone.utc
PLUS_ONE = datetime.timezone(datetime.timedelta(hours=1))


@pytest.fixture
def client(lectern_server: LecternServer) -> Lectern:
    return Lectern(base_url=lectern_server.base_url, api_key=lectern_server.keys["admin"])


def ids(items: object) -> list[str]:
    return [item.id for item in items]  # type: ignore[attr-defined]


def test_sends_an_aware_datetime_as_utc_and_keeps_its_fraction(client: Lectern) -> None:
    since = datetime.datetime(2024, 2, 3, 11, 0, 0, tzinfo=PLUS_ONE)
    assert ids(client.forms.submissions("form_contact", since=since)) == [
        "submission_c05",
        "submission_c04",
        "submission_c03",
    ]
    # Half a second before 10:00:00 counts as 10:00:00, which until excludes.
    until = datetime.datetime(2024, 2, 3, 9, 59, 59, 500000, tzinfo=UTC)
    assert ids(client.forms.all_submissions("form_contact", until=until, page_size=1)) == [
        "submission_c02",
        "submission_c01",
    ]


def test_refuses_a_naive_datetime_and_a_flag_that_is_not_a_bool(client: Lectern) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        client.forms.submissions("form_contact", since=datetime.datetime(2024, 2, 3))
    with pytest.raises(TypeError, match="is_read"):
        client.forms.submissions("form_contact", is_read="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="until"):
        client.submissions.sync("form_contact", until=datetime.date(2024, 2, 3))  # type: ignore[arg-type]


def test_syncs_up_to_now_cut_to_the_whole_second_then_from_there(client: Lectern) -> None:
    # 10:00:00.9 on 3 February: submission_c03 and _c04, created at 10:00:00, belong to the next run.
    moment = datetime.datetime(2024, 2, 3, 10, 0, 0, 900000, tzinfo=UTC).timestamp()
    first = Submissions(client.forms, clock=lambda: moment).sync("form_contact", page_size=1)
    assert isinstance(first, SyncResult)
    assert (ids(first.items), first.until) == (["submission_c02", "submission_c01"], "2024-02-03T10:00:00Z")
    second = client.submissions.sync(
        "form_contact", since=first.until, until=datetime.datetime(2024, 2, 5, 10, tzinfo=UTC), is_starred=True
    )
    assert (ids(second.items), second.until) == (["submission_c04"], "2024-02-05T10:00:00Z")
