"""The search filters, each in one place: the request field it reads, the catalog positions it
admits, and the reason it gives for a matching row (`MatchReason`).

A filter is built for one request on one catalog (`active` says whether the request uses it).
A selective filter lists the sorted unique positions it admits (`positions`: several arrays,
intersected with the other filters' starting from the shortest); a row filter narrows the
intersection (`narrow`). Both kinds answer `reasons` for a row that matched every filter, from
the same rule that selected it. `FILTERS` is the order filters are applied and reasons listed.
A new filter is one more class here and its field on `models.SearchRequest`.

Each filter declares the record fields it can read (`reads`) and says which of them one request
reads (`read`), with the constants it asks of each; `engine.assurance` turns that into the
answer's assurance. A filter on a fact the catalog's source never had (`SourceInfo.absent_facts`:
a kind or flag) refuses the request with `not_recorded` when it is built (`require_facts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..catalog.index import Occurrences, unique_positions
from ..catalog.manifest import flag_fact, kind_fact
from ..errors import ErrorCode, LeanIndexError
from ..models import SEARCH_FLAGS, MatchReason, ResolvedConstant, SearchRequest, UnknownConstant
from ..names import NameSyntaxError, format_name, namespace_key, parse_name
from ..records import FLAG_FIELDS, KIND_ORDER, record_fields
from . import textrank
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
    """One filter of a search on one catalog (subclasses set `field`, the request field, and
    `reads`, every record field the filter can read)."""

    field: ClassVar[str]
    reads: ClassVar[tuple[str, ...]]

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

    def mask(self) -> np.ndarray | None:
        """For a row filter: which of all positions it keeps (a boolean array over the whole
        catalog, the same rule as `narrow`), used when no selective filter starts the search;
        None for a selective filter."""
        return None

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        """Why the stored `row` (a matching declaration) matched this filter."""
        raise NotImplementedError

    def read(self) -> dict[str, list[str] | None]:
        """The record fields this request's use of the filter reads (some of `reads`), each with
        the constants it asks that field for (None: no particular constant, as a kind or a word)."""
        return dict.fromkeys(self.reads)


class NameContains(SearchFilter):
    """`name_contains`: every fragment is a substring of the printed name (suffix-array
    look-ups; with `case_sensitive: false`, on the names with ASCII letters folded to lower case)."""

    field = "name_contains"
    reads = record_fields("name")

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        return request.name_contains is not None

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        #: Per fragment (`request.name_fragments()` order): its occurrences in the index's names
        #: (`SearchIndex.occurrences`: the position owning each, the byte before each), filled by
        #: `positions` and read again by relevance order (`relevance.name_hits`).
        self.occurrences: list[Occurrences] = []

    def positions(self) -> list[np.ndarray]:
        index = self.catalog.index
        self.occurrences = [index.occurrences(fragment, self.request.case_sensitive) for fragment in self.request.name_fragments()]
        return [unique_positions(found.owners, index.size) for found in self.occurrences]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="name_contains", value=f) for f in self.request.name_fragments()]


class Text(SearchFilter):
    """`text`: the declarations having any word of the text (`text_match: "any"`) or every word
    (`"all"`) in their name, namespace, docstring or type, read through the one table of
    mathematical words (`catalog.text`, `engine.textrank`). Raises `invalid_request` for a
    text with no word (only stop words or unknown symbols)."""

    field = "text"
    reads = record_fields("name", "doc", "type")

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        self.query = textrank.TextQuery.read(catalog.text, catalog.index, request.text or "")
        if not self.query.tokens and not self.query.nicknamed:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                "text has no word to search for (only stop words or symbols)",
                {"field": "text", "value": request.text},
            )

    def positions(self) -> list[np.ndarray]:
        return [textrank.match_set(self.catalog.text, self.query, self.request.text_match or "any")]

    def unmatched(self) -> list[str]:
        """The query's words (as written) that no declaration of the catalog has."""
        return textrank.unmatched(self.query)

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="text", value=value) for value in textrank.explain(self.catalog.text, self.query, int(row["pos"]))]


def resolve_constant(catalog: LoadedCatalog, name: str, field: str, where: str = "type") -> tuple[str | None, list[str]]:
    """`name` as a constant some declaration's type (`where="type"`) or value (`"value"`)
    mentions: as given, in Lean's canonical printing, or, when exactly one such constant ends
    with its components (`Measure.map` -> `MeasureTheory.Measure.map`), that one. Returns (the
    constant or None, the constants it could mean when several end so). Raises
    `LeanIndexError(invalid_request)` naming `field` for an unreadable name."""
    if catalog.mentioned(name, where):
        return name, []
    canonical = format_name(parse_request_name(name, field))
    if catalog.mentioned(canonical, where):
        return canonical, []
    candidates = [c for c in catalog.constants_ending_with(canonical) if catalog.mentioned(c, where)]
    return (candidates[0], []) if len(candidates) == 1 else (None, candidates)


