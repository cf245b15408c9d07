"""Exact inspect over one loaded catalog (DESIGN.md inspect contract), one name at a time or up
to `models.MAX_LOOKUP_NAMES` at once, in full (`inspect_many`) or compactly (`exists`).

Every look-up follows one rule (`_resolved`): the name as given, then in Lean's canonical
printing; else `missing_module` when it is a linked name of a module the catalog lacks, else
`not_found` with close names. A batch answers each name with what a single inspect answers or
raises for it; only those per-name refusals (`PER_NAME_CODES`) become entries, anything else
fails the call. Close names (`not_found`'s and `not_recorded`'s `suggestions`, a batch entry's
`closest`) follow the checker's rule for unknown identifiers, on every path
(`suggest.NameTable.suggest`: the names it ends, then those of its namespace close to it or
sharing its first word, then the last components within a small edit distance elsewhere; about
a millisecond a name once the catalog's name table is built).

Nothing is read from the database: a name's position comes from the index's name hashes, its
record from the result blocks and the record blocks (`catalog.records`), its instance count
from the index's class arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from ..catalog.records import find_name, read_record
from ..errors import ErrorCode, LeanIndexError
from ..models import (
    INSPECT_RECORD_FIELDS,
    LOOKUP_COUNT_KEYS,
    DeclarationFlags,
    ExistsRequest,
    ExistsResponse,
    ExistsResult,
    InspectManyRequest,
    InspectManyResponse,
    InspectManyResult,
    InspectRequest,
    InspectResponse,
    LookupErrorCode,
    display_profile,
)
from ..names import format_name, printed_namespace
from ..records import FLAG_FIELDS, KIND_ORDER, DeclarationRecord
from .assurance import completeness
from .filters import parse_request_name
from .loaded import LoadedCatalog

T = TypeVar("T")

#: The errors a batch look-up answers in a name's entry (what a single inspect raises for that
#: name); any other error fails the whole call.
PER_NAME_CODES = frozenset({ErrorCode.NOT_FOUND, ErrorCode.MISSING_MODULE, ErrorCode.NOT_RECORDED, ErrorCode.INVALID_REQUEST})


def inspect(catalog: LoadedCatalog, request: InspectRequest) -> InspectResponse:
    """Everything the catalog holds about `request.declaration_name`.

    The name is looked up as given, then in Lean's canonical printing (so `«Nat».succ` finds
    `Nat.succ`). Raises `LeanIndexError`: `missing_module` when it is not in the catalog but
    is a declaration of a module the catalog lacks (known from the links in its signatures:
    `CatalogGaps.missing_modules`), with `details.module` and `details.linked_from` (up to
    `LINKED_FROM_LIMIT` visible declarations whose types mention it, in `Name.lt` order);
    `not_recorded` when it is a constant the catalog's types mention that its source leaves
    out (`_refuse_unrecorded`: `Nat.rec` in a doc-gen4 catalog), with `details.absent_facts`,
    `details.linked_from` and `details.suggestions` (close names); `not_found` with `details.suggestions` (close names) and `details.missing_modules` (the
    modules the catalog lacks, which could declare it; empty for a catalog without gaps) when it
    is not in the catalog otherwise; `invalid_request` when it cannot be read as a name.
    """
    position = _resolved(catalog, request.declaration_name, "declaration_name", lambda name: _position(catalog, name), _batch_suggestions(catalog))
    return _answer(catalog, position)


def inspect_many(catalog: LoadedCatalog, request: InspectManyRequest) -> InspectManyResponse:
    """`inspect` of every name of `request.names`, in order: each entry holds its answer, or the
    `not_found`/`missing_module`/`invalid_request` error `inspect` raises for it (with
    `details.field` `names` for an unreadable name, and the batch's close names as a
    `not_found`'s `suggestions`) and its `closest` names (`_batch_suggestions`). Raises any other
    `LeanIndexError` for the whole call."""
    results = []
    for name in request.names:
        try:
            position = _resolved(catalog, name, "names", lambda text: _position(catalog, text), _batch_suggestions(catalog))
        except LeanIndexError as error:
            results.append(InspectManyResult(name=name, error=_per_name(error).body(), closest=_closest(catalog, name, error)))
            continue
        results.append(InspectManyResult(name=name, response=_answer(catalog, position)))
    return InspectManyResponse(**_summary(catalog, [r.error.code if r.error else None for r in results]), results=results)


def exists(catalog: LoadedCatalog, request: ExistsRequest) -> ExistsResponse:
    """Whether each name of `request.names` is a declaration of the catalog, in order, by the
    rule of `inspect` but read from the name index (`_position`, then the kind and module
    arrays; no record is read): `exists`, `kind` and `module` for a found name; else
    `error_code` (`not_found`, `missing_module` with the lacking module as `module`, or
    `invalid_request`) and the `closest` names `inspect_many` gives. Raises any other
    `LeanIndexError` for the whole call."""
    index = catalog.index
    results = []
    for name in request.names:
        try:
            position = _resolved(catalog, name, "names", lambda text: _position(catalog, text), _batch_suggestions(catalog))
        except LeanIndexError as error:
            code = _per_name(error).code
            module = error.details.get("module") if code is ErrorCode.MISSING_MODULE else None
            results.append(
                ExistsResult(
                    name=name, exists=False, kind=None, module=module, closest=_closest(catalog, name, error),
                    error_code=cast(LookupErrorCode, code.value),  # one of `PER_NAME_CODES`, by `_per_name`
                )
            )
            continue
        module_id = int(index.module_id[position])
        results.append(
            ExistsResult(
                name=name, exists=True, kind=KIND_ORDER[int(index.kind[position])], module=catalog.modules[module_id] if module_id >= 0 else None
            )
        )
    return ExistsResponse(**_summary(catalog, [r.error_code for r in results]), results=results)


def _resolved(catalog: LoadedCatalog, name: str, field: str, find: Callable[[str], T | None], suggest: Callable[[str], list[str]]) -> T:
    """`find(name)`, else `find` of `name`'s canonical printing (`find` returns None for a name
    the catalog does not hold). Raises `LeanIndexError`: `invalid_request` (`details.field` =
    `field`) when neither finds it and it cannot be read as a name; `missing_module` or
    `not_found` (`details.suggestions` = `suggest(name)`) as `inspect` says."""
    found = find(name)
    if found is not None:
        return found
    canonical = format_name(parse_request_name(name, field))
    found = find(canonical)
    if found is not None:
        return found
    _refuse_missing_module(catalog, name, canonical)
    _refuse_unrecorded(catalog, name, canonical, suggest)
    suggestions = suggest(name)
    missing = [gap.module for gap in catalog.manifest.gaps.missing_modules]
    absent = list(catalog.manifest.source.absent_facts)
    # The catalog cannot rule out a declaration of a module it lacks, nor one its source leaves out: say so.
    doubts = []
    if missing:
        doubts.append(f"it lacks {len(missing)} module(s) it imports or links")
    if absent:
        doubts.append(f"its source does not record {', '.join(absent)}")
    caveat = f" ({'; '.join(doubts)}: the name may be one of those)" if doubts else ""
    raise LeanIndexError(
        ErrorCode.NOT_FOUND,
        f"{name!r} is not a declaration of {display_profile(catalog.paths.profile)}{caveat}",
        {"declaration_name": name, "suggestions": suggestions, "missing_modules": missing, "absent_facts": absent},
    )


def _answer(catalog: LoadedCatalog, position: int) -> InspectResponse:
    """The inspect answer of the declaration at `position` (`_stored_row`)."""
    row = _stored_row(catalog, position)
    return InspectResponse(
        **catalog.identity().model_dump(),
        # An optional field the stored line leaves out has the record model's default.
        **{name: row.get(name, DeclarationRecord.model_fields[name].get_default()) for name in INSPECT_RECORD_FIELDS},
        namespace=row["namespace"],
        flags=DeclarationFlags(**{flag: row.get(flag, False) for flag in FLAG_FIELDS}),
        **_dependencies(catalog, position, row),
    )


def _per_name(error: LeanIndexError) -> LeanIndexError:
    """`error` when a batch answers it in the name's entry (`PER_NAME_CODES`); raises it otherwise."""
    if error.code not in PER_NAME_CODES:
        raise error
    return error


