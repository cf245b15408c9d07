"""Every field an exported schema lists says what it is, and the error codes are an enum there.

The documents are produced by `leanindex.api_files` (the generators, not the files on disk, so
a model change is caught before `leanindex api export` runs). A property is a field of a model
when it sits in an object schema (`"type": "object"`); the `anyOf` entries that only restate
"this field is not null" (`models.one_of_required`) are constraints, not fields. The MCP tools'
input and output schemas are compacted on purpose (`service.mcp.compact_schema` and
`compact_output_schema` drop descriptions to spare agents' context); the same models are
described in `models.schema.json` and `openapi.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from leanindex.api_files import API_FILES
from leanindex.checker.batch import result_of
from leanindex.checker.models import BatchResult
from leanindex.errors import ErrorBody, ErrorCode, ErrorResponse, LeanIndexError


def documents() -> Iterator[tuple[str, Any]]:
    """Each `api/` JSON document as the code produces it, MCP tool schemas left out (see above)."""
    for name, produce in API_FILES.items():
        if not name.endswith(".json"):
            continue  # the Markdown table of tools
        document = json.loads(produce())
        if name == "mcp-tools.json":
            for tool in document["tools"]:
                del tool["inputSchema"], tool["outputSchema"]
        yield name, document


def undescribed(node: Any, pointer: str) -> Iterator[str]:
    """JSON pointers of the properties of object schemas under `node` without a description."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if node.get("type") == "object" and isinstance(properties, dict):
            for name, value in properties.items():
                if not (isinstance(value, dict) and isinstance(value.get("description"), str) and value["description"].strip()):
                    yield f"{pointer}/properties/{name}"
        for key, value in node.items():
            yield from undescribed(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from undescribed(value, f"{pointer}/{index}")


def error_body_schemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every `ErrorBody` definition under `node` (`$defs` or OpenAPI components)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "ErrorBody" and isinstance(value, dict) and "properties" in value:
                yield value
            else:
                yield from error_body_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from error_body_schemas(value)


def test_every_exported_property_has_a_description() -> None:
    missing = [f"{name}#{pointer}" for name, document in documents() for pointer in undescribed(document, "")]
    assert not missing, f"{len(missing)} properties without a description:\n" + "\n".join(missing)


def test_every_openapi_parameter_has_a_description() -> None:
    openapi = json.loads(API_FILES["openapi.json"]())
    missing = [
        f"{method.upper()} {path} {parameter['name']}"
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", [])
        if not parameter.get("description")
    ]
    assert not missing, "parameters without a description: " + ", ".join(missing)


def test_the_error_code_enum_is_every_error_code() -> None:
    found = {name: list(error_body_schemas(document)) for name, document in documents()}
    assert found["models.schema.json"] and found["openapi.json"]
    for name, bodies in found.items():
        for body in bodies:
            code = body["properties"]["code"]
            assert code["type"] == "string", name
            assert set(code["enum"]) == set(ErrorCode), name


@pytest.mark.parametrize("code", list(ErrorCode))
def test_error_bodies_of_every_code_read_back_as_plain_strings(code: ErrorCode) -> None:
    body = LeanIndexError(code, "m", {"k": 1}).body()
    wire = ErrorResponse(error=body).model_dump_json()
    assert json.loads(wire)["error"]["code"] == code.value
    back = ErrorResponse.model_validate_json(wire).error
    assert back == body and type(back.code) is str
    # A stored batch result (a `check-batch` output line, a Ray actor's answer) reads back too.
    result = result_of("item-1", LeanIndexError(code, "m", {}))
    assert BatchResult.model_validate_json(result.model_dump_json()) == result


def test_an_error_body_with_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValidationError, match="not a valid ErrorCode"):
        ErrorBody.model_validate_json('{"code": "made_up", "message": "m", "details": {}}')
