"""Request and response models of the public surfaces, defined once.

The query engine takes and returns these; the CLI, the HTTP API and the MCP tools validate
with them and serialise them unchanged. `api/` holds their JSON Schemas (see
`leanindex.api_files`), and a test fails when the files and these models disagree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from .records import Kind, SourceRange

ProfileId = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"),
    Field(description="Profile id such as CORE or MATHLIB; case-insensitive."),
]
#: What `names.parse_name` reads (the engine refuses any other name with `invalid_request`), as
#: a JSON Schema pattern: dot-separated components, each `«...»` (no `»` inside), a number
#: without a leading zero, or text without `.`, `«` and `»` that is not all ASCII digits.
_COMPONENT = r"(?:«[^»]*»|0|[1-9][0-9]*|[0-9]*[^.«»0-9][^.«»]*)"
NAME_PATTERN = rf"^{_COMPONENT}(?:\.{_COMPONENT})*$"

DeclarationName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1024),
    # In the schema only: the engine's parser enforces it with a message naming the fault.
    Field(
        description="A full Lean name as Lean prints it, e.g. `Nat.add_comm` or `Foo.«bar baz»`.",
        json_schema_extra={"pattern": NAME_PATTERN},
    ),
]
ModuleName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1024),
    Field(description="A module name, e.g. `Mathlib.Analysis`."),
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StopReason(StrEnum):
    """Why a scan stopped: `RESULT_LIMIT` (more matches exist) or `EXHAUSTED` (catalog scanned)."""

    RESULT_LIMIT = "RESULT_LIMIT"
    EXHAUSTED = "EXHAUSTED"


class Completeness(StrEnum):
    """`COMPLETE` when every match after the cursor was returned, `PARTIAL` otherwise."""

    COMPLETE = "COMPLETE"
    PARTIAL = "PARTIAL"


class Assurance(StrEnum):
    """How the answer was obtained: `COMPUTED` is an exact scan of the verified catalog."""

    COMPUTED = "COMPUTED"


class EnvironmentIdentity(_Model):
    """Which environment answered: profile id, manifest digest, Lean and Mathlib revisions, and
    where the catalog's records come from, with the record fields that source only
    approximates (from the manifest's `source`; e.g. doc-gen4 data lists no instance arguments
    among a type's constants, so a type-constant search there can miss declarations)."""

    environment: str = Field(description="Profile id, upper case (e.g. CORE).")
    environment_digest: str = Field(description="sha256 of the manifest's identity fields.")
    lean_version: str | None
    lean_commit: str | None
    mathlib_commit: str | None
    source: str | None = Field(default=None, description="`lean` (the extractor), `doc-gen4` or `stream`.")
    approximate_fields: list[str] = Field(default_factory=list, description="Record fields this source only approximates.")


class TypePattern(_Model):
    """Constants that must all occur in a declaration's elaborated type (exact names, no
    unification and no notation matching)."""

    constants: Annotated[list[DeclarationName], Field(min_length=1, max_length=8)]


class SearchRequest(_Model):
    """A bounded search (`lean.declaration.search`, `POST /v1/declarations/search`).

    At least one of `name_contains` and `type_pattern` is required (stated in the JSON Schema
    as `anyOf`; the engine refuses a request without either); all given filters must hold.
    `after` is the `next_cursor` of a previous response with the same filters.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["name_contains"], "properties": {"name_contains": {"type": "string"}}},
                {"required": ["type_pattern"], "properties": {"type_pattern": {"type": "object"}}},
            ]
        }
    )

    environment: ProfileId
    name_contains: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = Field(
        default=None,
        description="Case-sensitive substring of the printed name.",
        # In the schema only: `_no_nul` enforces it with its own message.
        json_schema_extra={"pattern": "^[^\\u0000]*$"},
    )
    type_pattern: TypePattern | None = None
    namespace_prefixes: Annotated[list[DeclarationName], Field(min_length=1, max_length=16)] | None = Field(
        default=None,
        description="A name matches when one prefix's components are a proper leading part of its components.",
    )
    kinds: Annotated[list[Kind], Field(min_length=1, max_length=8)] | None = None
    module_prefixes: Annotated[list[ModuleName], Field(min_length=1, max_length=16)] | None = Field(
        default=None, description="A module matches when it equals a prefix or lies under one."
    )
    result_limit: Annotated[int, Field(ge=1, le=50)] = 10
    after: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None

    @field_validator("name_contains")
    @classmethod
    def _no_nul(cls, v: str | None) -> str | None:
        if v is not None and "\x00" in v:
            raise ValueError("name_contains must not contain NUL")
        return v


class MatchReason(_Model):
    """Which filter matched what: `filter` is the request field, `value` the matched value."""

    filter: Literal["name_contains", "type_constant", "namespace_prefix", "kind", "module_prefix"]
    value: str


class SearchResult(_Model):
    """One visible declaration that matched every filter."""

    name: str
    kind: Kind
    type: str
    namespace: str | None = Field(description="The name without its last component; null at the root.")
    module: str | None
    range: SourceRange | None
    match_reasons: list[MatchReason]


class UnknownConstant(_Model):
    """A type-pattern constant that no declaration type mentions, with close known names."""

    name: str
    suggestions: list[str]


class SearchResponse(EnvironmentIdentity):
    """The answer to a search, with an honest completeness signal.

    `stop_reason` is `RESULT_LIMIT` only when at least one more match exists beyond the page
    (then `completeness` is `PARTIAL` and `next_cursor` continues the scan); otherwise
    `EXHAUSTED`/`COMPLETE`. `total_matches` is the exact number of visible declarations matching
    all filters, whatever the limit or cursor; `hidden_matches` counts private and internal
    declarations that matched and were left out.
    """

    results: list[SearchResult]
    stop_reason: StopReason
    completeness: Completeness
    assurance: Assurance
    next_cursor: str | None
    total_matches: int
    hidden_matches: int
    unknown_constants: list[UnknownConstant]

    def to_arrow(self) -> Any:
        """The results as a `pyarrow.Table` (one row per result; `match_reasons` as text)."""
        import pyarrow as pa

        return pa.Table.from_pylist([_flat_result(r) for r in self.results], schema=_RESULT_SCHEMA())

    def to_pandas(self) -> Any:
        """The results as a `pandas.DataFrame`, with the completeness signal and environment in
        `DataFrame.attrs` (`stop_reason`, `completeness`, `total_matches`, `hidden_matches`,
        `next_cursor`, `environment`, `environment_digest`). Needs pandas
        (`pip install 'leanindex[pandas]'`); raises `ImportError` saying so otherwise."""
        try:
            import pandas  # noqa: F401  (pyarrow's conversion needs it)
        except ImportError as error:
            raise ImportError("to_pandas() needs pandas: pip install 'leanindex[pandas]'") from error
        frame = self.to_arrow().to_pandas()
        frame.attrs.update(
            self.model_dump(
                mode="json",
                include={"stop_reason", "completeness", "total_matches", "hidden_matches", "next_cursor", "environment", "environment_digest"},
            )
        )
        return frame


def _RESULT_SCHEMA() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("name", pa.string()),
            ("kind", pa.string()),
            ("type", pa.string()),
            ("namespace", pa.string()),
            ("module", pa.string()),
            ("start_line", pa.int32()),
            ("end_line", pa.int32()),
            ("match_reasons", pa.string()),
        ]
    )


def _flat_result(r: SearchResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "kind": r.kind.value,
        "type": r.type,
        "namespace": r.namespace,
        "module": r.module,
        "start_line": r.range.start.line if r.range else None,
        "end_line": r.range.end.line if r.range else None,
        "match_reasons": "; ".join(f"{m.filter}={m.value}" for m in r.match_reasons),
    }


class InspectRequest(_Model):
    """An exact look-up (`lean.declaration.inspect`, `GET /v1/declarations/{name}`)."""

    environment: ProfileId
    declaration_name: DeclarationName


class DeclarationFlags(_Model):
    """The record's flags (see `leanindex.records.DeclarationRecord`)."""

    is_private: bool
    is_internal: bool
    is_instance: bool
    is_class: bool
    is_structure: bool
    is_unsafe: bool
    is_deprecated: bool
    type_fallback: bool


class InspectResponse(EnvironmentIdentity):
    """Everything the catalog holds about one declaration."""

    name: str
    components: list[str | int]
    kind: Kind
    type: str
    namespace: str | None
    module: str | None
    range: SourceRange | None
    doc: str | None
    level_params: list[str]
    type_constants: list[str]
    value_constants: list[str] | None
    flags: DeclarationFlags


class ErrorBody(_Model):
    """The shared error object (see `leanindex.errors`)."""

    code: str
    message: str
    details: dict[str, Any]


class ErrorResponse(_Model):
    """`{"error": {...}}`, the shape of every error on every surface."""

    error: ErrorBody


class EnvironmentSummary(EnvironmentIdentity):
    """A served profile: identity, imports, declaration counts and verification state.

    A profile whose catalog fails verification is listed with `verified: false`, the error
    that keeps it from serving in `problem`, and no counts (it cannot vouch for them).
    """

    imports: list[str]
    declaration_count: int | None
    visible_count: int | None
    verified: bool
    problem: ErrorBody | None = None


class EnvironmentsResponse(_Model):
    """Every profile found under the served root."""

    environments: list[EnvironmentSummary]
