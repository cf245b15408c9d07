"""Request and response models of the public surfaces, defined once.

The query engine takes and returns these; the CLI, the HTTP API and the MCP tools validate
with them and serialise them unchanged. `api/` holds their JSON Schemas (see
`leanindex.api_files`), and a test fails when the files and these models disagree.
"""

from __future__ import annotations

import re
from copy import copy
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import ConfigDict, Field, StringConstraints, create_model, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .base import Frozen
from .errors import ErrorBody, ErrorCode, ErrorResponse, LeanIndexError  # noqa: F401  (ErrorResponse: one of the public models, defined beside the errors)
from .identity import (  # noqa: F401  (re-exported: part of the public models)
    PROFILE_ID_PATTERN,
    EnvironmentIdentity,
    ProfileId,
    display_profile,
    normalize_profile,
)
from .names import NameSyntaxError, format_name, parse_name
from .records import FLAG_FIELDS, SEARCH_RESULT_FIELDS, DeclarationRecord, Kind, SourceRange, record_fields
from .validation import unknown_name_error

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
#: A module name's components are text, never numbers (the same grammar otherwise).
_TEXT_COMPONENT = r"(?:«[^»]*»|[0-9]*[^.«»0-9][^.«»]*)"
MODULE_PATTERN = rf"^{_TEXT_COMPONENT}(?:\.{_TEXT_COMPONENT})*$"

ModuleName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1024),
    # In the schema only: `SearchRequest` checks it with `names.parse_name`, naming the fault.
    Field(description="A module name, e.g. `Mathlib.Analysis`.", json_schema_extra={"pattern": MODULE_PATTERN}),
]


class StopReason(StrEnum):
    """Why a scan stopped: `RESULT_LIMIT` (more matches exist) or `EXHAUSTED` (catalog scanned)."""

    RESULT_LIMIT = "RESULT_LIMIT"
    EXHAUSTED = "EXHAUSTED"


class Completeness(StrEnum):
    """`COMPLETE` when every match after the cursor was returned and no module the search could
    reach is missing from the catalog (`SearchResponse.missing_modules`), `PARTIAL` otherwise."""

    COMPLETE = "COMPLETE"
    PARTIAL = "PARTIAL"


class Assurance(StrEnum):
    """How far the answer's matching can be trusted: `COMPUTED` is an exact scan of the verified
    catalog reading only fields its source records exactly; `APPROXIMATE` when a filter read a
    field the source only approximates (`SearchResponse.approximate_filters` names them)."""

    COMPUTED = "COMPUTED"
    APPROXIMATE = "APPROXIMATE"


class ApproximateFilter(Frozen):
    """A filter of the request that read record fields this catalog's source only approximates,
    so matches can be missing or extra (e.g. `type_pattern` reads `type_constants`, which
    doc-gen4 data fills from the links in a signature: `∑` links no `Finset.sum`)."""

    filter: str = Field(description="The request field of the filter, e.g. `type_pattern` or `kinds`.")
    fields: list[str] = Field(description="The approximate record fields it read, e.g. `type_constants`.")
    blind_spots: list[str] = Field(
        description="The source's known blind spots in those fields that concern this filter (for a filter "
        "naming constants, those about the constants it names), one sentence each; empty when none is known."
    )


ConstantNames = Annotated[list[DeclarationName], Field(min_length=1, max_length=8)]


