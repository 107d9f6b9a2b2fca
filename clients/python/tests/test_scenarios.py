"""Every scenario of ``spec/client-scenarios.json``, run against the contract's real test server."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any, Dict, List, Optional, Type

import pytest
from conftest import LecternServer, load_spec

import lectern
from lectern import Lectern, LecternError

SCENARIOS: List[Dict[str, Any]] = load_spec("client-scenarios.json")["scenarios"]

ERROR_CLASS_BY_KIND: Dict[str, Type[LecternError]] = {
    "authentication": lectern.AuthenticationError,
    "permission": lectern.PermissionDeniedError,
    "not_found": lectern.NotFoundError,
    "invalid_request": lectern.InvalidRequestError,
    "rate_limit": lectern.RateLimitError,
    "unavailable": lectern.ServiceUnavailableError,
    "server": lectern.ServerError,
}

# The contract's canonical camelCase names, in Python's idiom.
ARGUMENT_NAMES = {
    "page": "page",
    "pageSize": "page_size",
    "active": "active",
    "published": "published",
    "since": "since",
    "until": "until",
    "isRead": "is_read",
    "isStarred": "is_starred",
}
CLIENT_OPTIONS = {"maxRetries": "max_retries"}
EXPECT_KEYS = {"ids", "meta", "items", "item", "error", "lastStatus", "rateLimit", "until"}


class Outcome:
    """What one call gave: its items and meta, or the error it raised."""

    def __init__(
        self,
        items: Optional[List[Any]] = None,
        meta: Any = None,
        error: Optional[BaseException] = None,
        item: Any = None,
        until: Optional[str] = None,
        saved: Optional[str] = None,
    ):
        self.items = items
        self.meta = meta
        self.error = error
        self.item = item
        self.until = until
        self.saved = saved


def resolve(value: Any, saved: Dict[str, str]) -> Any:
    """``$name`` in an argument or an expected id stands for what an earlier step saved as ``name``."""
    if isinstance(value, str) and value.startswith("$"):
        assert value[1:] in saved, f"nothing saved as {value[1:]} before it is used"
        return saved[value[1:]]
    if isinstance(value, list):
        return [resolve(one, saved) for one in value]
    if isinstance(value, dict):
        return {key: resolve(one, saved) for key, one in value.items()}
    return value


def submit(base_url: str, form_id: str, data: Dict[str, Any]) -> Outcome:
    """Posts a submission the way a site's form does (no key), as ``intake.submit`` asks."""
    request = urllib.request.Request(
        f"{base_url}/f/{form_id}",
        data=json.dumps(data).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201, response.status
        return Outcome(items=[], saved=json.load(response)["id"])


def perform(client: Lectern, call: str, args: Dict[str, Any]) -> Outcome:
    if call == "intake.submit":
        return submit(client.base_url, args["formId"], args["data"])
    if call == "clock.wait":
        time.sleep(args["milliseconds"] / 1000)
        return Outcome(items=[])
    kwargs = {ARGUMENT_NAMES[name]: value for name, value in args.items() if name != "formId"}
    positional = [args["formId"]] if "formId" in args else []
    resource_name, method_name = call.split(".")
    method = getattr(getattr(client, resource_name), {"allSubmissions": "all_submissions"}.get(method_name, method_name))
    try:
        result = method(*positional, **kwargs)
        if method_name == "get":
            return Outcome(items=[result], item=result)
        if method_name in ("all", "allSubmissions"):
            return Outcome(items=list(result))
        if method_name == "sync":
            assert isinstance(result, lectern.SyncResult)
            return Outcome(items=result.items, until=result.until, saved=result.until)
        return Outcome(items=list(result.data), meta=result.meta)
    except LecternError as error:
        return Outcome(error=error)


def with_base_url(value: Any, base_url: str) -> Any:
    """``{baseUrl}`` in an expected value stands for the test server's address."""
    if isinstance(value, str):
        return value.replace("{baseUrl}", base_url)
    if isinstance(value, list):
        return [with_base_url(one, base_url) for one in value]
    if isinstance(value, dict):
        return {key: with_base_url(one, base_url) for key, one in value.items()}
    return value


def check(client: Lectern, expect: Dict[str, Any], outcome: Outcome, where: str, saved: Dict[str, str]) -> None:
    unknown = set(expect) - EXPECT_KEYS
    assert not unknown, f"{where}: the scenario expects {unknown}, which this runner does not know"
    if "error" in expect:
        wanted = expect["error"]
        error = outcome.error
        assert error is not None, f"{where}: expected a {wanted['kind']} error, got a result"
        assert type(error) is ERROR_CLASS_BY_KIND[wanted["kind"]], f"{where}: {error!r} is not a {wanted['kind']} error"
        assert isinstance(error, LecternError)
        if "type" in wanted:
            assert error.type == wanted["type"], where
        if "status" in wanted:
            assert error.status == wanted["status"], where
        if "messageContains" in wanted:
            assert wanted["messageContains"] in error.message, f"{where}: {error.message!r}"
    elif outcome.error is not None:
        raise AssertionError(f"{where}: the call raised {outcome.error!r}") from outcome.error
    if "ids" in expect:
        assert outcome.items is not None
        assert [item.id for item in outcome.items] == resolve(expect["ids"], saved), where
    if "until" in expect:
        assert outcome.until == expect["until"], where
    if "items" in expect:
        assert outcome.items is not None
        assert [item.to_dict() for item in outcome.items] == expect["items"], where
    if "item" in expect:
        assert isinstance(outcome.item, lectern.FormDetail), f"{where}: {outcome.item!r}"
        wanted_item = with_base_url(expect["item"], client.base_url)
        assert outcome.item.to_dict() == wanted_item, where
        assert list(outcome.item.to_dict()) == list(wanted_item), f"{where}: fields in the API's order"
        assert [field.max_length for field in outcome.item.fields] == [
            field["maxLength"] for field in wanted_item["fields"]
        ], where
        assert outcome.item.intake.url == wanted_item["intake"]["url"], where
    if "meta" in expect:
        assert outcome.meta is not None, f"{where}: the call returns no meta"
        assert outcome.meta.to_dict() == expect["meta"], where
        assert (outcome.meta.total, outcome.meta.page, outcome.meta.page_size, outcome.meta.total_pages) == (
            expect["meta"]["total"],
            expect["meta"]["page"],
            expect["meta"]["pageSize"],
            expect["meta"]["totalPages"],
        )
    last = client.last_response
    if "lastStatus" in expect:
        assert last is not None and last.status == expect["lastStatus"], f"{where}: {last!r}"
    if "rateLimit" in expect:
        assert last is not None and last.rate_limit is not None, f"{where}: no rate-limit state"
        if "limit" in expect["rateLimit"]:
            assert last.rate_limit.limit == expect["rateLimit"]["limit"], where
        if "remainingBelow" in expect["rateLimit"]:
            assert last.rate_limit.remaining < expect["rateLimit"]["remainingBelow"], where


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario["name"] for scenario in SCENARIOS])
def test_scenario(scenario: Dict[str, Any], lectern_server: LecternServer) -> None:
    options = {CLIENT_OPTIONS[name]: value for name, value in scenario.get("client", {}).items()}
    client = Lectern(base_url=lectern_server.base_url, api_key=lectern_server.keys[scenario["key"]], **options)
    saved: Dict[str, str] = {}
    for number, step in enumerate(scenario["steps"], start=1):
        times = step.get("times", 1)
        for run in range(1, times + 1):
            where = f"step {number} ({step['call']}), run {run} of {times}"
            outcome = perform(client, step["call"], resolve(step.get("args", {}), saved))
            if "expectLast" in step and run < times:
                check(client, {}, outcome, where, saved)
            elif "expectLast" in step:
                check(client, step["expectLast"], outcome, where, saved)
            else:
                check(client, step.get("expect", {}), outcome, where, saved)
            if "save" in step and outcome.error is None and outcome.saved is not None:
                saved[step["save"]] = outcome.saved
