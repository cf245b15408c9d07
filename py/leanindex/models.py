"""Request and response models of the public surfaces, defined once.

The query engine takes and returns these; the CLI, the HTTP API and the MCP tools validate
with them and serialise them unchanged. `api/` holds their JSON Schemas (see
`leanindex.api_files`), and a test fails when the files and these models disagree.
"""

from __future__ import annotations

import re
from copy import copy
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, create_model, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .base import Frozen
from .errors import ErrorBody, ErrorCode, ErrorResponse, LeanIndexError  # noqa: F401  (ErrorResponse: one of the public models, defined beside the errors)
from .records import FLAG_FIELDS, DeclarationRecord, Kind, SourceRange

PROFILE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
"""A profile id: 1-64 ASCII letters, digits, `_` and `-`, starting with a letter or digit;
case-insensitive (stored lower case, shown upper case)."""

ProfileId = Annotated[
    str,
    StringConstraints(pattern=PROFILE_ID_PATTERN),
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


def normalize_profile(profile: str) -> str:
    """The canonical (lower-case) profile id used for file names; ids are case-insensitive.

    Raises `LeanIndexError(invalid_request)` for an id that does not match
    `PROFILE_ID_PATTERN`.
    """
    if not profile.isascii() or not re.fullmatch(PROFILE_ID_PATTERN, profile):
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"invalid profile id {profile!r}: use letters, digits, '_' and '-' (at most 64)",
            {"profile": profile},
        )
    return profile.lower()


def display_profile(profile: str) -> str:
    """A profile id as answers and messages show it: upper case (`core` -> `CORE`)."""
    return profile.upper()


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


class EnvironmentIdentity(Frozen):
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

    @classmethod
    def unpinned(cls, profile: str, digest: str) -> EnvironmentIdentity:
        """The identity of `profile` when no verified manifest pins it: the id and `digest`,
        every revision null (`catalog.manifest.environment_identity` builds the pinned one)."""
        return cls(environment=display_profile(profile), environment_digest=digest, lean_version=None, lean_commit=None, mathlib_commit=None)


class TypePattern(Frozen):
    """Constants that must all occur in a declaration's elaborated type (exact names, no
    unification and no notation matching)."""

    constants: Annotated[list[DeclarationName], Field(min_length=1, max_length=8)]


class SearchRequest(Frozen):
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


class MatchReason(Frozen):
    """Which filter matched what: `filter` is the request field, `value` the matched value."""

    filter: Literal["name_contains", "type_constant", "namespace_prefix", "kind", "module_prefix"]
    value: str


class SearchResult(Frozen):
    """One visible declaration that matched every filter."""

    name: str
    kind: Kind
    type: str
    namespace: str | None = Field(description="The name without its last component; null at the root.")
    module: str | None
    range: SourceRange | None
    match_reasons: list[MatchReason]


class UnknownConstant(Frozen):
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


class InspectRequest(Frozen):
    """An exact look-up (`lean.declaration.inspect`, `GET /v1/declarations/{name}`)."""

    environment: ProfileId
    declaration_name: DeclarationName


def _record_field(name: str) -> tuple[Any, FieldInfo]:
    """A record field as a response field: same type, and always present in an answer."""
    field = copy(DeclarationRecord.model_fields[name])
    field.default = PydanticUndefined
    return field.annotation, field


DeclarationFlags = create_model(
    "DeclarationFlags",
    __base__=Frozen,
    __module__=__name__,
    __doc__="The record's flags (see `leanindex.records.DeclarationRecord`).",
    **{flag: (bool, ...) for flag in FLAG_FIELDS},
)

#: The record fields an inspect answer carries as they are (all but the line type and the flags).
INSPECT_RECORD_FIELDS: tuple[str, ...] = tuple(
    name for name in DeclarationRecord.model_fields if name != "record" and name not in FLAG_FIELDS
)

_NAMESPACE = (str | None, Field(description="The name without its last component; null at the root."))

# Derived from the record so that a new record field reaches inspect answers without a second
# definition; `namespace` follows `type` and the flags come last.
InspectResponse = create_model(
    "InspectResponse",
    __base__=EnvironmentIdentity,
    __module__=__name__,
    __doc__="Everything the catalog holds about one declaration: the record's fields, its namespace "
    "(the name without its last component; null at the root) and its flags.",
    **{
        field: spec
        for name in INSPECT_RECORD_FIELDS
        for field, spec in (
            [(name, _record_field(name)), ("namespace", _NAMESPACE)] if name == "type" else [(name, _record_field(name))]
        )
    },
    flags=(DeclarationFlags, ...),
)


def inspect_details(response: Any) -> list[str]:
    """The optional parts of an `InspectResponse` worth showing people, one line each: the flags
    that are set, the universe parameters, the type constants (empty ones left out)."""
    flags = [name for name, value in response.flags.model_dump().items() if value]
    return [
        f"{label} {', '.join(values)}"
        for label, values in (("flags", flags), ("universes", response.level_params), ("type constants", response.type_constants))
        if values
    ]


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


class EnvironmentsResponse(Frozen):
    """Every profile found under the served root."""

    environments: list[EnvironmentSummary]
