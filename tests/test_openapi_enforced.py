"""The OpenAPI document states what the server enforces (issue 10, item 7; schemathesis ST202).

Schemathesis generates schema-valid requests for search and inspect (positive mode only) and
the server must accept each one, except for what no schema can know: an environment or a
declaration that does not exist here (404), and an `after` cursor that this catalog did not
issue (400 naming the field `after`). Before the document said so, a schema-valid search with
no name or type filter, and a schema-valid declaration name that Lean cannot print (`a..b`),
were refused with 400: ST202 "schema-valid request rejected".

The name pattern is also checked against the parser the server uses (`names.parse_name`), on
generated strings, as an oracle.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.core.failures import Failure

from leanindex.api_files import openapi_document
from leanindex.engine import Engine
from leanindex.models import NAME_PATTERN, NOT_FILTERS
from leanindex.names import NameSyntaxError, parse_name
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from service_support import live_server, sample_root  # noqa: F401  (fixture)

schema = schemathesis.openapi.from_dict(json.loads(openapi_document())).include(
    operation_id=["searchDeclarations", "inspectDeclaration"]
)


class SchemaValidRejected(Failure):
    """A schema-valid request refused for a reason the schema could have stated."""

    code = "ST202"

    def __init__(self, status: int, body: str):
        super().__init__(operation="", title="Schema-valid request rejected", message=f"{status}: {body[:300]}")


@pytest.fixture(scope="module")
def served_url(sample_root: Path):  # noqa: F811
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(max_body_bytes=65536))) as url:
        yield url
    engine.close()


def accepted_unless_unknowable(ctx, response, case) -> None:
    """Positive cases: 200, 404 (unknown environment or declaration), a 400 about `after` (a
    cursor of another query) or `text` (no word left once stop words and symbols are dropped:
    the tokenizer's rule, not the schema's), or 409 `not_recorded` (a filter needing data the
    catalog lacks)."""
    if response.status_code in (200, 404):
        return None
    error = response.json().get("error", {}) if "json" in str(response.headers.get("content-type", "")) else {}
    if response.status_code == 400 and error.get("details", {}).get("field") in ("after", "text"):
        return None
    # A filter that needs data this catalog does not record (conclusions, value constants).
    if response.status_code == 409 and error.get("code") == "not_recorded":
        return None
    raise SchemaValidRejected(response.status_code, response.text)


@schema.parametrize()
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_schema_valid_requests_are_accepted(case: schemathesis.Case, served_url: str) -> None:
    if case.meta is not None and not case.meta.generation.mode.is_positive:
        return
    # The served environment, so that the generated filters and names reach the engine's rules.
    if isinstance(case.body, dict):
        case.body["environment"] = "SAMPLE"
    if isinstance(case.query, dict):
        case.query["environment"] = "SAMPLE"
    response = case.call(base_url=served_url)
    accepted_unless_unknowable(None, response, case)


name_alphabet = st.sampled_from(list("ab0129._«» ′"))


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=name_alphabet, min_size=1, max_size=12))
def test_the_name_pattern_agrees_with_the_parser(text: str) -> None:
    try:
        parse_name(text)
        parsed = True
    except NameSyntaxError:
        parsed = False
    assert (re.fullmatch(NAME_PATTERN, text) is not None) == parsed, text


def test_the_document_states_both_rules() -> None:
    document = json.loads(openapi_document())
    search = document["components"]["schemas"]["SearchRequest"]
    required = [alternative["required"] for alternative in search["anyOf"]]
    filters = {name for name in search["properties"] if name not in NOT_FILTERS}
    assert sorted(required) == sorted([name] for name in filters) and len(filters) == 9
    inspect = document["paths"]["/v1/declarations/{name}"]["get"]["parameters"]
    (name,) = [p for p in inspect if p["name"] == "name"]
    assert name["schema"]["pattern"] == NAME_PATTERN and name["schema"]["maxLength"] == 1024
