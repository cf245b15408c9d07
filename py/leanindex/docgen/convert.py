"""Converting one doc-gen4 declaration file into declaration records.

A file `declaration-data-<Module>.bmp` is one JSON object (doc-gen4's `JsonModule`, written by
`DocGen4/Output/ToJson.lean`): `name` (the module), `imports`, `instances`, and `declarations`,
each `{"info": {"name", "kind", "doc", "docLink", "line", "sourceLink"}, "header": HTML}`.

Kinds: doc-gen4's `DocInfo.getKind` (`DocGen4/Process/DocInfo.lean`) maps each constant it
documents to `theorem`, `def`, `instance`, `structure`, `class` (structure classes and
`class inductive`s alike), `inductive`, `ctor`, `opaque` or `axiom`. The header's `decl_kind`
text (`DocInfo.getKindDescription`) tells more, and is used where it is exact:

- `unsafe ...` marks unsafe axioms, definitions, instances, opaques and inductives
  (`is_unsafe`); a constructor is unsafe exactly when its inductive is; structures and
  classes never show the modifier, so `is_unsafe` is approximate there;
- `class` (a structure class: `is_structure`) versus `class inductive` (not a structure);
- `partial def` is doc-gen4's name for a partial definition, which the kernel holds as an
  `opaque` constant, which is how the data lists it already.

Approximations (the manifest lists them): an `instance` is mapped to `definition`, but an
instance of a `Prop`-valued class is a kernel `theorem` (`InstanceInfo.ofTheoremVal`);
`Quot`, `Quot.mk`, `Quot.lift` and `Quot.ind` (listed as `opaque`, `OpaqueInfo.ofQuotVal`) are
the kernel's quotient constants and become `quotient` by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import ConfigDict, StrictInt, StrictStr, ValidationError

from ..base import Frozen
from ..catalog.links import checked_link
from ..errors import ErrorCode, LeanIndexError
from ..names import Components, NameSyntaxError, parse_name
from ..records import DeclarationRecord, Kind, Position, SourceRange, record_fields
from .files import DocgenFile, module_of_file
from .gaps import LinkTally, absent_facts, file_links, operator_marks
from .header import HeaderSyntaxError, RenderedHeader, parse_header
from .links import DEFAULT_DOC_BASE, doc_url

# The kernel's quotient constants (`Lean.QuotKind`: type, ctor, lift, ind), whose names are
# fixed by `init_quot`; doc-gen4 documents them as opaque.
QUOTIENT_CONSTANTS = frozenset({"Quot", "Quot.mk", "Quot.lift", "Quot.ind"})

# For each doc-gen4 kind: the kernel kind, fixed flags, and the `decl_kind` texts
# `DocInfo.getKindDescription` prints for it.
_UNSAFE = r"(?:unsafe )?"
_KINDS: dict[str, tuple[Kind, dict[str, bool], re.Pattern[str]]] = {
    "theorem": (Kind.THEOREM, {}, re.compile(r"theorem")),
    "def": (Kind.DEFINITION, {}, re.compile(_UNSAFE + r"(?:noncomputable )?(?:def|abbrev)")),
    "instance": (Kind.DEFINITION, {"is_instance": True}, re.compile(_UNSAFE + r"(?:noncomputable )?instance")),
    "structure": (Kind.INDUCTIVE, {"is_structure": True}, re.compile(r"structure")),
    "class": (Kind.INDUCTIVE, {"is_class": True}, re.compile(r"class(?: inductive)?")),
    "inductive": (Kind.INDUCTIVE, {}, re.compile(_UNSAFE + r"inductive")),
    "ctor": (Kind.CONSTRUCTOR, {}, re.compile(r"constructor")),
    "opaque": (Kind.OPAQUE, {}, re.compile(r"(?:unsafe )?opaque|partial def")),
    "axiom": (Kind.AXIOM, {}, re.compile(_UNSAFE + r"axiom")),
}
DOCGEN_KINDS: tuple[str, ...] = tuple(_KINDS)

ABSENT_FACTS: tuple[str, ...] = tuple(
    absent_facts(
        produced_kinds=[kind for kind, _, _ in _KINDS.values()] + [Kind.QUOTIENT],
        unknown_flags=record_fields("is_deprecated"),  # `_record` sets it false: the data does not say
    )
)
"""What doc-gen4's data never has (`gaps.absent_facts`): `hidden`, the kinds no doc-gen4 kind
maps to (`kind:recursor`), `flag:deprecated`."""

_LINE_RANGE = re.compile(r"#L(\d+)-L(\d+)$")
_GITHUB_BLOB = re.compile(r"^https://github\.com/(?P<repo>[^/]+/[^/]+)/blob/(?P<commit>[0-9a-f]{7,40})/")


class _Format(Frozen):
    # Unknown keys are doc-gen4's business (newer additions); the ones read
    # here must be present with the right JSON type.
    model_config = ConfigDict(extra="ignore", frozen=True)


class DocgenInfo(_Format):
    """`info` of a declaration: printed name, doc-gen4 kind, Markdown docstring ("" for none),
    start line, the source link ending in `#L<start>-L<end>`, and the documentation link
    relative to the doc site's root."""

    name: StrictStr
    kind: StrictStr
    doc: StrictStr
    line: StrictInt
    sourceLink: StrictStr
    docLink: StrictStr