class ConstantSet:
    """The constants a request field lists, looked up in one catalog (`resolve_constant`):
    `known` (as stored, in order, without repeats), `resolved` (partly qualified ones and what
    they resolved to) and `unknown` (each with its suggestions: every constant it could mean
    first, then close names). With `exact`, a name for which it holds, as given or in canonical
    printing, is known as it is, before any resolution."""

    def __init__(
        self, catalog: LoadedCatalog, names: list[str], field: str, where: str = "type", exact: Callable[[str], bool] | None = None
    ):
        self.known: list[str] = []
        self.resolved: list[ResolvedConstant] = []
        self.unknown: list[UnknownConstant] = []
        #: Every constant asked for: the known ones and the canonical names of the unknown.
        self.asked: list[str] = []
        for name in dict.fromkeys(names):
            canonical = format_name(parse_request_name(name, field))
            listed = next((n for n in (name, canonical) if exact is not None and exact(n)), None)
            found, candidates = (listed, []) if listed is not None else resolve_constant(catalog, name, field, where)
            if found is None:
                close = catalog.close_constants(canonical)
                self.unknown.append(UnknownConstant(name=canonical, suggestions=list(dict.fromkeys([*candidates, *close]))))
                continue
            if found not in (name, canonical):
                self.resolved.append(ResolvedConstant(given=name, resolved=found))
            if found not in self.known:
                self.known.append(found)
        self.asked = [*self.known, *(u.name for u in self.unknown)]

    def positions(self, catalog: LoadedCatalog, where: str) -> list[np.ndarray]:
        """One posting list per known constant (`where`: type, conclusion or value); none at all
        when a constant is unknown."""
        if self.unknown:
            return [EMPTY]
        return [catalog.index.positions_with_constant(catalog.constant_ids[c], where) for c in self.known]

    def resolution_reasons(self) -> list[MatchReason]:
        """One reason per resolution: `given -> resolved`."""
        return [MatchReason(filter="resolved_constant", value=f"{r.given} -> {r.resolved}") for r in self.resolved]


def _not_recorded(catalog: LoadedCatalog, what: str, field: str, details: dict[str, Any]) -> LeanIndexError:
    """The `not_recorded` refusal of filter `field`, whose catalog does not record `what`."""
    identity = catalog.identity()
    return LeanIndexError(
        ErrorCode.NOT_RECORDED,
        f"{identity.environment} records no {what} (source {identity.source or 'unknown'}), so {field} cannot be answered there",
        {"field": field, **details, "environment": identity.environment, "source": identity.source},
    )


def require_recorded(catalog: LoadedCatalog, what: str, field: str) -> None:
    """Raise `LeanIndexError(not_recorded)` when the catalog's records lack `what`
    (`conclusions` or `value_constants`), which filter `field` needs: such a search would answer
    an empty success that is not true."""
    recorded = catalog.conclusions_recorded() if what == "conclusions" else catalog.values_recorded()
    if not recorded:
        raise _not_recorded(catalog, what, field, {})


def require_facts(catalog: LoadedCatalog, facts: list[str], field: str) -> None:
    """Raise `LeanIndexError(not_recorded)` (`details.fact`: the first, `details.facts`: all)
    when one of `facts` (`SourceInfo.absent_facts` keys such as `kind:recursor` or
    `flag:deprecated`), which filter `field` asks about, is one the catalog's source never had:
    its records would say "none" where the truth is unknown."""
    absent = set(catalog.manifest.source.absent_facts)
    missing = [fact for fact in facts if fact in absent]
    if missing:
        what = " and no ".join(_fact_words(fact) for fact in missing)
        raise _not_recorded(catalog, what, field, {"fact": missing[0], "facts": missing})


def _fact_words(fact: str) -> str:
    """An absent fact's key for people: `kind:recursor` -> `declarations of kind recursor`,
    `flag:deprecated` -> `flag deprecated`."""
    kind, _, value = fact.partition(":")
    return f"declarations of kind {value}" if kind == "kind" else f"flag {value}" if kind == "flag" else fact


