"""The declaration stream contract `leanindex.declarations/v1` (NDJSON, one object a line).

Line 1 is a `HeaderRecord`, then one `DeclarationRecord` per constant in Lean's `Name.lt`
order, then a `FooterRecord` with the count. The Lean extractor (`LeanIndex/`) writes exactly
this; the doc-gen4 importer produces the same records. `api/declarations.schema.json` is
generated from these models, and a declaration's fields are defined here once: the catalog's
columns (`catalog/columns.py`), the inspect answer and its flags (`models.py`) derive from them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from .base import Frozen

STREAM_FORMAT = "leanindex.declarations/v2"
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

    line: Annotated[StrictInt, Field(ge=1, le=2**31 - 1)]
    column: Annotated[StrictInt, Field(ge=0, le=2**31 - 1)] | None


class SourceRange(Frozen):
    """A declaration range in its module's source (`Lean.DeclarationRange`)."""

    start: Position
    end: Position

    @model_validator(mode="after")
    def _ordered(self) -> SourceRange:
        if (self.end.line, self.end.column or 0) < (self.start.line, self.start.column or 0):
            raise ValueError("the range ends before it starts")
        return self


class ExtractorInfo(Frozen):
    """Who wrote the stream: `name` and `version`. Any other field is refused: the manifest
    records only these (and the digest of the extractor's sources, which the build computes),
    so a further field would be dropped unseen."""

    name: StrictStr
    version: StrictStr


class LeanInfo(Frozen):
    """`Lean.versionString` and `Lean.githash` of the Lean that produced the environment (in a
    stream header and in a manifest)."""

    version: StrictStr
    githash: StrictStr | None


class HeaderRecord(Frozen):
    """First line of a stream: format id, producer, Lean version, imports and module list.

    `approximate_fields` names record fields that the producer can only approximate (the
    doc-gen4 front end sets it); `source_commits` maps a repository to the commit its data came
    from, when the producer knows it.
    """

    record: Literal["header"]
    format: Literal["leanindex.declarations/v1", "leanindex.declarations/v2"]
    extractor: ExtractorInfo
    lean: LeanInfo
    imports: list[StrictStr]
    modules: list[StrictStr]
    approximate_fields: list[StrictStr] = Field(default_factory=list)
    source_commits: dict[StrictStr, StrictStr] = Field(default_factory=dict)


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
    written before these fields).
    """

    record: Literal["declaration"]
    name: Annotated[StrictStr, Field(min_length=1)]
    components: Annotated[list[StrictStr | Annotated[StrictInt, Field(ge=0)]], Field(min_length=1)]
    kind: Kind
    module: StrictStr | None
    type: StrictStr
    type_constants: list[StrictStr]
    level_params: list[StrictStr]
    doc: StrictStr | None
    range: SourceRange | None
    is_private: StrictBool
    is_internal: StrictBool
    is_instance: StrictBool
    is_class: StrictBool
    is_structure: StrictBool
    is_unsafe: StrictBool
    is_deprecated: StrictBool
    type_fallback: StrictBool = False
    value_constants: list[StrictStr] | None = None
    conclusion_constants: list[StrictStr] | None = None
    conclusion_head: StrictStr | None = None
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
    deprecated_to: StrictStr | None = None
    deprecated_since: StrictStr | None = None


class FooterRecord(Frozen):
    """Last line of a stream: the number of declaration records before it."""

    record: Literal["footer"]
    count: Annotated[StrictInt, Field(ge=0)]


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