def _batch_suggestions(catalog: LoadedCatalog) -> Callable[[str], list[str]]:
    """The close names of a look-up, single or batch (see the module docstring): up to
    `suggest.MAX_SUGGESTIONS` visible names, best first. The name table is built at the first
    name that needs it (once per loaded catalog), so a batch of found names never builds it."""
    return lambda name: catalog.name_table().suggest(name)


def _closest(catalog: LoadedCatalog, name: str, error: LeanIndexError) -> list[str]:
    """The `closest` names of a name a batch refused with `error`: a `not_found`'s or
    `not_recorded`'s suggestions, else `_batch_suggestions`'."""
    if error.code in (ErrorCode.NOT_FOUND, ErrorCode.NOT_RECORDED):
        return list(error.details["suggestions"])
    return _batch_suggestions(catalog)(name)


def _summary(catalog: LoadedCatalog, codes: list[str | None]) -> dict[str, Any]:
    """The identity, `counts` (per `LOOKUP_COUNT_KEYS`) and completeness fields of a batch
    answer whose entries ended with `codes` (None: found): `PARTIAL` when some name is
    `not_found` while the catalog lacks modules."""
    counts = dict.fromkeys(LOOKUP_COUNT_KEYS, 0)
    for code in codes:
        counts[code or "found"] += 1
    missing = [gap.module for gap in catalog.manifest.gaps.missing_modules]
    return {
        **catalog.identity().model_dump(),
        "counts": counts,
        "completeness": completeness(False, missing if counts[ErrorCode.NOT_FOUND.value] else []),
        "missing_modules": missing,
    }