class DocgenDeclaration(_Format):
    """One declaration: its `info` and the HTML `header` (signature)."""

    info: DocgenInfo
    header: StrictStr


class DocgenInstance(_Format):
    """One entry of a file's instance table: the instance's `name` and its class (`className`)."""

    name: StrictStr
    className: StrictStr


class DocgenModule(_Format):
    """A whole declaration file: module `name`, its `imports`, its `declarations` and its
    instance table (`instances`; absent in output that has none, then no class is recorded)."""

    name: StrictStr
    imports: list[StrictStr]
    declarations: list[DocgenDeclaration]
    instances: list[DocgenInstance] = []


@dataclass
class ConvertedModule:
    """The records of one file (in file order), its module and imports, the repository
    commits its source links name (`{"leanprover/lean4": "d8b1..."}`), each record's
    `gaps.operator_marks` (same order) and the file's links into other modules
    (`gaps.file_links`)."""

    module: str
    imports: list[str]
    records: list[DeclarationRecord]
    commits: dict[str, set[str]] = field(default_factory=dict)
    marks: list[int] = field(default_factory=list)
    links: dict[str, LinkTally] = field(default_factory=dict)


@lru_cache(maxsize=1 << 17)
def _is_lean_name(text: str) -> bool:
    # The same few thousand constants are linked over and over (Eq, Nat, HAdd.hAdd, ...).
    try:
        parse_name(text)
    except NameSyntaxError:
        return False
    return True


def _fail(file: DocgenFile, message: str, **details: object) -> LeanIndexError:
    return LeanIndexError(ErrorCode.INVALID_STREAM, f"{file.name}: {message}", {"file": file.name, **details})


def _where(error: ValidationError) -> str:
    first = error.errors()[0]
    location = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ())).lstrip(".")
    return f"{location or 'file'}: {first['msg']}"


def convert_module(file: DocgenFile, base: str = DEFAULT_DOC_BASE) -> ConvertedModule:
    """Read one declaration file and convert every declaration to a `DeclarationRecord`.

    Field by field: `kind` and flags as in the module docstring; `type` = the header's
    signature text (binders and `: type`, see `header.RenderedHeader`); `type_constants` = the
    constants linked from it; `level_params` = [] (doc-gen4 does not list them); `doc` = the
    docstring or None for ""; `range` = the source link's lines, columns None; `module` = the
    file's module; `is_private`/`is_internal`/`is_deprecated` = False (doc-gen4 leaves private
    and internal declarations out and does not say which are deprecated); `source_url` = the
    source link as given; `doc_url` = the doc link resolved against `base` (a doc site base as
    `links.doc_base` returns it); `instance_class` = the `className` of the instance's entry in
    the file's instance table (null for an instance without one, and for other declarations).

    Raises `LeanIndexError(invalid_stream)` naming the file (and the declaration) for: invalid
    JSON, a missing or mistyped field, a module name that differs from the file name, an
    unknown kind, a `decl_kind` text that does not fit the kind, an unreadable header, a name
    or linked constant that is not a Lean name, a source link without a valid line range, or a
    source link or resolved doc link that is no link by `catalog.links.link_problem`
    (`javascript:`, `data:`, control characters...; `details.field` names which), and an
    instance table entry that names no instance of the file, repeats one, or whose class is not
    a Lean name.
    """
    try:
        data = DocgenModule.model_validate_json(file.data)
    except ValidationError as error:
        raise _fail(file, f"not a doc-gen4 declaration file: {_where(error)}") from None
    if data.name != module_of_file(file.name):
        raise _fail(file, f"the file describes module {data.name!r}, not {module_of_file(file.name)!r}")
    converted = ConvertedModule(module=data.name, imports=list(data.imports), records=[])
    parsed = []
    for declaration in data.declarations:
        info = declaration.info
        if info.kind not in _KINDS:
            raise _fail(
                file,
                f"declaration {info.name!r}: unknown kind {info.kind!r} (expected one of {', '.join(DOCGEN_KINDS)})",
                declaration=info.name,
            )
        try:
            components = parse_name(info.name)
        except NameSyntaxError as error:
            raise _fail(file, f"declaration {info.name!r}: not a Lean name ({error})", declaration=info.name) from None
        try:
            header = parse_header(declaration.header)
        except HeaderSyntaxError as error:
            raise _fail(file, f"declaration {info.name!r}: unreadable header: {error}", declaration=info.name) from None
        if not _KINDS[info.kind][2].fullmatch(header.kind_text):
            raise _fail(
                file,
                f"declaration {info.name!r}: header kind {header.kind_text!r} does not fit kind {info.kind!r}",
                declaration=info.name,
            )
        parsed.append((info, components, header))
    # Constructors are declared with their inductive, in the same module.
    unsafe_inductives = {
        components for info, components, header in parsed if info.kind == "inductive" and header.kind_text.startswith("unsafe ")
    }
    classes = _instance_classes(file, data, {info.name for info, _, _ in parsed if info.kind == "instance"})
    for info, components, header in parsed:
        converted.records.append(_record(file, data.name, info, components, header, unsafe_inductives, base, classes.get(info.name)))
        converted.marks.append(operator_marks(header))
        repository = _GITHUB_BLOB.match(info.sourceLink)
        if repository:
            converted.commits.setdefault(repository.group("repo"), set()).add(repository.group("commit"))
    converted.links = file_links(data.name, (header for _, _, header in parsed))
    return converted


