"""A bounded property-based fuzz run of the HTTP API from its own OpenAPI document
(schemathesis): for generated valid and invalid requests to every operation, no 5xx, and every
response (status, content type, body) conforms to the document."""

from __future__ import annotations

from pathlib import Path

import json
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from service_support import live_server, sample_root  # noqa: F401  (fixture)

from leanindex.api_files import openapi_document
from leanindex.engine import Engine
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app


@pytest.fixture(scope="module")
def served_url(sample_root: Path):
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(max_body_bytes=65536))) as url:
        yield url
    engine.close()


# The document as the code generates it (`api/openapi.json` is the same text; a test checks it).
schema = schemathesis.openapi.from_dict(json.loads(openapi_document()))
# A body over the server's cap is refused with 413 before its fields are read: for invalid data
# (e.g. a field longer than its schema allows, and so longer than the cap) that is a rejection.
_negative = schema.config.checks.negative_data_rejection
_negative.expected_statuses = [*_negative.expected_statuses, "413"]


@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_openapi_document(case: schemathesis.Case, served_url: str) -> None:
    case.call_and_validate(
        base_url=served_url,
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance, negative_data_rejection]
    )
