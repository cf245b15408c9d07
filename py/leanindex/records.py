"""The declaration stream contract `leanindex.declarations/v1` (NDJSON, one object a line).

Line 1 is a `HeaderRecord`, then one `DeclarationRecord` per constant in Lean's `Name.lt`
order, then a `FooterRecord` with the count. The Lean extractor (`LeanIndex/`) writes exactly
this; the doc-gen4 importer produces the same records. `api/declarations.schema.json` is
generated from these models, and a declaration's fields are defined here once: the catalog's
columns (`catalog/columns.py`), the inspect answer and its flags (`models.py`) derive from them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Final, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from .base import Frozen

STREAM_FORMAT: Final = "leanindex.declarations/v2"
"""The format writers write; a `v1` stream (before conclusions) still reads, its records without
`conclusion_constants` and `conclusion_head` (null: not recorded). `source_url` and `doc_url`
are optional in both (absent reads as null), so they need no new format: the Lean extractor
never writes them, the catalog build fills `source_url` (`catalog/links.py`)."""


class Kind(StrEnum):
    """Kernel kinds, one per `Lean.ConstantInfo` constructor (lean4 `src/Lean/Declaration.lean`)."""

    AXIOM = "axiom"
    DEFINITION = "definition"
    THEOREM = "theorem"
    OPAQUE = "opaque"
    QUOTIENT = "quotient"
    INDUCTIVE = "inductive"
    CONSTRUCTOR = "constructor"
    RECURSOR = "recursor"


KIND_ORDER: tuple[Kind, ...] = tuple(Kind)


class Position(Frozen):
    """A source position as Lean's `Position`: 1-based `line`, 0-based `column` in code points
    (null when the source gives only lines, as doc-gen4 does). The one position model: stream
    ranges, inspect answers and the checker's diagnostics all use it."""

    line: Annotated[StrictInt, Field(ge=1, le=2**31 - 1)] = Field(description="1-based line.")
    column: Annotated[StrictInt, Field(ge=0, le=2**31 - 1)] | None = Field(
        description="0-based column in code points; null when only lines are known."
    )


class SourceRange(Frozen):
    """A declaration range in its module's source (`Lean.DeclarationRange`)."""

    start: Position = Field(description="Where the declaration starts.")
    end: Position = Field(description="Where it ends.")

    @model_validator(mode="after")
    def _ordered(self) -> SourceRange:
        if (self.end.line, self.end.column or 0) < (self.start.line, self.start.column or 0):
            raise ValueError("the range ends before it starts")
        return self


class ExtractorInfo(Frozen):
    """Who wrote the stream: `name` and `version`. Any other field is refused: the manifest
    records only these (and the digest of the extractor's sources, which the build computes),
    so a further field would be dropped unseen."""

    name: StrictStr = Field(description="The writing program, e.g. `leanindex-extract`.")
    version: StrictStr = Field(description="Its version.")


class LeanInfo(Frozen):
    """`Lean.versionString` and `Lean.githash` of the Lean that produced the environment (in a
    stream header and in a manifest)."""

    version: StrictStr = Field(description="`Lean.versionString`, e.g. `4.35.0`.")
    githash: StrictStr | None = Field(description="`Lean.githash`, the Lean commit; null when unknown.")


class HeaderRecord(Frozen):
    """First line of a stream: format id, producer, Lean version, imports and module list.

    `approximate_fields` names record fields that the producer can only approximate (the
    doc-gen4 front end sets it); `source_commits` maps a repository to the commit its data came
    from, when the producer knows it.
    """

    record: Literal["header"] = Field(description="Line type.")
    format: Literal["leanindex.declarations/v1", "leanindex.declarations/v2"] = Field(description="Stream format id.")
    extractor: ExtractorInfo = Field(description="The program that wrote the stream.")
    lean: LeanInfo = Field(description="The Lean that produced the environment.")
    imports: list[StrictStr] = Field(description="The modules imported to build the environment.")
    modules: list[StrictStr] = Field(description="Every module loaded in the environment.")
    approximate_fields: list[StrictStr] = Field(default_factory=list, description="Record fields this producer only approximates.")
    source_commits: dict[StrictStr, StrictStr] = Field(default_factory=dict, description="Repository -> commit its data came from.")