def _instance_classes(file: DocgenFile, data: DocgenModule, instances: set[str]) -> dict[str, str]:
    """The file's instance table as instance name -> class name. Raises `invalid_stream` for an
    entry that names no `instance` declaration of the file, a second entry for one instance, or
    a class name that is not a Lean name."""
    classes: dict[str, str] = {}
    for entry in data.instances:
        if entry.name not in instances:
            raise _fail(file, f"instance table entry {entry.name!r} names no instance declared in the file", declaration=entry.name)
        if entry.name in classes:
            raise _fail(file, f"instance {entry.name!r} has two instance table entries", declaration=entry.name)
        if not _is_lean_name(entry.className):
            raise _fail(file, f"instance {entry.name!r}: class {entry.className!r} is not a Lean name", declaration=entry.name)
        classes[entry.name] = entry.className
    return classes


def _record(
    file: DocgenFile,
    module: str,
    info: DocgenInfo,
    components: Components,
    header: RenderedHeader,
    unsafe_inductives: set[Components],
    base: str,
    instance_class: str | None,
) -> DeclarationRecord:
    kind, flags, _ = _KINDS[info.kind]
    for constant in header.constants:
        if not _is_lean_name(constant):
            raise _fail(file, f"declaration {info.name!r}: linked constant {constant!r} is not a Lean name", declaration=info.name)
    lines = _LINE_RANGE.search(info.sourceLink)
    if lines is None:
        raise _fail(file, f"declaration {info.name!r}: source link {info.sourceLink!r} has no #L<start>-L<end> range", declaration=info.name)
    # The links are data of the archive, checked like a stream's: a page must never link script.
    where = {"file": file.name, "declaration": info.name}
    source_url = checked_link(info.sourceLink, f"{file.name}: declaration {info.name!r}: source link",
                              {**where, "field": "source_url"})
    resolved_doc_url = checked_link(doc_url(info.docLink, base), f"{file.name}: declaration {info.name!r}: doc link "
                                    f"{info.docLink[:100]!r} resolved against the doc base", {**where, "field": "doc_url"})
    start, end = int(lines.group(1)), int(lines.group(2))
    if start != info.line or not 1 <= start <= end:
        raise _fail(
            file,
            f"declaration {info.name!r}: source link lines L{start}-L{end} disagree with line {info.line}",
            declaration=info.name,
        )
    if info.kind == "opaque" and info.name in QUOTIENT_CONSTANTS:
        kind = Kind.QUOTIENT
    if info.kind == "class":
        flags = {**flags, "is_structure": header.kind_text == "class"}
    if info.kind == "ctor":
        unsafe = components[:-1] in unsafe_inductives
    else:
        unsafe = header.kind_text.startswith("unsafe ")
    return DeclarationRecord(
        record="declaration",
        name=info.name,
        components=list(components),
        kind=kind,
        module=module,
        type=header.signature,
        type_constants=list(header.constants),
        conclusion_constants=list(header.conclusion_constants),
        conclusion_head=header.conclusion_head,
        level_params=[],
        doc=info.doc or None,
        range=SourceRange(start=Position(line=start, column=None), end=Position(line=end, column=None)),
        is_private=False,
        is_internal=False,
        is_instance=flags.get("is_instance", False),
        is_class=flags.get("is_class", False),
        is_structure=flags.get("is_structure", False),
        is_unsafe=unsafe,
        is_deprecated=False,
        source_url=source_url,
        doc_url=resolved_doc_url,
        instance_class=instance_class,
    )