class TypeConstants(SearchFilter):
    """`type_pattern`: every `constants` entry occurs in the elaborated type and every
    `conclusion` entry in the conclusion (posting lists). A constant is looked up as
    `resolve_constant` says; one that no type mentions admits nothing and is listed in
    `unknown`. Conclusions need a catalog that records them (`not_recorded` otherwise)."""

    field = "type_pattern"
    reads = record_fields("type_constants", "conclusion_constants")

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        pattern = request.type_pattern
        self.constants = ConstantSet(catalog, (pattern.constants or []) if pattern else [], "type_pattern.constants")
        self.conclusion = ConstantSet(catalog, (pattern.conclusion or []) if pattern else [], "type_pattern.conclusion")
        if pattern is not None and pattern.conclusion:
            require_recorded(catalog, "conclusions", "type_pattern.conclusion")
        self.unknown = [*self.constants.unknown, *self.conclusion.unknown]
        self.resolved = [*self.constants.resolved, *self.conclusion.resolved]

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        return request.type_pattern is not None

    def positions(self) -> list[np.ndarray]:
        return [*self.constants.positions(self.catalog, "type"), *self.conclusion.positions(self.catalog, "conclusion")]

    def read(self) -> dict[str, list[str] | None]:
        pattern = self.request.type_pattern
        read: dict[str, list[str] | None] = {}
        if pattern is not None and pattern.constants:
            read["type_constants"] = self.constants.asked
        if pattern is not None and pattern.conclusion:
            read["conclusion_constants"] = self.conclusion.asked
        return read

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [
            *self.constants.resolution_reasons(),
            *self.conclusion.resolution_reasons(),
            *(MatchReason(filter="type_constant", value=c) for c in self.constants.known),
            *(MatchReason(filter="conclusion_constant", value=c) for c in self.conclusion.known),
        ]


class InstancesOf(SearchFilter):
    """`instances_of`: the instances of a class. Where the catalog records every instance's
    class (the instance table, `catalog.instances`) and the table lists the class (as given, in
    canonical printing, else resolved as a type constant), exactly those it lists. Otherwise
    (no table, or a class the table files under another name: doc-gen4 files
    `instance : DecidableEq Nat` under `Decidable`, the class its abbreviation unfolds to):
    instances (the `instance` flag) whose conclusion's head is the class, which needs recorded
    conclusions (`not_recorded` otherwise) and reads `conclusion_head`, approximate where the
    source prints conclusions (doc-gen4)."""

    field = "instances_of"
    reads = record_fields("instance_class", "conclusion_head", "is_instance")

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        recorded = catalog.instances_recorded()
        exact = catalog.has_instances if recorded else None
        self.constants = ConstantSet(catalog, [request.instances_of or ""], "instances_of", exact=exact)
        # The table's answer is read once here and kept: `positions` would otherwise query it again.
        listed = catalog.instance_positions(self.constants.known[0]) if recorded and self.constants.known else EMPTY
        self.table = len(listed) > 0
        self.listed = listed
        if not self.table:
            require_recorded(catalog, "conclusions", "instances_of")
        self.unknown = self.constants.unknown
        self.resolved = self.constants.resolved

    def read(self) -> dict[str, list[str] | None]:
        return {"instance_class" if self.table else "conclusion_head": self.constants.asked, "is_instance": None}

    def positions(self) -> list[np.ndarray]:
        if self.unknown:
            return [EMPTY]
        if self.table:
            return [self.listed]
        index = self.catalog.index
        heads = np.flatnonzero(np.asarray(index.head) == self.catalog.constant_ids[self.constants.known[0]])
        bit = FLAG_FIELDS.index("is_instance")
        return [heads[((np.asarray(index.flags[heads]) >> bit) & 1).astype(bool)]]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [*self.constants.resolution_reasons(), MatchReason(filter="instance_of", value=self.constants.known[0])]


class UsesConstants(SearchFilter):
    """`uses_constants`: the value uses every constant ("used by"; value posting lists).
    Needs recorded value constants (`not_recorded` otherwise, as in doc-gen4 catalogs)."""

    field = "uses_constants"
    reads = record_fields("value_constants")

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        require_recorded(catalog, "value_constants", "uses_constants")
        self.constants = ConstantSet(catalog, request.uses_constants or [], "uses_constants", where="value")
        self.unknown = self.constants.unknown
        self.resolved = self.constants.resolved

    def positions(self) -> list[np.ndarray]:
        return self.constants.positions(self.catalog, "value")

    def read(self) -> dict[str, list[str] | None]:
        return {"value_constants": self.constants.asked}

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [*self.constants.resolution_reasons(), *(MatchReason(filter="uses_constant", value=c) for c in self.constants.known)]