class DeclarationRecord(Frozen):
    """One constant of the environment (DESIGN.md record table).

    `components` are the name's components from the root (strings, integers for numeric
    components); `name` must read back to exactly those components, or, where Lean's printing
    cannot be read back (a component holding `»`; escaping off for names with macro scopes or
    `✝`), be exactly Lean's `Name.toString` of them: the components are the identity. `type_constants` are the
    constants occurring in the elaborated type, sorted by code point, without duplicates.
    `type_fallback` is set when Lean's pretty printer failed and `type` is a fallback rendering.
    `value_constants` are the constants the value uses (null: not recorded, as in doc-gen4
    catalogs). `conclusion_constants` are the constants of the type's conclusion (what is left
    after its leading `∀`/`→` binders), sorted and unique, and `conclusion_head` the conclusion's
    head constant (null when the head is not a constant); both null when not recorded (a `v1`
    stream). `source_url` links the declaration's source lines, `doc_url` its documentation page
    (null when the source does not know them; see docs/links.md). `deprecated_to` and
    `deprecated_since` are the `@[deprecated]` attribute's
    replacement (printed name) and `since` text (Lean's `DeprecationEntry.newName?` and `since?`,
    lean4 `src/Lean/Linter/Deprecated.lean`), null when the attribute gives none, the
    declaration is not deprecated, or the producer does not record them (doc-gen4; streams
    written before these fields). `instance_class` is the class of an instance as the producer's
    instance table names it (doc-gen4's `instances` entries), null for every other declaration
    and where not recorded (the Lean extractor does not write it yet; streams before it).
    """

    record: Literal["declaration"] = Field(description="Line type.")
    name: Annotated[StrictStr, Field(min_length=1)] = Field(description="Full name as Lean prints it.")
    components: Annotated[list[StrictStr | Annotated[StrictInt, Field(ge=0)]], Field(min_length=1)] = Field(
        description="The name's components from the root; integers for numeric ones."
    )
    kind: Kind = Field(description="Kernel kind (`Lean.ConstantInfo` constructor).")
    module: StrictStr | None = Field(description="Declaring module; null when unknown.")
    type: StrictStr = Field(description="The elaborated type, pretty-printed by Lean.")
    type_constants: list[StrictStr] = Field(description="Constants in the type, sorted, unique.")
    level_params: list[StrictStr] = Field(description="Universe parameter names.")
    doc: StrictStr | None = Field(description="Docstring; null when none.")
    range: SourceRange | None = Field(description="Source range in its module; null when unknown.")
    is_private: StrictBool = Field(description="Declared `private`.")
    is_internal: StrictBool = Field(description="Implementation detail (`Name.isInternalDetail`, auxiliary recursors, matchers).")
    is_instance: StrictBool = Field(description="A type class instance.")
    is_class: StrictBool = Field(description="A type class.")
    is_structure: StrictBool = Field(description="A structure.")
    is_unsafe: StrictBool = Field(description="Declared `unsafe`.")
    is_deprecated: StrictBool = Field(description="Has `@[deprecated]`.")
    type_fallback: StrictBool = Field(default=False, description="`type` is a fallback rendering (Lean's printer failed).")
    value_constants: list[StrictStr] | None = Field(default=None, description="Constants the value uses, sorted; null when not recorded.")
    conclusion_constants: list[StrictStr] | None = Field(
        default=None, description="Constants of the type after its leading binders, sorted; null when not recorded."
    )
    conclusion_head: StrictStr | None = Field(
        default=None, description="Head constant of the conclusion; null when not a constant or not recorded."
    )
    source_url: StrictStr | None = Field(
        default=None,
        description="Where the declaration's source lines are (e.g. https://github.com/OWNER/REPO/blob/COMMIT/"
        "PATH.lean#L27-L70); null when unknown. doc-gen4: its `sourceLink`; Lean extractor: built from the "
        "package's repository, revision, module path and range.",
    )
    doc_url: StrictStr | None = Field(
        default=None,
        description="The declaration's page on a doc-gen4 site (doc-gen4 catalogs: `docLink` resolved against "
        "the import's doc base); null when unknown (Lean extractor catalogs).",
    )
    deprecated_to: StrictStr | None = Field(default=None, description="`@[deprecated]` replacement name; null when none or not recorded.")
    deprecated_since: StrictStr | None = Field(default=None, description="`@[deprecated]` `since` text; null when none or not recorded.")
    instance_class: StrictStr | None = Field(
        default=None,
        description="The class an instance is an instance of (doc-gen4: its instance table's `className`); null for a "
        "declaration that is not an instance, and for an instance whose producer does not record it.",
    )


class FooterRecord(Frozen):
    """Last line of a stream: the number of declaration records before it."""

    record: Literal["footer"] = Field(description="Line type.")
    count: Annotated[StrictInt, Field(ge=0)] = Field(description="Number of declaration lines.")


FLAG_FIELDS: tuple[str, ...] = tuple(
    name for name, field in DeclarationRecord.model_fields.items() if field.annotation is bool
)
"""The record's boolean fields, in record order (the flags of an inspect answer)."""


def record_fields(*names: str) -> tuple[str, ...]:
    """`names`, each checked to be a field of `DeclarationRecord`; raises `ValueError` naming
    one that is not (so a list of record fields kept elsewhere cannot name a field that went)."""
    unknown = [name for name in names if name not in DeclarationRecord.model_fields]
    if unknown:
        raise ValueError(f"not fields of a declaration record: {', '.join(unknown)}")
    return names


#: The record fields a search result shows, in order (`models.SearchResult` is made of them, the
#: index stores them per row: `catalog.rows.RESULT_FIELDS`, and the engine copies them): a field
#: added here reaches every search answer, on every surface.
SEARCH_RESULT_FIELDS = record_fields("name", "kind", "type", "module", "range", "source_url", "doc_url")