def one_of_required(names: list[str], schema: dict[str, Any]) -> None:
    """Add to a JSON Schema the rule a model enforces: one of `names` is given and not null."""
    schema["anyOf"] = [{"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in names]


class TypePattern(Frozen):
    """Constants that must all occur in a declaration's elaborated type (`constants`) and in its
    conclusion, the type after its leading `∀`/`→` binders (`conclusion`); at least one of the
    two. Exact names (a partly qualified one resolves when exactly one constant ends with it),
    no unification and no notation matching."""

    model_config = ConfigDict(json_schema_extra=lambda schema: one_of_required(["constants", "conclusion"], schema))

    constants: ConstantNames | None = Field(default=None, description="Constants that must all occur in the type.")
    conclusion: ConstantNames | None = Field(default=None, description="Constants that must all occur in the conclusion.")

    @model_validator(mode="after")
    def _some(self) -> TypePattern:
        if self.constants is None and self.conclusion is None:
            raise ValueError("give constants, conclusion or both")
        return self


#: The flags a search can require or exclude, by key (`instance` is the record's `is_instance`).
SEARCH_FLAGS: dict[str, str] = {
    key: field
    for key, field in zip(
        ("instance", "class", "structure", "deprecated", "unsafe"),
        record_fields("is_instance", "is_class", "is_structure", "is_deprecated", "is_unsafe"),
        strict=True,
    )
}

def _some_flag(flags: Any) -> Any:
    if all(value is None for value in flags.model_dump().values()):
        raise ValueError("give at least one flag")
    return flags


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


if TYPE_CHECKING:
    # What the type checker sees of the models made below with `create_model` from the record
    # (their fields are derived at run time; `tests/test_record_fields.py` checks that these
    # declarations name the same fields).

    class FlagFilter(Frozen):
        def __init__(self, **flags: bool) -> None: ...

    class SearchResult(Frozen):
        name: str
        kind: Kind
        type: str
        namespace: str | None
        module: str | None
        range: SourceRange | None
        source_url: str | None
        doc_url: str | None
        match_reasons: list[MatchReason]

    class DeclarationFlags(Frozen):
        is_private: bool
        is_internal: bool
        is_instance: bool
        is_class: bool
        is_structure: bool
        is_unsafe: bool
        is_deprecated: bool
        type_fallback: bool

    class InspectResponse(EnvironmentIdentity):
        name: str
        components: list[str | int]
        kind: Kind
        module: str | None
        type: str
        namespace: str | None
        type_constants: list[str]
        level_params: list[str]
        doc: str | None
        range: SourceRange | None
        value_constants: list[str] | None
        conclusion_constants: list[str] | None
        conclusion_head: str | None
        source_url: str | None
        doc_url: str | None
        deprecated_to: str | None
        deprecated_since: str | None
        instance_class: str | None
        flags: DeclarationFlags
        uses: list[str] | None
        used_by_count: int | None
        instance_count: int | None


if not TYPE_CHECKING:
    FlagFilter = create_model(
        "FlagFilter",
        __base__=Frozen,
        __module__=__name__,
        __doc__="Flags a declaration must have (`true`) or must not have (`false`); a key left out does not matter; at least one key.",
        __validators__={"_some": model_validator(mode="after")(_some_flag)},
        # A key is `true` or `false`; leaving it out (not null) is how it does not matter.
        **{
            key: (
                bool,
                Field(
                    default=None,
                    description=f"true: `{field}` must hold; false: must not.",
                    json_schema_extra=_no_default,
                ),
            )
            for key, field in SEARCH_FLAGS.items()
        },
    )
    FlagFilter.model_config["json_schema_extra"] = {"minProperties": 1}
FlagFilter.model_rebuild(force=True)

NameFragment = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256),
    # In the schema only: `SearchRequest._no_nul` enforces it with its own message.
    Field(json_schema_extra={"pattern": "^[^\\u0000]*$"}),
]


#: The fields of a search that are not filters; every other field is one, and a search needs one.
NOT_FILTERS: tuple[str, ...] = ("environment", "case_sensitive", "text_match", "order", "result_limit", "after")

SearchOrder = Literal["name", "relevance"]
"""`name`: Lean's `Name.lt` order. `relevance`: the documented rule of `engine.relevance` (the
text's BM25 score when `text` is given, how the name matched, shorter names, fewer binders,
more uses, then `Name.lt`). Left out, a search with `text` is in relevance order, any other in
name order (`SearchRequest.ranked`)."""


def _one_filter_required(schema: dict[str, Any]) -> None:
    """State in the JSON Schema what the model enforces: some filter field is given, not null;
    a non-null `text_match` comes with a non-null `text` (`SearchRequest._text_match_needs_text`)."""
    one_of_required([name for name in schema["properties"] if name not in NOT_FILTERS], schema)
    not_null = {"not": {"type": "null"}}
    schema["if"] = {"required": ["text_match"], "properties": {"text_match": not_null}}
    schema["then"] = {"required": ["text"], "properties": {"text": not_null}}


