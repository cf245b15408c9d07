"""What a doc-gen4 import knows its data lacks: absent facts, blind spots, missing and host modules.

- **Absent facts** (`ABSENT_FACTS`): doc-gen4 leaves private and internal declarations out
  (`hidden`; its signatures still link some, `_private.…` names, `casesOn`, `recOn`), never
  lists recursors (`kind:recursor`: `Nat.rec` is linked, never documented), and its data has no
  deprecation (`flag:deprecated`).
- **Blind spots** (`blind_spots`): doc-gen4 prints the big operators without linking the
  constant behind them. A signature *shows* an operator when its symbol is followed by a space
  (the binder form `∑ x ∈ s, f x`, `⋃ i, s i`; not `∑'`, `∑ᶠ`, `⋃₀`, `∏ᶜ`, which are other
  notations for other constants, and linked); it *links* the constant when the constant is
  among its `type_constants`. An operator whose constant fewer than `LINKED_ENOUGH` of the
  signatures showing it link is a blind spot of `type_constants`.
- **Missing modules** (`missing_modules`): modules that the catalog's modules import, or that
  their signatures link into (doc-gen4 links `./A/B.html#N` to constant `N` of module `A.B`),
  without a declaration file in the catalog.
- **Host modules** (`host_modules`): doc-gen4 documents the project it runs in with everything
  it imports, and Lean core always. Given the root components of the profile's own packages
  (`package_roots`, e.g. `Mathlib`), the profile's packages are those, Lean core's
  (`catalog.links.CORE_ROOTS`), and every root their modules import, transitively; a module
  under any other root is the host project's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..catalog.links import CORE_ROOTS
from ..catalog.manifest import HIDDEN_FACT, BlindSpot, HostModule, MissingModule, flag_fact, kind_fact
from ..errors import ErrorCode, LeanIndexError
from ..names import NameSyntaxError, name_sort_key, parse_name
from ..records import Kind, record_fields
from .header import RenderedHeader


@dataclass(frozen=True)
class BigOperator:
    """A big operator: its `symbol`, the `notation` as doc-gen4 prints it, the `constant` it stands for."""

    symbol: str
    notation: str
    constant: str


BIG_OPERATORS: tuple[BigOperator, ...] = (
    BigOperator("∑", "∑ x ∈ s, f x", "Finset.sum"),
    BigOperator("∏", "∏ x ∈ s, f x", "Finset.prod"),
    BigOperator("⨆", "⨆ i, f i", "iSup"),
    BigOperator("⨅", "⨅ i, f i", "iInf"),
    BigOperator("⋃", "⋃ i, s i", "Set.iUnion"),
    BigOperator("⋂", "⋂ i, s i", "Set.iInter"),
)
"""The operators measured on every doc-gen4 import (Mathlib 0cc1f97 links `Finset.sum` in 14 of
the 2,613 signatures showing `∑`; see docs/docgen.md)."""

LINKED_ENOUGH = 0.9
"""An operator is a blind spot when fewer than this share of the signatures showing it link it."""

BLIND_FIELD = record_fields("type_constants")[0]


def absent_facts(produced_kinds: Iterable[Kind], unknown_flags: Iterable[str]) -> list[str]:
    """The absent facts of a doc-gen4 import, sorted: `hidden`, every kind of `records.Kind` not
    in `produced_kinds` (the kinds the converter can give) and every flag field in
    `unknown_flags` (`is_deprecated`)."""
    kinds = [kind_fact(kind) for kind in Kind if kind not in set(produced_kinds)]
    return sorted({HIDDEN_FACT, *kinds, *(flag_fact(flag) for flag in unknown_flags)})


def operator_marks(header: RenderedHeader) -> int:
    """Which big operators a signature shows (bit `2*i` for `BIG_OPERATORS[i]`) and which of
    those it links (bit `2*i+1`)."""
    marks = 0
    for i, operator in enumerate(BIG_OPERATORS):
        if operator.symbol + " " in header.signature:
            marks |= 1 << (2 * i)
            if operator.constant in header.constants:
                marks |= 1 << (2 * i + 1)
    return marks


def blind_spots(marks: Iterable[int]) -> list[BlindSpot]:
    """The blind spots of a catalog from each kept record's `operator_marks`, in `BIG_OPERATORS`
    order: an operator shown by some signature and linked by fewer than `LINKED_ENOUGH` of them."""
    shown = [0] * len(BIG_OPERATORS)
    linked = [0] * len(BIG_OPERATORS)
    for mark in marks:
        if not mark:
            continue
        for i in range(len(BIG_OPERATORS)):
            shown[i] += (mark >> (2 * i)) & 1
            linked[i] += (mark >> (2 * i + 1)) & 1
    return [
        BlindSpot(field=BLIND_FIELD, notation=op.notation, constant=op.constant, signatures=shown[i], linked=linked[i])
        for i, op in enumerate(BIG_OPERATORS)
        if shown[i] and linked[i] < LINKED_ENOUGH * shown[i]
    ]


@dataclass
class LinkTally:
    """Links into one module: the constants linked, and how many declarations link any of them."""

    constants: set[str] = field(default_factory=set)
    declarations: int = 0


def file_links(module: str, headers: Iterable[RenderedHeader]) -> dict[str, LinkTally]:
    """The links of one file's signatures into other modules than its own, by target module."""
    tallies: dict[str, LinkTally] = {}
    for header in headers:
        targets: set[str] = set()
        for target, constant in header.links:
            if target != module:
                tallies.setdefault(target, LinkTally()).constants.add(constant)
                targets.add(target)
        for target in targets:
            tallies[target].declarations += 1
    return tallies


