"""The search filters, each in one place: the request field it reads, the catalog positions it
admits, and the reason it gives for a matching row (`MatchReason`).

A filter is built for one request on one catalog (`active` says whether the request uses it).
A selective filter lists the sorted unique positions it admits (`positions`: several arrays,
intersected with the other filters' starting from the shortest); a row filter narrows the
intersection (`narrow`). Both kinds answer `reasons` for a row that matched every filter, from
the same rule that selected it. `FILTERS` is the order filters are applied and reasons listed.
A new filter is one more class here and its field on `models.SearchRequest`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..catalog.index import unique_positions
from ..errors import ErrorCode, LeanIndexError
from ..models import MatchReason, SearchRequest, UnknownConstant
from ..names import NameSyntaxError, format_name, namespace_key, parse_name
from ..records import KIND_ORDER
from .loaded import LoadedCatalog

EMPTY = np.empty(0, dtype=np.int64)


def parse_request_name(name: str, field: str) -> tuple[str | int, ...]:
    """The components of a name given in request field `field`; raises
    `LeanIndexError(invalid_request)` naming the field when it cannot be read as a Lean name."""
    try:
        return parse_name(name)
    except NameSyntaxError as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"{field}: {error}", {"field": field, "value": name}) from None


def _contains(positions: np.ndarray, pos: int) -> bool:
    at = int(np.searchsorted(positions, pos))
    return at < len(positions) and int(positions[at]) == pos


class SearchFilter:
    """One filter of a search on one catalog (subclasses set `field`, the request field)."""

    field: ClassVar[str]

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        self.catalog = catalog
        self.request = request

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        """True when `request` gives this filter's field."""
        return bool(getattr(request, cls.field))

    def positions(self) -> list[np.ndarray]:
        """Sorted unique position arrays, all of which a match must be in (none: not selective)."""
        return []

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        """The sorted `matches` this filter keeps (row filters; selective ones keep all)."""
        return matches

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        """Why the stored `row` (a matching declaration) matched this filter."""
        raise NotImplementedError


class NameContains(SearchFilter):
    """`name_contains`: a case-sensitive substring of the printed name (suffix-array look-up)."""

    field = "name_contains"

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        return request.name_contains is not None

    def positions(self) -> list[np.ndarray]:
        return [self.catalog.index.positions_containing(self.request.name_contains or "")]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="name_contains", value=self.request.name_contains or "")]


class TypeConstants(SearchFilter):
    """`type_pattern.constants`: every constant occurs in the elaborated type (posting lists).
    A constant is looked up as given, then in Lean's canonical printing; one that no type
    mentions admits nothing and is listed in `unknown` with close known names."""

    field = "type_pattern"

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        self.known: list[str] = []
        self.unknown: list[UnknownConstant] = []
        self._positions: list[np.ndarray] = []
        for name in dict.fromkeys(request.type_pattern.constants if request.type_pattern else []):
            constant_id = catalog.constant_ids.get(name)
            if constant_id is None:
                name = format_name(parse_request_name(name, "type_pattern.constants"))
                constant_id = catalog.constant_ids.get(name)
            if constant_id is None:
                self.unknown.append(UnknownConstant(name=name, suggestions=catalog.close_constants(name)))
                self._positions.append(EMPTY)
            else:
                self.known.append(name)
                self._positions.append(catalog.index.positions_with_constant(constant_id))

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        return request.type_pattern is not None

    def positions(self) -> list[np.ndarray]:
        return self._positions

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="type_constant", value=c) for c in self.known]


class NamespacePrefixes(SearchFilter):
    """`namespace_prefixes`: a prefix's components are a proper leading part of the name's
    (a key range of the namespace index; the reasons test membership in the same ranges)."""

    field = "namespace_prefixes"

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        index = catalog.index
        # One entry per prefix as given, repeats included: each gives its own match reason.
        self.inside = [
            (prefix, index.positions_in_namespace(namespace_key(parse_request_name(prefix, "namespace_prefixes"))))
            for prefix in request.namespace_prefixes or []
        ]

    def positions(self) -> list[np.ndarray]:
        index = self.catalog.index
        return [unique_positions(np.concatenate([inside for _, inside in self.inside]), index.size)]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        pos = int(row["pos"])
        return [MatchReason(filter="namespace_prefix", value=p) for p, inside in self.inside if _contains(inside, pos)]


class Kinds(SearchFilter):
    """`kinds`: the kernel kind is one of those given."""

    field = "kinds"

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        if not len(matches):
            return matches
        allowed = np.zeros(len(KIND_ORDER), dtype=bool)
        allowed[[KIND_ORDER.index(k) for k in self.request.kinds or []]] = True
        return matches[allowed[np.asarray(self.catalog.index.kind[matches])]]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="kind", value=row["kind"])]


def module_matches(module: str, prefix: str) -> bool:
    """True when `module` equals `prefix` or lies under it (`Init.Data` covers `Init.Data.List`)."""
    return module == prefix or module.startswith(prefix + ".")


class ModulePrefixes(SearchFilter):
    """`module_prefixes`: the module equals a prefix or lies under one (a declaration with no
    module matches none)."""

    field = "module_prefixes"

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        if not len(matches):
            return matches
        prefixes = self.request.module_prefixes or []
        ok = np.array([any(module_matches(m, p) for p in prefixes) for m in self.catalog.modules] + [False], dtype=bool)
        return matches[ok[np.asarray(self.catalog.index.module_id[matches])]]  # id -1 lands on the final False

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        module = row["module"]
        if module is None:
            return []
        return [MatchReason(filter="module_prefix", value=p) for p in self.request.module_prefixes or [] if module_matches(module, p)]


#: Every filter, in the order they apply and their reasons are listed.
FILTERS: tuple[type[SearchFilter], ...] = (NameContains, TypeConstants, NamespacePrefixes, Kinds, ModulePrefixes)
