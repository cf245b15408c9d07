"""The search page never answers 500 to a query parameter: each value it reads (`env`, `q`,
`text`, `order`, `limit`, `after`, `start`, `ns`, `kind`, `mod`, `c` on `/`; `env` and the name
on `/d/`) is either used, or refused with the page and a clear `invalid_request` (400) or
another coded error. Properties over arbitrary values through the app's `TestClient` (which
raises any server exception), bounded example counts, no timing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from leanindex.engine import Engine
from leanindex.service.http import create_app
from service_support import sample_root  # noqa: F401  (fixture)

SEARCH_PARAMS = ("env", "q", "text", "order", "limit", "after", "start", "ns", "kind", "mod", "c")
PAGE_STATUSES = {200, 400, 404}
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

values = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"[0-9²³¹٠-٩０-９]{1,12}", fullmatch=True),  # digits of every script
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["SAMPLE", "add", "Nat", "theorem", "name", "relevance", "0", "20", " 7 ", "1e3", "0x10", "+5", "-1"]),
)


@pytest.fixture(scope="module")
def client(sample_root: Path) -> Iterator[TestClient]:  # noqa: F811
    engine = Engine(sample_root)
    try:
        yield TestClient(create_app(engine), base_url="http://127.0.0.1")
    finally:
        engine.close()


def _answered(response: object) -> None:
    assert response.status_code in PAGE_STATUSES, (response.status_code, response.text[:500])  # type: ignore[attr-defined]
    assert response.headers["content-type"].startswith("text/html")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "value",
    ["²", "³", "٣", "１０", "1" * 5000, "9" * 4301, "-1", "1.5", "1e3", "\x00", "+5", "010"],
    ids=lambda value: repr(value)[:20],
)
@pytest.mark.parametrize("field", ["limit", "start"])
def test_a_number_that_is_not_plain_digits_is_a_clear_400(client: TestClient, field: str, value: str) -> None:
    response = client.get("/", params={"env": "SAMPLE", "q": "add", field: value})
    assert response.status_code == 400, response.text[:300]
    assert "invalid_request" in response.text and f"query parameter {field!r}: write a whole number" in response.text.replace("&#39;", "'")


def test_plain_numbers_still_work(client: TestClient) -> None:
    response = client.get("/", params={"env": "SAMPLE", "q": "add", "limit": "3", "start": "20"})
    assert response.status_code == 200 and "21–23 of" in response.text


@pytest.mark.parametrize("field", SEARCH_PARAMS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
@example(value="²")  # the campaign's findings, always tried
@example(value="1" * 5000)
def test_any_value_of_each_search_parameter_gets_a_page(client: TestClient, field: str, value: str) -> None:
    base = {"env": "SAMPLE", "q": "add"}
    _answered(client.get("/", params={**base, field: value}))


@EXAMPLES
@given(pairs=st.lists(st.tuples(st.sampled_from(SEARCH_PARAMS), values), max_size=6))
def test_any_mix_of_repeated_parameters_gets_a_page(client: TestClient, pairs: list[tuple[str, str]]) -> None:
    _answered(client.get("/", params=pairs))


@EXAMPLES
@given(raw=st.text(alphabet=st.characters(codec="ascii", exclude_characters="#"), max_size=60))
def test_any_raw_query_string_gets_a_page(client: TestClient, raw: str) -> None:
    # Raw bytes of the query (bad percent escapes, `;`, bare keys...), made a valid request target.
    _answered(client.get("/?" + quote(raw, safe="=&%;+")))


@EXAMPLES
@given(name=st.text(min_size=1, max_size=30), env=values)
def test_any_declaration_page_gets_a_page(client: TestClient, name: str, env: str) -> None:
    response = client.get("/d/" + quote(name, safe=""), params={"env": env})
    _answered(response)


def test_an_empty_number_field_is_the_default(client: TestClient) -> None:
    response = client.get("/", params={"env": "SAMPLE", "q": "add", "limit": " ", "start": ""})
    assert response.status_code == 200 and re.search(r'id="completeness">1–\d+ of', response.text)


def test_an_extra_parameter_named_like_an_argument_gets_its_next_page(client: TestClient) -> None:
    """Unknown query keys are passed on to the next page's link; one named `environment` once
    collided with the link builder's own argument (HTTP 500 whenever a next page existed)."""
    answer = client.get("/", params={"q": "a", "limit": "1", "environment": "Z"})
    assert answer.status_code == 200
    assert "after=" in answer.text