@dataclass
class LinkTargets:
    """Links into modules without a declaration file, gathered file by file as the import reads
    them: a module's tally is dropped once its file is read, so memory holds only the links into
    modules not (yet) read."""

    read: set[str] = field(default_factory=set)
    pending: dict[str, LinkTally] = field(default_factory=dict)

    def add_file(self, module: str, links: Mapping[str, LinkTally]) -> None:
        """Record that `module`'s file was read, with its `file_links`."""
        self.read.add(module)
        self.pending.pop(module, None)
        for target, tally in links.items():
            if target in self.read:
                continue
            kept = self.pending.setdefault(target, LinkTally())
            kept.constants |= tally.constants
            kept.declarations += tally.declarations


def _name_key(name: str) -> tuple:
    try:
        return name_sort_key(parse_name(name))
    except NameSyntaxError:  # linked constants were checked to be names; kept whole otherwise
        return name_sort_key((name,))


def missing_modules(
    imports_of: Mapping[str, Sequence[str]], targets: LinkTargets, dropped_constants: Iterable[Sequence[str]] = ()
) -> list[MissingModule]:
    """Modules imported by a read module (`imports_of`: module -> its imports) or linked into
    (`targets`) that have no file among `imports_of`, sorted by name. `dropped_constants` are
    the `type_constants` of records read but not kept (merged duplicates), which `targets`
    counted and which are taken out of `linking_declarations` again."""
    importers: dict[str, set[str]] = {}
    for module, imports in imports_of.items():
        for imported in imports:
            if imported not in imports_of:
                importers.setdefault(imported, set()).add(module)
    dropped = [set(constants) for constants in dropped_constants]
    found = []
    for module in sorted(set(importers) | {m for m in targets.pending if m not in imports_of}):
        tally = targets.pending.get(module, LinkTally())
        linking = tally.declarations - sum(1 for constants in dropped if constants & tally.constants)
        found.append(
            MissingModule(
                module=module,
                imported_by=sorted(importers.get(module, ())),
                linked_names=sorted(tally.constants, key=_name_key),
                linking_declarations=linking,
            )
        )
    return found


def root_of(module: str) -> str:
    """A module's root component as printed (`Mathlib.Data.Nat` -> `Mathlib`)."""
    return module.split(".", 1)[0]


def check_module_name(value: str, field: str, *, root: bool = False) -> None:
    """Refuse (`invalid_request`, `details.field` = `field`) a `value` that is not a module name
    (dot-separated text components, as Lean prints `Init.Data.List`; none numeric) or, with
    `root`, not a one-component one (`Mathlib`, not `Mathlib.Data` or `3`)."""
    try:
        components = parse_name(value)
    except NameSyntaxError as error:
        problem = str(error)
    else:
        text = bool(components) and all(isinstance(c, str) for c in components)
        if root:
            problem = "" if text and len(components) == 1 else "a package root is one text component"
        else:
            problem = "" if text else "a module name has only text components"
    if problem:
        what = "package root" if root else "module prefix"
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{what} {value!r} is not a module {'root ' if root else ''}name: {problem}",
            {"field": field, "value": value},
        )


def check_package_roots(roots: Sequence[str]) -> None:
    """Refuse (`invalid_request`, `details.field: package_roots`) a package root that is not a
    one-component module name (`check_module_name`)."""
    for root in roots:
        check_module_name(root, "package_roots", root=True)


def host_modules(
    imports_of: Mapping[str, Sequence[str]], declarations: Mapping[str, int], package_roots: Sequence[str] | None
) -> list[HostModule]:
    """The read modules (`imports_of`: module -> its imports) outside the profile's packages
    (see the module docstring), sorted by name, each with its kept declarations
    (`declarations`: module -> count). None for `package_roots`: every module is the profile's.
    Raises `LeanIndexError(invalid_request)` for a package root that no read module has."""
    if package_roots is None:
        return []
    check_package_roots(package_roots)
    present = {root_of(module) for module in imports_of}
    unknown = sorted(set(package_roots) - present)
    if unknown:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"no module read lies under the package root {', '.join(unknown)}",
            {"field": "package_roots", "package_roots": unknown},
        )
    roots = set(package_roots) | CORE_ROOTS
    grown = True
    while grown:
        reached = {root_of(i) for module, imports in imports_of.items() if root_of(module) in roots for i in imports}
        grown = not reached <= roots
        roots |= reached
    return [
        HostModule(module=module, declarations=declarations.get(module, 0))
        for module in sorted(imports_of)
        if root_of(module) not in roots
    ]