#: Most declarations a `missing_module` error names as linking the name.
LINKED_FROM_LIMIT = 10


def _linking(catalog: LoadedCatalog, name: str) -> tuple[int, list[str]]:
    """How many visible declarations mention `name` in their types, and the first
    `LINKED_FROM_LIMIT` of them (`Name.lt` order)."""
    index = catalog.index
    constant_id = catalog.constant_ids.get(name)
    linking = index.positions_with_constant(constant_id, "type") if constant_id is not None else np.empty(0, dtype=np.int64)
    visible = linking[~np.asarray(index.hidden[linking], dtype=bool)] if len(linking) else linking
    names = catalog.all_names()
    return len(visible), [names[int(p)] for p in visible[:LINKED_FROM_LIMIT]]


def _refuse_missing_module(catalog: LoadedCatalog, given: str, canonical: str) -> None:
    """Raise `missing_module` when `given` or `canonical` is a linked name of one of the
    catalog's missing modules (see `inspect`); return otherwise."""
    for name in dict.fromkeys([given, canonical]):
        module = catalog.missing_module_of(name)
        if module is None:
            continue
        count, linked_from = _linking(catalog, name)
        examples = f", e.g. {', '.join(linked_from[:3])}" if linked_from else ""
        raise LeanIndexError(
            ErrorCode.MISSING_MODULE,
            f"{name!r} is a declaration of module {module}, which {display_profile(catalog.paths.profile)} imports or links "
            f"but holds no declaration of; {count} declaration(s) of the catalog mention it in their types{examples}",
            {"declaration_name": given, "module": module, "linked_from": linked_from},
        )


def _refuse_unrecorded(catalog: LoadedCatalog, given: str, canonical: str, suggest: Callable[[str], list[str]]) -> None:
    """Raise `not_recorded` when `given` or `canonical` is a constant the catalog's types
    mention but not one of its declarations, and its source leaves some declarations out
    (`SourceInfo.absent_facts`: doc-gen4 lists no recursors such as `Nat.rec`, no private or
    auxiliary declarations): the constant exists, the catalog cannot show it; its
    `details.suggestions` are `suggest(given)`, the close names it can show. Return otherwise."""
    absent = catalog.manifest.source.absent_facts
    if not absent:
        return
    for name in dict.fromkeys([given, canonical]):
        if name not in catalog.constant_ids:
            continue
        count, linked_from = _linking(catalog, name)
        identity = catalog.identity()
        raise LeanIndexError(
            ErrorCode.NOT_RECORDED,
            f"{name!r} is a constant {count} declaration(s) of {identity.environment} mention in their types, but not one of "
            f"its declarations: its source ({identity.source or 'unknown'}) does not record {', '.join(absent)}",
            {"declaration_name": given, "absent_facts": list(absent), "linked_from": linked_from, "suggestions": suggest(given)},
        )


def _dependencies(catalog: LoadedCatalog, position: int, row: dict[str, Any]) -> dict[str, Any]:
    """`uses` (type and value constants, sorted), `used_by_count` (declarations whose value
    uses this one) and, for a class, `instance_count` (the instances the instance table lists
    for it; without that table, the instances whose conclusion's head it is); each null when
    the catalog does not record what it needs."""
    index = catalog.index
    constant_id = catalog.constant_ids.get(row["name"])
    values = row.get("value_constants")
    recorded = catalog.values_recorded()
    instance_count = None
    if row.get("is_class") and catalog.instances_recorded():
        instance_count = catalog.instance_count(position)
    elif row.get("is_class") and catalog.conclusions_recorded():
        instance_count = 0
        if constant_id is not None:
            heads = np.flatnonzero(np.asarray(index.head) == constant_id)
            instance_count = int(((np.asarray(index.flags[heads]) >> FLAG_FIELDS.index("is_instance")) & 1).sum())
    return {
        "uses": sorted({*row["type_constants"], *values}) if recorded and values is not None else None,
        "used_by_count": (len(index.posting_list(constant_id, "value")) if constant_id is not None else 0) if recorded else None,
        "instance_count": instance_count,
    }


def _position(catalog: LoadedCatalog, name: str) -> int | None:
    """The position of the declaration printed exactly `name`, or None (`records.find_name`)."""
    index = catalog.index
    return find_name(index.name_hashes, index.name_hash_positions, index.names, index.name_starts, name)


def _stored_row(catalog: LoadedCatalog, position: int) -> dict[str, Any]:
    """The stored record at `position` (a valid position) as `{field: value}`: the result
    fields (`rows.RESULT_FIELDS`) and the rest of the record line (`records.read_record`; a
    field the line lacks is absent), with its namespace. The builder checked that the name
    reads back to exactly the record's components."""
    index = catalog.index
    row = index.result_rows(np.array([position], dtype=np.int64))[position]
    row.update(read_record(index.record_blocks, index.record_block_starts, index.record_row_offsets, position))
    row["namespace"] = printed_namespace(row["name"], row["components"])
    return row