class SearchRequest(Frozen):
    """A bounded search (`lean.declaration.search`, `POST /v1/declarations/search`).

    At least one filter (any field but `NOT_FILTERS`) is required (stated in the JSON Schema as
    `anyOf`; the engine refuses a request without one); all given filters must hold. `after` is
    the `next_cursor` of a previous response with the same filters.
    """

    model_config = ConfigDict(json_schema_extra=_one_filter_required)

    environment: ProfileId
    name_contains: NameFragment | Annotated[list[NameFragment], Field(min_length=1, max_length=8)] | None = Field(
        default=None, description="Substring(s) of the printed name; all must occur."
    )
    case_sensitive: bool = Field(default=True, description="false: name_contains ignores the case of ASCII letters.")
    type_pattern: TypePattern | None = Field(default=None, description="Constants required in the type and/or its conclusion.")
    namespace_prefixes: Annotated[list[DeclarationName], Field(min_length=1, max_length=16)] | None = Field(
        default=None,
        description="A name matches when one prefix's components are a proper leading part of its components.",
    )
    kinds: Annotated[list[Kind], Field(min_length=1, max_length=8)] | None = Field(default=None, description="Kernel kinds; any may match.")
    module_prefixes: Annotated[list[ModuleName], Field(min_length=1, max_length=16)] | None = Field(
        default=None, description="A module matches when it equals a prefix or lies under one."
    )
    flags: FlagFilter | None = Field(default=None, description="Flags required (true) or excluded (false).")
    instances_of: DeclarationName | None = Field(
        default=None,
        description="Instances of this class: those the catalog's instance table (doc-gen4's) files under it; for a "
        "class the table does not list (e.g. `DecidableEq`, filed under `Decidable`) or without a table (extractor "
        "catalogs), instances whose conclusion's head it is.",
    )
    uses_constants: ConstantNames | None = Field(default=None, description="Constants the value must all use (\"used by\").")
    text: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        default=None,
        description="A question in words, LaTeX or Lean syntax, ranked best first (docs/ranking.md). Matches: "
        "declarations with any of its words in name, namespace, docstring or type (text_match). Refused when no "
        "word is left (invalid_request).",
    )
    text_match: Literal["any", "all"] | None = Field(
        default=None, description="With text only. any (default): a match has some word of text; all: every word."
    )
    order: SearchOrder | None = Field(
        default=None,
        description="name (default without text): Name.lt; relevance (default with text): BM25 score, name hit, "
        "shorter, fewer binders, more uses.",
    )
    result_limit: Annotated[int, Field(ge=1, le=50)] = Field(default=10, description="Most results in this page.")
    after: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        default=None, description="`next_cursor` of the previous page (same filters)."
    )

    @field_validator("name_contains")
    @classmethod
    def _no_nul(cls, v: str | list[str] | None) -> str | list[str] | None:
        if v is not None and any("\x00" in fragment for fragment in ([v] if isinstance(v, str) else v)):
            raise ValueError("name_contains must not contain NUL")
        return v

    @field_validator("module_prefixes")
    @classmethod
    def _module_names(cls, v: list[str] | None) -> list[str] | None:
        """Each prefix is a module name (`names.parse_name`, text components) and is kept in
        Lean's printing (`«Std».Data` is `Std.Data`), so a mistyped prefix (`Std.Data.`) is an
        error rather than a scope that holds nothing."""
        if v is None:
            return v
        canonical = []
        for prefix in v:
            try:
                components = parse_name(prefix)
            except NameSyntaxError as error:
                raise ValueError(f"{prefix!r} is not a module name: {error}") from None
            if not all(isinstance(c, str) for c in components):
                raise ValueError(f"{prefix!r} is not a module name: a component is numeric")
            canonical.append(format_name(components))
        return canonical

    @model_validator(mode="before")
    @classmethod
    def _text_match_default(cls, data: Any) -> Any:
        """With `text`, a missing `text_match` is `any`, so the request (and the cursors bound to
        it) is the same whether the default was written out or not."""
        if isinstance(data, dict) and data.get("text") is not None and data.get("text_match") is None:
            return {**data, "text_match": "any"}
        return data

    @model_validator(mode="after")
    def _text_match_needs_text(self) -> SearchRequest:
        """`text_match` says how `text` matches: given without `text` it would be ignored."""
        if self.text_match is not None and self.text is None:
            raise ValueError("text_match applies to text: give text too, or leave text_match out")
        return self

    def ranked(self) -> bool:
        """True when the answer is in relevance order: asked for, or `text` given without an order."""
        return self.order == "relevance" or (self.order is None and self.text is not None)

    def name_fragments(self) -> list[str]:
        """`name_contains` as a list of distinct fragments in the order given (empty when absent)."""
        if self.name_contains is None:
            return []
        return list(dict.fromkeys([self.name_contains] if isinstance(self.name_contains, str) else self.name_contains))


