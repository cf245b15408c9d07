"""The HTTP API on a live loopback server, driven with httpx: every route, every error status,
the token, the body cap, the busy and timeout paths, URL round-trip of hard names, metrics,
access logs and CORS."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from service_support import (
    HARD_NAMES,
    GatedEngine,
    build_sample,
    engine_inspect,
    engine_search,
    live_server,
    sample_names,
    sample_root,  # noqa: F401  (fixture)
)

from leanindex.client import declaration_path
from leanindex.engine import Engine
from leanindex.errors import HTTP_STATUS, ErrorCode
from leanindex.models import EnvironmentsResponse, ErrorResponse, InspectResponse, SearchResponse
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

BODY_CAP = 4096


@pytest.fixture(scope="module")
def served(sample_root: Path):
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(max_body_bytes=BODY_CAP))) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            yield http
    engine.close()


def assert_error(response: httpx.Response, code: ErrorCode) -> dict:
    """The response is the shared error object with `code` and the status of that code."""
    body = ErrorResponse.model_validate_json(response.content)
    assert body.error.code == code.value, response.text
    assert response.status_code == HTTP_STATUS[code]
    return body.error.details


def test_healthz_and_readyz(served: httpx.Client) -> None:
    assert served.get("/healthz").json() == {"status": "ok"}
    ready = served.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "environments": ["SAMPLE"]}


def test_environments_is_the_engine_answer(served: httpx.Client, sample_root: Path) -> None:
    response = served.get("/v1/environments")
    assert response.status_code == 200
    engine = Engine(sample_root)
    assert EnvironmentsResponse.model_validate_json(response.content) == engine.environments()
    engine.close()


@pytest.mark.parametrize(
    "filters",
    [
        {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]},
        {"type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}},
        {"name_contains": "add", "kinds": ["theorem"], "result_limit": 2},
        {"type_pattern": {"constants": ["List.lenght"]}},
    ],
)
def test_search_is_the_engine_answer(served: httpx.Client, sample_root: Path, filters: dict) -> None:
    response = served.post("/v1/declarations/search", json={"environment": "sample", **filters})
    assert response.status_code == 200
    assert SearchResponse.model_validate_json(response.content) == engine_search(sample_root, environment="sample", **filters)
    # Every result carries its links (the sample is built with source links, no doc pages).
    assert all(r["source_url"].endswith(".lean#L" + f"{r['range']['start']['line']}-L{r['range']['end']['line']}") and r["doc_url"] is None
               for r in response.json()["results"])


@pytest.mark.parametrize(
    ("query", "body"),
    [
        ([("name_contains", "add_comm"), ("namespace_prefixes", "Nat")], {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]}),
        ([("name_contains", "add"), ("name_contains", "comm")], {"name_contains": ["add", "comm"]}),
        ([("constant", "List.length"), ("constant", "HAppend.hAppend")], {"type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}}),
        ([("kinds", "theorem"), ("namespace_prefixes", "Nat"), ("result_limit", "2")], {"kinds": ["theorem"], "namespace_prefixes": ["Nat"], "result_limit": 2}),
        ([("flag", "instance"), ("flag", "unsafe=false")], {"flags": {"instance": True, "unsafe": False}}),
        ([("name_contains", "ADD_COMM"), ("case_sensitive", "false")], {"name_contains": "ADD_COMM", "case_sensitive": False}),
    ],
)
def test_search_by_query_parameters_answers_what_the_post_answers(served: httpx.Client, query: list, body: dict) -> None:
    got = served.get("/v1/declarations/search", params=[("environment", "SAMPLE"), *query])
    assert got.status_code == 200, got.text
    posted = served.post("/v1/declarations/search", json={"environment": "SAMPLE", **body})
    assert got.json() == posted.json() and got.json()["total_matches"] > 0


@pytest.mark.parametrize(
    "query",
    [
        [("environment", "SAMPLE")],
        [("environment", "SAMPLE"), ("name_contains", "a"), ("colour", "red")],
        [("environment", "SAMPLE"), ("name_contains", "a"), ("result_limit", "1"), ("result_limit", "2")],
        [("environment", "SAMPLE"), ("flag", "instance=maybe")],
        [("name_contains", "a")],
    ],
)
def test_search_by_query_parameters_refuses_bad_ones(served: httpx.Client, query: list) -> None:
    assert_error(served.get("/v1/declarations/search", params=query), ErrorCode.INVALID_REQUEST)


def test_search_cursor_pages_cover_the_whole_answer(served: httpx.Client) -> None:
    whole = served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a", "result_limit": 50}).json()
    assert whole["stop_reason"] == "EXHAUSTED"
    names, after = [], None
    while True:
        page = served.post(
            "/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a", "result_limit": 4, "after": after}
        ).json()
        names += [r["name"] for r in page["results"]]
        if page["stop_reason"] == "EXHAUSTED":
            break
        assert page["completeness"] == "PARTIAL" and page["next_cursor"]
        after = page["next_cursor"]
    assert names == [r["name"] for r in whole["results"]]
    assert len(names) == whole["total_matches"] > 4


def inspect_url(name: str, environment: str = "SAMPLE") -> str:
    return f"{declaration_path(name)}?environment={environment}"


def test_every_sample_name_round_trips_through_the_url(served: httpx.Client, sample_root: Path) -> None:
    names = sample_names()
    assert set(HARD_NAMES) <= set(names)
    for name in names:
        response = served.get(inspect_url(name))
        assert response.status_code == 200, (name, response.text)
        assert InspectResponse.model_validate_json(response.content) == engine_inspect(sample_root, "SAMPLE", name)
        assert response.json()["source_url"].startswith("https://github.com/leanprover/lean4/blob/"), name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
@example(name="search")  # the search route's own segment
@example(name=".")  # dot segments, which HTTP clients remove from paths
@example(name="..")
def test_any_name_reaches_the_engine_unchanged(served: httpx.Client, name: str) -> None:
    response = served.get(inspect_url(name))
    body = response.json()
    sent = "«search»" if name == "search" else name  # the same Lean name (see declaration_path)
    if response.status_code == 200:
        assert body["name"] in sample_names()
    elif body["error"]["code"] == "not_found":
        assert body["error"]["details"]["declaration_name"] == sent
    else:
        # A string that is not a Lean name at all: refused, quoting it exactly.
        assert body["error"]["code"] == "invalid_request", body
        assert body["error"]["details"]["value"] == sent


def test_invalid_requests_get_400(served: httpx.Client) -> None:
    details = assert_error(served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a", "result_limit": 0}), ErrorCode.INVALID_REQUEST)
    assert details["errors"][0]["loc"] == ["result_limit"]
    assert_error(served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a", "colour": "red"}), ErrorCode.INVALID_REQUEST)
    assert_error(served.post("/v1/declarations/search", content=b"{not json", headers={"content-type": "application/json"}), ErrorCode.INVALID_REQUEST)
    assert_error(served.post("/v1/declarations/search", json={"environment": "SAMPLE"}), ErrorCode.INVALID_REQUEST)
    assert_error(served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a", "after": "bogus"}), ErrorCode.INVALID_REQUEST)
    assert_error(served.get("/v1/declarations/Nat.add_comm"), ErrorCode.INVALID_REQUEST)
    assert_error(served.get("/v1/declarations/Nat.add_comm?environment=not%20a%20profile"), ErrorCode.INVALID_REQUEST)


def test_unknown_environment_and_name_get_404(served: httpx.Client) -> None:
    details = assert_error(served.post("/v1/declarations/search", json={"environment": "MATHLIB", "name_contains": "a"}), ErrorCode.UNKNOWN_ENVIRONMENT)
    assert details["known"] == ["SAMPLE"]
    details = assert_error(served.get(inspect_url("Nat.add_com")), ErrorCode.NOT_FOUND)
    assert "Nat.add_comm" in details["suggestions"]
    assert_error(served.get(inspect_url("Nat.add_comm", "MATHLIB")), ErrorCode.UNKNOWN_ENVIRONMENT)
    assert_error(served.get("/v2/nothing"), ErrorCode.NOT_FOUND)


def test_wrong_method_keeps_405_with_the_error_object(served: httpx.Client) -> None:
    response = served.delete("/v1/declarations/search")
    assert response.status_code == 405
    assert ErrorResponse.model_validate_json(response.content).error.code == "invalid_request"


def test_body_over_the_cap_gets_413(served: httpx.Client) -> None:
    big = {"environment": "SAMPLE", "name_contains": "a", "module_prefixes": ["M" * 1000] * 5}
    details = assert_error(served.post("/v1/declarations/search", json=big), ErrorCode.PAYLOAD_TOO_LARGE)
    assert details["max_bytes"] == BODY_CAP

    def chunks():  # no Content-Length: the cap applies while the body is read
        yield b'{"environment": "SAMPLE", "name_contains": "'
        for _ in range(10):
            yield b"a" * 1000
        yield b'"}'

    assert_error(served.post("/v1/declarations/search", content=chunks(), headers={"content-type": "application/json"}), ErrorCode.PAYLOAD_TOO_LARGE)
    # A body just under the cap is served.
    assert served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a" * 200}).status_code == 200


def test_metrics_count_requests_per_route_and_environment(served: httpx.Client) -> None:
    for _ in range(3):
        served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "Nat"})
    served.get(inspect_url("Nat.succ"))
    text = served.get("/metrics").text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    search_200 = ("leanindex_http_requests_total", (("environment", "SAMPLE"), ("method", "POST"), ("route", "/v1/declarations/search"), ("status", "200")))
    assert samples[search_200] >= 3
    inspect_count = ("leanindex_http_request_duration_seconds_count", (("environment", "SAMPLE"), ("method", "GET"), ("route", "/v1/declarations/{name}")))
    assert samples[inspect_count] >= 1
    assert samples[("leanindex_catalog_verified", (("environment", "SAMPLE"),))] == 1.0
    assert samples[("leanindex_engine_in_flight", ())] == 0.0


def test_metric_labels_name_served_profiles_only(served: httpx.Client) -> None:
    """A request is labelled with its environment's display id however it spelt it, and one
    naming no served profile (unknown, or not an id at all) with `-`: label sets stay bounded."""
    served.post("/v1/declarations/search", json={"environment": "sample", "name_contains": "Nat"})
    for environment in ("NOSUCH-1", "nosuch-2", "not an id"):
        served.post("/v1/declarations/search", json={"environment": environment, "name_contains": "Nat"})
        served.post("/v1/declarations/exists", json={"environment": environment, "names": ["Nat.succ"]})
    environments = {
        s.labels["environment"]
        for family in text_string_to_metric_families(served.get("/metrics").text)
        for s in family.samples
        if "environment" in s.labels
    }
    assert environments <= {"SAMPLE", "-"} and {"SAMPLE", "-"} <= environments, environments


def test_access_log_is_one_json_line_per_request(served: httpx.Client, caplog: pytest.LogCaptureFixture) -> None:
    from leanindex.service.logs import JsonLinesFormatter

    import json

    with caplog.at_level(logging.INFO, logger="leanindex.access"):
        response = served.post(
            "/v1/declarations/search", json={"environment": "sample", "name_contains": "zip"}, headers={"X-Request-Id": "req-42"}
        )
        # The server thread logs after the response is sent.
        deadline = time.monotonic() + 10
        while not any(getattr(r, "fields", {}).get("request_id") == "req-42" for r in caplog.records):
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert response.headers["x-request-id"] == "req-42"
    record = next(r for r in caplog.records if getattr(r, "fields", {}).get("request_id") == "req-42")
    line = json.loads(JsonLinesFormatter().format(record))
    assert {k: line[k] for k in ("request_id", "method", "route", "environment", "status")} == {
        "request_id": "req-42", "method": "POST", "route": "/v1/declarations/search", "environment": "SAMPLE", "status": 200,
    }
    assert line["duration_ms"] >= 0
    # Without a (well-formed) id the server makes one up.
    assert len(served.get("/healthz", headers={"X-Request-Id": "bad id!"}).headers["x-request-id"]) == 32


def test_cors_is_off_unless_configured(served: httpx.Client, sample_root: Path) -> None:
    origin = {"Origin": "http://notebook.example"}
    assert "access-control-allow-origin" not in served.get("/healthz", headers=origin).headers
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(cors_origins=("http://notebook.example",)))) as url:
        allowed = httpx.get(f"{url}/healthz", headers=origin)
        assert allowed.headers["access-control-allow-origin"] == "http://notebook.example"
        other = httpx.get(f"{url}/healthz", headers={"Origin": "http://elsewhere.example"})
        assert "access-control-allow-origin" not in other.headers
    engine.close()


def test_token_is_required_everywhere_but_healthz(sample_root: Path) -> None:
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(token="s3cret"))) as url:
        assert httpx.get(f"{url}/healthz").status_code == 200
        for method, path in [("GET", "/v1/environments"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/openapi.json"),
                             ("POST", "/v1/declarations/search"), ("GET", inspect_url("Nat.succ")), ("POST", "/mcp")]:
            missing = httpx.request(method, url + path)
            assert_error(missing, ErrorCode.UNAUTHORIZED)
            assert missing.headers["www-authenticate"] == "Bearer"
            assert_error(httpx.request(method, url + path, headers={"Authorization": "Bearer wrong"}), ErrorCode.UNAUTHORIZED)
        good = {"Authorization": "Bearer s3cret"}
        assert httpx.get(f"{url}/v1/environments", headers=good).status_code == 200
        assert httpx.get(url + inspect_url("Nat.succ"), headers=good).status_code == 200
    engine.close()


def _wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting until {what}")
        time.sleep(0.01)


def test_busy_is_immediate_429_not_a_queue(sample_root: Path) -> None:
    engine = GatedEngine(sample_root)
    app = create_app(engine, ServiceConfig(max_concurrent=1, time_budget_s=60))
    with live_server(app) as url:
        held: list[httpx.Response] = []
        first = threading.Thread(target=lambda: held.append(httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "Nat"}, timeout=60)))
        first.start()
        assert engine.entered.wait(30)
        details = assert_error(httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "List"}), ErrorCode.BUSY)
        assert details["max_concurrent"] == 1
        assert_error(httpx.get(url + inspect_url("Nat.succ")), ErrorCode.BUSY)
        engine.release.set()
        first.join(30)
        assert held[0].status_code == 200
        _wait_until(lambda: app.state.gate.in_flight == 0, "the slot is free")
        assert httpx.get(url + inspect_url("Nat.succ")).status_code == 200
    engine.close()


def test_time_budget_gives_504_and_the_slot_stays_taken_until_the_work_ends(sample_root: Path) -> None:
    engine = GatedEngine(sample_root)
    app = create_app(engine, ServiceConfig(max_concurrent=1, time_budget_s=0.2))
    with live_server(app) as url:
        details = assert_error(httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "Nat"}), ErrorCode.TIMEOUT)
        assert details["time_budget_s"] == 0.2
        # The timed-out search still runs in its thread, so it still holds the only slot.
        assert_error(httpx.get(url + inspect_url("Nat.succ")), ErrorCode.BUSY)
        engine.release.set()
        _wait_until(lambda: app.state.gate.in_flight == 0, "the abandoned search ended")
        assert httpx.get(url + inspect_url("Nat.succ")).status_code == 200
    engine.close()


def test_broken_catalog_fails_closed_with_503(tmp_path: Path) -> None:
    root = build_sample(tmp_path)
    parquet = root / "catalog" / "sample" / "declarations.parquet"
    damaged = parquet.read_bytes()
    parquet.unlink()  # a fresh inode, so the engine notices the change
    parquet.write_bytes(damaged[:-1] + bytes([damaged[-1] ^ 1]))
    engine = Engine(root)
    with live_server(create_app(engine)) as url:
        details = assert_error(httpx.get(f"{url}/readyz"), ErrorCode.CATALOG_UNAVAILABLE)
        assert details["unverified"] == ["SAMPLE"]
        assert_error(httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a"}), ErrorCode.DIGEST_MISMATCH)
        listed = httpx.get(f"{url}/v1/environments").json()["environments"]
        assert [(e["environment"], e["verified"]) for e in listed] == [("SAMPLE", False)]
        assert 'leanindex_catalog_verified{environment="SAMPLE"} 0.0' in httpx.get(f"{url}/metrics").text
        # Repaired in place: the next call verifies again and serves.
        parquet.unlink()
        parquet.write_bytes(damaged)
        assert httpx.get(f"{url}/readyz").status_code == 200
    engine.close()
    shutil.rmtree(root)


def test_no_profile_is_not_ready(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    with live_server(create_app(engine)) as url:
        assert_error(httpx.get(f"{url}/readyz"), ErrorCode.CATALOG_UNAVAILABLE)
        assert httpx.get(f"{url}/v1/environments").json() == {"environments": []}
    engine.close()


def test_every_tool_has_its_http_route(tmp_path: Path) -> None:
    """Each tool of the one tool list is also an HTTP route (a tool added to
    `service.tools.server_tools` without its route fails here)."""
    app = create_app(Engine(tmp_path))
    routes = {f"{method} {route.path.replace(':leanname', '')}" for route in app.routes for method in getattr(route, "methods", None) or ()}
    assert {spec.http_route for spec in app.state.tools.values()} <= routes