class NamespacePrefixes(SearchFilter):
    """`namespace_prefixes`: a prefix's components are a proper leading part of the name's
    (a key range of the namespace index; the reasons test membership in the same ranges)."""

    field = "namespace_prefixes"
    # The namespace index is keyed by the name's components.
    reads = record_fields("components")

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
    """`kinds`: the kernel kind is one of those given. A kind the catalog's source never lists
    (`kind:<kind>` among its absent facts) is refused with `not_recorded`."""

    field = "kinds"
    reads = record_fields("kind")

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        require_facts(catalog, [kind_fact(kind) for kind in request.kinds or []], "kinds")

    def _allowed(self) -> np.ndarray:
        allowed = np.zeros(len(KIND_ORDER), dtype=bool)
        allowed[[KIND_ORDER.index(k) for k in self.request.kinds or []]] = True
        return allowed

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        if not len(matches):
            return matches
        return matches[self._allowed()[np.asarray(self.catalog.index.kind[matches])]]

    def mask(self) -> np.ndarray:
        return self._allowed()[np.asarray(self.catalog.index.kind)]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="kind", value=row["kind"])]


def module_matches(module: str, prefix: str) -> bool:
    """True when `module` equals `prefix` or lies under it (`Init.Data` covers `Init.Data.List`)."""
    return module == prefix or module.startswith(prefix + ".")


class ModulePrefixes(SearchFilter):
    """`module_prefixes`: the module equals a prefix or lies under one (a declaration with no
    module matches none)."""

    field = "module_prefixes"
    reads = record_fields("module")

    def _ok(self) -> np.ndarray:
        prefixes = self.request.module_prefixes or []
        # one entry per module id, and a final False that id -1 (no module) lands on
        return np.array([any(module_matches(m, p) for p in prefixes) for m in self.catalog.modules] + [False], dtype=bool)

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        if not len(matches):
            return matches
        return matches[self._ok()[np.asarray(self.catalog.index.module_id[matches])]]

    def mask(self) -> np.ndarray:
        return self._ok()[np.asarray(self.catalog.index.module_id)]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        module = row["module"]
        if module is None:
            return []
        return [MatchReason(filter="module_prefix", value=p) for p in self.request.module_prefixes or [] if module_matches(module, p)]


class Flags(SearchFilter):
    """`flags`: each key given `true` names a flag the record must have, `false` one it must
    not have (the index's flag bits, `records.FLAG_FIELDS` order). A flag the catalog's source
    cannot know (`flag:<key>` among its absent facts) is refused with `not_recorded`, whether
    required or excluded."""

    field = "flags"
    reads = tuple(SEARCH_FLAGS.values())

    def __init__(self, catalog: LoadedCatalog, request: SearchRequest):
        super().__init__(catalog, request)
        require_facts(catalog, [flag_fact(SEARCH_FLAGS[key]) for key in self._wanted()], "flags")

    @classmethod
    def active(cls, request: SearchRequest) -> bool:
        return request.flags is not None and any(v is not None for v in request.flags.model_dump().values())

    def _wanted(self) -> dict[str, bool]:
        assert self.request.flags is not None
        return {key: value for key, value in self.request.flags.model_dump().items() if value is not None}

    def _keeps(self, bits: np.ndarray) -> np.ndarray:
        """Which of the flag words `bits` have every wanted flag set or clear."""
        required = sum(1 << FLAG_FIELDS.index(SEARCH_FLAGS[key]) for key in self._wanted())
        wanted = sum(1 << FLAG_FIELDS.index(SEARCH_FLAGS[key]) for key, value in self._wanted().items() if value)
        return (bits & required) == wanted

    def narrow(self, matches: np.ndarray) -> np.ndarray:
        if not len(matches):
            return matches
        return matches[self._keeps(np.asarray(self.catalog.index.flags[matches]))]

    def mask(self) -> np.ndarray:
        return self._keeps(np.asarray(self.catalog.index.flags))

    def read(self) -> dict[str, list[str] | None]:
        return dict.fromkeys(SEARCH_FLAGS[key] for key in self._wanted())

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="flag", value=f"{key}={'true' if value else 'false'}") for key, value in self._wanted().items()]


#: Every filter, in the order they apply and their reasons are listed.
FILTERS: tuple[type[SearchFilter], ...] = (
    NameContains, Text, TypeConstants, InstancesOf, UsesConstants, NamespacePrefixes, Kinds, ModulePrefixes, Flags,
)