def flag_settings(values: list[str] | tuple[str, ...]) -> dict[str, bool] | None:
    """`flags` from `KEY` (required), `KEY=true` or `KEY=false` (excluded) strings, as the CLI's
    `--flag` and the HTTP query's `flag` give them; None for none. Raises `ValueError` naming a
    value of another form (an unknown key is left for `FlagFilter` to refuse)."""
    wanted: dict[str, bool] = {}
    for value in values:
        key, _, setting = value.partition("=")
        if setting not in ("", "true", "false"):
            raise ValueError(f"flag {value!r}: write KEY, KEY=true or KEY=false")
        wanted[key] = setting != "false"
    return wanted or None


#: Query parameters of `GET /v1/declarations/search` whose names are not a `SearchRequest`
#: field's: each maps to the request path it fills (every other field is its own parameter).
QUERY_PARAMETERS: dict[str, tuple[str, ...]] = {
    "constant": ("type_pattern", "constants"),
    "conclusion": ("type_pattern", "conclusion"),
    "flag": ("flags",),
}
QUERY_PARAMETER_HELP: dict[str, str] = {
    "constant": "A constant of `type_pattern.constants` (repeat).",
    "conclusion": "A constant of `type_pattern.conclusion` (repeat).",
    "flag": "KEY (the flag is required) or KEY=false (excluded); repeat.",
}




def search_query_names() -> dict[str, str]:
    """The query parameters of `GET /v1/declarations/search` as `validation.close_names`
    spellings: each parameter's name to itself (every `SearchRequest` field but those
    `QUERY_PARAMETERS` fill, then those parameters), and each filled field path
    (`type_pattern.constants`, `flags`) to the parameter that fills it."""
    spelled = {path[0] for path in QUERY_PARAMETERS.values()}
    names = {name: name for name in SearchRequest.model_fields if name not in spelled}
    names.update({key: key for key in QUERY_PARAMETERS})
    names.update({".".join(path): key for key, path in QUERY_PARAMETERS.items()})
    return names


_CANONICAL_INT = re.compile(r"0|[1-9][0-9]{0,17}")


def query_value(key: str, value: str, json_type: str | None) -> Any:
    """One query parameter's text as the JSON value it spells, by the one rule of query strings:
    an `integer` field takes only canonical decimal digits (`10`; not `+10`, `010`, `1_0`,
    `10.0` or ` 10`), a `boolean` field only `true` or `false`, anything else the text as it is
    (the request model then validates it as it validates JSON). Raises
    `LeanIndexError(invalid_request)` (`details.field` = `key`) for another spelling."""
    if json_type == "integer":
        if not _CANONICAL_INT.fullmatch(value):
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"query parameter {key!r}: write a whole number in decimal digits", {"field": key})
        return int(value)
    if json_type == "boolean":
        if value not in ("true", "false"):
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"query parameter {key!r}: write true or false", {"field": key})
        return value == "true"
    return value


