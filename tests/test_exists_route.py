"""`GET /v1/declarations/{name}` inspects one declaration; a GET of a batch tool's route with that
tool's parameters (`/v1/declarations/exists?names=...`) is not read as a look-up of a declaration
named `exists`: it is refused as `invalid_request` naming the tool's POST route. Driven with
httpx on a live loopback server, as tests/test_service_http.py does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_support import live_server, sample_root  # noqa: F401  (fixture)

from leanindex.engine import Engine
from leanindex.errors import HTTP_STATUS, ErrorCode
from leanindex.models import ErrorResponse, ExistsResponse
from leanindex.service.http import create_app


@pytest.fixture(scope="module")
def served(sample_root: Path) -> Iterator[httpx.Client]:  # noqa: F811  (the fixture above)
    engine = Engine(sample_root)
    try:
        with live_server(create_app(engine)) as url, httpx.Client(base_url=url, timeout=30) as http:
            yield http
    finally:
        engine.close()


def _error(response: httpx.Response, code: ErrorCode) -> dict:
    body = ErrorResponse.model_validate_json(response.content)
    assert body.error.code == code.value and response.status_code == HTTP_STATUS[code], response.text
    return {"message": body.error.message, **body.error.details}


@pytest.mark.parametrize(
    ("path", "tool"),
    [("/v1/declarations/exists", "lean.declaration.exists"), ("/v1/declarations/inspect_many", "lean.declaration.inspect_many")],
)
def test_a_get_of_a_batch_route_points_to_its_post_route(served: httpx.Client, path: str, tool: str) -> None:
    for params in ({"environment": "SAMPLE", "names": ["Nat.add_comm", "Nat.nothing"]}, {"names": "Nat.add_comm"}):
        details = _error(served.get(path, params=params), ErrorCode.INVALID_REQUEST)
        assert details["tool"] == tool and details["route"] == f"POST {path}" and details["field"] == "names"
        assert f"POST {path}" in details["message"] and "{environment, names}" in details["message"]


def test_the_post_route_answers_the_same_names(served: httpx.Client) -> None:
    answer = served.post("/v1/declarations/exists", json={"environment": "SAMPLE", "names": ["Nat.add_comm", "Nat.nothing"]})
    assert answer.status_code == 200
    assert [r.exists for r in ExistsResponse.model_validate_json(answer.content).results] == [True, False]


def test_with_environment_only_it_is_still_an_inspect(served: httpx.Client) -> None:
    # A declaration may be named `exists`: with the route's one parameter, it is looked up.
    details = _error(served.get("/v1/declarations/exists", params={"environment": "SAMPLE"}), ErrorCode.NOT_FOUND)
    assert details["declaration_name"] == "exists"
    assert served.get("/v1/declarations/Nat.add_comm", params={"environment": "SAMPLE"}).json()["name"] == "Nat.add_comm"


def test_another_name_keeps_the_close_parameter_names(served: httpx.Client) -> None:
    details = _error(served.get("/v1/declarations/Nat.add_comm", params={"env": "SAMPLE"}), ErrorCode.INVALID_REQUEST)
    assert details["field"] == "env" and details["suggestions"] == ["environment"] and "tool" not in details