def search_request_from_query(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The `SearchRequest` fields of a search given as query parameters (`pairs` in order; a
    list field repeats its parameter; `constant` fills `type_pattern.constants`, `flag` gives
    `flags` as `KEY`/`KEY=false`), as the JSON values they spell (`query_value`: canonical
    digits for integers, `true`/`false` for booleans). Raises `LeanIndexError(invalid_request)`
    for an unknown parameter (with its close names, `search_query_names`: `limit` gets
    `result_limit`), a repeated single-valued one, a malformed flag or a value of another
    spelling; values are validated by `SearchRequest` afterwards
    (`validation.parse_request`, strictly, as a JSON body is)."""
    values: dict[str, list[str]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    fields: dict[str, Any] = {}
    schema = SearchRequest.model_json_schema()["properties"]
    for key, given in values.items():
        if key in QUERY_PARAMETERS:
            path = QUERY_PARAMETERS[key]
            if path == ("flags",):
                try:
                    fields["flags"] = flag_settings(given)
                except ValueError as error:
                    raise LeanIndexError(ErrorCode.INVALID_REQUEST, str(error), {"field": "flag"}) from None
            else:
                fields.setdefault(path[0], {})[path[1]] = given
            continue
        if key not in SearchRequest.model_fields or key in {"type_pattern", "flags"}:
            raise unknown_name_error("query parameter", key, search_query_names())
        options = schema[key].get("anyOf", [schema[key]])
        types = [o.get("type") for o in options]
        if "array" in types and (len(given) > 1 or "string" not in types):
            items = next(o for o in options if o.get("type") == "array").get("items", {})
            fields[key] = [query_value(key, value, items.get("type")) for value in given]
        elif len(given) > 1:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"query parameter {key!r} given {len(given)} times", {"field": key})
        else:
            scalar = next((t for t in types if t not in ("array", "null")), None)
            fields[key] = query_value(key, given[0], scalar)
    return fields


def search_query_parameters() -> list[dict[str, Any]]:
    """The OpenAPI parameters of `GET /v1/declarations/search`, derived from `SearchRequest`
    (with `QUERY_PARAMETERS` in place of the fields they fill)."""
    schema = SearchRequest.model_json_schema()["properties"]
    spelled = {path[0] for path in QUERY_PARAMETERS.values()}
    parameters = []
    for name in SearchRequest.model_fields:
        if name in spelled:
            continue
        options = [o for o in schema[name].get("anyOf", [schema[name]]) if o.get("type") != "null"]
        array = next((o for o in options if o.get("type") == "array"), None)
        value = {"type": "array", "items": {"type": "string"}} if array else {"type": options[0].get("type", "string")}
        about = {"description": schema[name]["description"]} if "description" in schema[name] else {}
        parameters.append({"name": name, "in": "query", "required": name == "environment", "explode": True, "schema": value, **about})
    parameters += [
        {"name": key, "in": "query", "explode": True, "schema": {"type": "array", "items": {"type": "string"}}, "description": about}
        for key, about in QUERY_PARAMETER_HELP.items()
    ]
    return parameters


def _record_field(name: str) -> tuple[Any, FieldInfo]:
    """A record field as a response field: same type, and always present in an answer."""
    field = copy(DeclarationRecord.model_fields[name])
    field.default = PydanticUndefined
    return field.annotation, field


class MatchReason(Frozen):
    """Which filter matched what: `filter` is the request field, `value` the matched value."""

    filter: Literal[
        "name_contains", "resolved_constant", "type_constant", "conclusion_constant", "namespace_prefix", "kind", "module_prefix",
        "flag", "instance_of", "uses_constant", "text", "relevance",
    ] = Field(description="The filter that matched, or `relevance` for a ranking criterion.")
    value: str = Field(
        description="The matched value; for `text` one sentence per field matched, in the query's words "
        "('\"prime\", \"odd\" in the docstring'), or 'named by a nickname in the text'; for `relevance` (answers in "
        "relevance order) one criterion as KEY=VALUE: text_score (text search), name_hit (exact_name, last_component, component_boundary, inside), name_bytes, binders, uses."
    )


_NAMESPACE = (str | None, Field(description="The name without its last component; null at the root."))

# Made of the record's `SEARCH_RESULT_FIELDS` (`namespace` after `type`), so a field added there
# reaches search answers with no second definition.
if not TYPE_CHECKING:
    SearchResult = create_model(
        "SearchResult",
        __base__=Frozen,
        __module__=__name__,
        __doc__="One visible declaration that matched every filter.",
        **{
            field: spec
            for name in SEARCH_RESULT_FIELDS
            for field, spec in (
                [(name, _record_field(name)), ("namespace", _NAMESPACE)] if name == "type" else [(name, _record_field(name))]
            )
        },
        match_reasons=(list[MatchReason], Field(description="Which filter matched what.")),
    )


class UnknownConstant(Frozen):
    """A type-pattern constant that no declaration type mentions, with suggestions: every known
    constant it could mean (several ending with its components) first, then close known names."""

    name: str = Field(description="The constant as given.")
    suggestions: list[str] = Field(description="Constants it could mean, then close names.")


class ResolvedConstant(Frozen):
    """A partly qualified constant (`Measure.map`) that exactly one known constant ends with,
    and that constant (`MeasureTheory.Measure.map`)."""

    given: str = Field(description="The constant as given.")
    resolved: str = Field(description="The full name it resolved to.")


class SearchResponse(EnvironmentIdentity):
    """The answer to a search, with an honest completeness signal.

    `stop_reason` is `RESULT_LIMIT` only when at least one more match exists beyond the page
    (then `next_cursor` continues the scan); otherwise `EXHAUSTED`. `completeness` is
    `COMPLETE` exactly when the scan is `EXHAUSTED` and no module the search could reach is
    missing from the catalog (`missing_modules`: modules its catalog imports or links, with no
    declaration in it); `PARTIAL` otherwise. `assurance` is `APPROXIMATE` when a filter read a
    record field the catalog's source only approximates (`approximate_filters` says which and
    the known blind spots), `COMPUTED` otherwise. `total_matches` is the exact number of visible
    declarations of the catalog matching all filters, whatever the limit or cursor;
    `hidden_matches` counts private and internal declarations that matched and were left out,
    null when the source omits them (doc-gen4). A filter on a fact the source never had (a kind
    or flag it cannot know) is refused with `not_recorded`, never answered as none.
    """

    results: list[SearchResult] = Field(description="This page's matches, in the answer's order.")
    stop_reason: StopReason = Field(description="RESULT_LIMIT: more matches exist; EXHAUSTED: none left.")
    completeness: Completeness = Field(
        description="COMPLETE when no match was left out after the cursor and no module in scope is missing from the catalog."
    )
    assurance: Assurance = Field(
        description="COMPUTED: every filter read exactly recorded fields; APPROXIMATE: some read approximate ones (approximate_filters)."
    )
    approximate_filters: list[ApproximateFilter] = Field(
        default_factory=list, description="The filters that read approximate fields, with the blind spots that concern them; empty when COMPUTED."
    )
    missing_modules: list[str] = Field(
        default_factory=list,
        description="Modules in the search's scope (all, or under a module_prefixes entry) that the catalog imports or links "
        "but holds no declaration of; their declarations could match and are not counted.",
    )
    next_cursor: str | None = Field(description="Pass as `after` for the next page; null on the last.")
    total_matches: int = Field(description="Visible matches in the whole catalog, whatever the limit.")
    hidden_matches: int | None = Field(
        description="Private or internal matches left out; null when the catalog's source omits such declarations."
    )
    unknown_constants: list[UnknownConstant] = Field(description="Type-pattern constants no type mentions.")
    resolved_constants: list[ResolvedConstant] = Field(
        default_factory=list, description="Partly qualified constants of the request and the constants they resolved to."
    )
    suggestions: list[str] = Field(
        default_factory=list, description="When a name search finds nothing: close visible names (else empty)."
    )
    unmatched_words: list[str] = Field(
        default_factory=list, description="Words of text (as read: lower case) that no declaration of the catalog has."
    )

    def to_arrow(self) -> Any:
        """The results as a `pyarrow.Table` (one row per result; `match_reasons` as text)."""
        import pyarrow as pa

        return pa.Table.from_pylist([_flat_result(r) for r in self.results], schema=_RESULT_SCHEMA())

    def to_pandas(self) -> Any:
        """The results as a `pandas.DataFrame`, with the completeness signal and environment in
        `DataFrame.attrs` (`stop_reason`, `completeness`, `total_matches`, `hidden_matches`,
        `next_cursor`, `environment`, `environment_digest`). Needs pandas
        (`pip install pandas`, which works however leanindex was installed; the `leanindex[pandas]`
        extra only from an index); raises `ImportError` saying so otherwise."""
        try:
            import pandas  # noqa: F401  (pyarrow's conversion needs it)
        except ImportError as error:
            raise ImportError("to_pandas() needs pandas: pip install 'pandas>=2.2' (in the environment leanindex runs in)") from error
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
            ("source_url", pa.string()),
            ("doc_url", pa.string()),
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
        "source_url": r.source_url,
        "doc_url": r.doc_url,
        "match_reasons": "; ".join(f"{m.filter}={m.value}" for m in r.match_reasons),
    }


class InspectRequest(Frozen):
    """An exact look-up (`lean.declaration.inspect`, `GET /v1/declarations/{name}`)."""

    environment: ProfileId
    declaration_name: DeclarationName


if not TYPE_CHECKING:
    DeclarationFlags = create_model(
        "DeclarationFlags",
        __base__=Frozen,
        __module__=__name__,
        __doc__="The record's flags (see `leanindex.records.DeclarationRecord`).",
        **{flag: (bool, Field(description=DeclarationRecord.model_fields[flag].description)) for flag in FLAG_FIELDS},
    )

#: The record fields an inspect answer carries as they are (all but the line type and the flags).
INSPECT_RECORD_FIELDS: tuple[str, ...] = tuple(
    name for name in DeclarationRecord.model_fields if name != "record" and name not in FLAG_FIELDS
)

# Derived from the record so that a new record field reaches inspect answers without a second
# definition; `namespace` follows `type` and the flags come last.
if not TYPE_CHECKING:
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
        flags=(DeclarationFlags, Field(description="The record's boolean flags.")),
        uses=(
            list[str] | None,
            Field(description="Constants of the type and the value (sorted); null when the catalog has no value constants."),
        ),
        used_by_count=(
            int | None,
            Field(description="Declarations whose value uses this one; null when the catalog has no value constants."),
        ),
        instance_count=(
            int | None,
            Field(
                description="For a class: the instances the catalog's instance table lists for it (without that table, those "
                "whose conclusion's head it is); null otherwise, or when neither is recorded."
            ),
        ),
    )


def inspect_details(response: Any) -> list[str]:
    """The optional parts of an `InspectResponse` worth showing people, one line each: the flags
    that are set, the universe parameters, the type constants, the constants it uses, and the
    `used by` / `instances` counts (empty or unrecorded ones left out)."""
    flags = [name for name, value in response.flags.model_dump().items() if value]
    counts = [
        f"{label} {value}" for label, value in (("used by", response.used_by_count), ("instances", response.instance_count)) if value is not None
    ]
    return [
        f"{label} {', '.join(values)}"
        for label, values in (
            ("flags", flags), ("universes", response.level_params), ("type constants", response.type_constants),
            ("uses", response.uses or []), ("counts", counts),
        )
        if values
    ]


def hidden_text(hidden: int | None) -> str:
    """A search's `hidden_matches` for people: the count, or `unknown` when it is null (the
    source omits private and internal declarations)."""
    return "unknown" if hidden is None else str(hidden)


#: Most missing modules a caveat names (the answer's `missing_modules` lists them all).
MODULES_SHOWN = 8


def search_caveats(response: SearchResponse) -> list[str]:
    """What a search answer cannot vouch for, one sentence each, shown on every surface: the
    missing modules in its scope, then each filter that read approximate fields with the blind
    spots that concern it. Empty for a `COMPLETE`/`COMPUTED` answer with nothing to add."""
    lines = []
    missing = response.missing_modules
    if missing:
        more = f" and {len(missing) - MODULES_SHOWN} more" if len(missing) > MODULES_SHOWN else ""
        lines.append(
            f"not complete: {len(missing)} module(s) in scope are missing from this catalog, "
            f"their declarations are not counted: {', '.join(missing[:MODULES_SHOWN])}{more}"
        )
    for approximate in response.approximate_filters:
        spots = f"; {'; '.join(approximate.blind_spots)}" if approximate.blind_spots else ""
        lines.append(
            f"approximate: {approximate.filter} reads {', '.join(approximate.fields)}, "
            f"which {response.source or 'this source'} only approximates{spots}"
        )
    return lines


def inspect_caveat(response: Any) -> str | None:
    """The record fields of an inspect answer that its catalog's source only approximates, as
    one line for people; None when every field is exact."""
    if not response.approximate_fields:
        return None
    return f"approximate in this catalog ({response.source}): {', '.join(response.approximate_fields)}"


class EnvironmentSummary(EnvironmentIdentity):
    """A served profile: identity, imports, declaration counts and verification state.

    A profile whose catalog fails verification is listed with `verified: false`, the error
    that keeps it from serving in `problem`, and no counts (it cannot vouch for them).
    """

    imports: list[str] = Field(description="The modules the environment imports.")
    declaration_count: int | None = Field(description="Declarations in the catalog; null when unverified.")
    visible_count: int | None = Field(description="Those neither private nor internal; null when unverified.")
    verified: bool = Field(description="The catalog matches its manifest and can serve.")
    problem: ErrorBody | None = Field(default=None, description="Why it does not verify; null when verified.")


class EnvironmentsRequest(Frozen):
    """The request of `lean.environments` (`GET /v1/environments`): no field."""


class EnvironmentsResponse(Frozen):
    """Every profile found under the served root."""

    environments: list[EnvironmentSummary] = Field(description="One entry per profile.")


#: Most names one batch look-up takes (`lean.declaration.inspect_many`, `lean.declaration.exists`).
MAX_LOOKUP_NAMES = 100

#: A name of a batch look-up: any string up to 1024 characters, so that one that is no Lean name
#: is answered `invalid_request` in its own entry instead of refusing the whole batch.
LookupName = Annotated[
    str,
    StringConstraints(max_length=1024),
    Field(description="A full Lean name as Lean prints it, e.g. `Nat.add_comm`; a string that is no name is answered invalid_request in its entry."),
]
LookupNames = Annotated[
    list[LookupName],
    Field(
        min_length=1,
        max_length=MAX_LOOKUP_NAMES,
        description=f"1-{MAX_LOOKUP_NAMES} declaration names, answered in this order (repeats answered each time).",
    ),
]
#: The per-name refusals of a batch look-up, the codes a single inspect would raise for that name.
LookupErrorCode = Literal["not_found", "missing_module", "not_recorded", "invalid_request"]
#: The keys of a batch look-up's `counts`: `found`, then each `LookupErrorCode`.
LOOKUP_COUNT_KEYS: tuple[str, ...] = ("found", *get_args(LookupErrorCode))
_CLOSEST = (
    "Up to 8 visible names of the catalog close to it, best first (names it is a trailing part of, then those whose last "
    "component is a few edits away); empty when found."
)


class InspectManyRequest(Frozen):
    """Several exact look-ups in one call (`lean.declaration.inspect_many`, `POST
    /v1/declarations/inspect_many`)."""

    environment: ProfileId
    names: LookupNames


class InspectManyResult(Frozen):
    """The answer for one name of a batch inspect: exactly one of `response` (what
    `lean.declaration.inspect` answers for it) and `error` (the error it raises for it:
    `not_found`, `missing_module` or `invalid_request`; a `not_found`'s `suggestions` are the
    batch's `closest`), and the catalog's closest names when it was not found."""

    name: str = Field(description="The name as asked.")
    response: InspectResponse | None = Field(default=None, description="The declaration, as lean.declaration.inspect answers it; null on an error.")
    error: ErrorBody | None = Field(default=None, description="The error lean.declaration.inspect raises for this name; null when found.")
    closest: list[str] = Field(default_factory=list, description=_CLOSEST)

    @model_validator(mode="after")
    def _one_answer(self) -> InspectManyResult:
        if (self.response is None) == (self.error is None):
            raise ValueError("a look-up result holds exactly one of `response` and `error`")
        return self


class LookupSummary(EnvironmentIdentity):
    """What every batch look-up answer carries beside its results: the environment identity,
    counts, and whether a name answered `not_found` can still be a declaration of a module the
    catalog lacks (`completeness` `PARTIAL`, the modules in `missing_modules`)."""

    counts: dict[str, int] = Field(description="Names per answer: found, not_found, missing_module, invalid_request.")
    completeness: Completeness = Field(
        description="PARTIAL when some name is not_found while the catalog lacks modules (missing_modules) that could declare it; "
        "COMPLETE otherwise."
    )
    missing_modules: list[str] = Field(
        default_factory=list,
        description="Modules the catalog imports or links but holds no declaration of (all of them): a not_found name can be one of theirs.",
    )


class InspectManyResponse(LookupSummary):
    """One `InspectManyResult` per name asked, in the order asked; a name's own error never
    fails the batch (an unknown environment or an unavailable catalog fails the call)."""

    results: list[InspectManyResult] = Field(description="One per name, in the order asked.")


class ExistsRequest(Frozen):
    """Whether declarations exist, compactly (`lean.declaration.exists`, `POST
    /v1/declarations/exists`): for verifying names before citing them."""

    environment: ProfileId
    names: LookupNames


class ExistsResult(Frozen):
    """Whether one name is a declaration of the catalog (looked up as `lean.declaration.inspect`
    does: as given, then in Lean's canonical printing), with its kind and module when it is."""

    name: str = Field(description="The name as asked.")
    exists: bool = Field(description="true: the catalog holds a declaration of this name (private and internal ones included).")
    kind: Kind | None = Field(description="Its kernel kind; null when it does not exist.")
    module: str | None = Field(
        description="Its module; for missing_module, the module the catalog lacks that declares it; null otherwise."
    )
    closest: list[str] = Field(default_factory=list, description=_CLOSEST)
    error_code: LookupErrorCode | None = Field(
        default=None,
        description="Why not: not_found, missing_module (a declaration of a module the catalog lacks), not_recorded (a "
        "constant the catalog's types mention that its source leaves out, e.g. a recursor) or invalid_request (not a Lean "
        "name); null when it exists.",
    )


class ExistsResponse(LookupSummary):
    """One `ExistsResult` per name asked, in the order asked, read from the catalog's name
    index (no record is read); a name's own error never fails the batch."""

    results: list[ExistsResult] = Field(description="One per name, in the order asked.")


def lookup_caveat(response: LookupSummary) -> str | None:
    """What a `PARTIAL` batch look-up cannot vouch for, as one sentence for people (every
    surface shows it); None when `COMPLETE`."""
    if response.completeness is Completeness.COMPLETE:
        return None
    missing = response.missing_modules
    more = f" and {len(missing) - MODULES_SHOWN} more" if len(missing) > MODULES_SHOWN else ""
    return (
        f"not complete: this catalog lacks {len(missing)} module(s) it imports or links, so a name answered not_found "
        f"may be a declaration of one of them: {', '.join(missing[:MODULES_SHOWN])}{more}"
    )
