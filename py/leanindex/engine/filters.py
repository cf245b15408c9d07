"""The search filters, each in one place: the request field it reads, the catalog positions it
admits, and the reason it gives for a matching row (`MatchReason`).

A filter is built for one request on one catalog (`active` says whether the request uses it).
It states what it admits as terms (`terms`: each a `Term`, all of which a match must satisfy):
a term says how many positions it admits at most, cheaply (`estimate`), and answers as sorted
positions (`sparse`), as a mask over the catalog (`dense`) or for given candidates (`probe`),
so `engine.search` can start from the most selective term and test the others only on what is
left, without reading rows. Every filter answers `reasons` for a row that matched every filter,
from the same rule that selected it. `FILTERS` is the order filters are built and reasons
listed. A new filter is one more class here and its field on `models.SearchRequest`.

Each filter declares the record fields it can read (`reads`) and says which of them one request
reads (`read`), with the constants it asks of each; `engine.assurance` turns that into the
answer's assurance. A filter on a fact the catalog's source never had (`SourceInfo.absent_facts`:
a kind or flag) refuses the request with `not_recorded` when it is built (`require_facts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..catalog.index import Occurrences, SearchIndex, unique_positions
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


#: A term admitting at least one position in this many is answered as a mask (`Term.dense_first`).
DENSE_FRACTION = 64
#: A sorted list this many times longer than the candidates is probed by binary search.
PROBE_SEARCH_RATIO = 32


def _member(sorted_positions: np.ndarray, candidates: np.ndarray, size: int) -> np.ndarray:
    """For each of `candidates` (sorted), whether it is in `sorted_positions` (sorted unique):
    a binary search each into a much longer list, else a mask over the catalog."""
    if len(sorted_positions) > PROBE_SEARCH_RATIO * len(candidates):
        at = np.searchsorted(sorted_positions, candidates)
        at[at == len(sorted_positions)] = 0
        return np.asarray(sorted_positions[at] == candidates) if len(sorted_positions) else np.zeros(len(candidates), dtype=bool)
    return _scattered(sorted_positions, size)[candidates]


def _scattered(positions: np.ndarray, size: int) -> np.ndarray:
    """A mask over `size` positions, True at `positions`."""
    mask = np.zeros(size, dtype=bool)
    mask[positions] = True
    return mask


class Term:
    """One condition on positions (a filter's, `SearchFilter.terms`): `estimate` is an upper
    bound on how many positions it admits, known without computing them. A term answers as
    sorted unique int64 positions (`sparse`), as a bool mask over the catalog (`dense`; possibly
    an array the index keeps: never written to), or, for sorted candidates, whether each is
    admitted (`probe`). `dense_first`: its cheapest whole answer is the mask."""

    def __init__(self, estimate: int, size: int):
        self.estimate = estimate
        self.size = size

    @property
    def dense_first(self) -> bool:
        return self.estimate * DENSE_FRACTION >= self.size

    def sparse(self) -> np.ndarray:
        return np.flatnonzero(self.dense())

    def dense(self) -> np.ndarray:
        return _scattered(self.sparse(), self.size)

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        return self.dense()[candidates]


class PositionsTerm(Term):
    """The positions of a sorted array (unique; int32 or int64), as a posting list holds them."""

    def __init__(self, positions: np.ndarray, size: int):
        super().__init__(len(positions), size)
        self.positions = positions

    def sparse(self) -> np.ndarray:
        return np.asarray(self.positions, dtype=np.int64)

    def dense(self) -> np.ndarray:
        return _scattered(self.positions, self.size)

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        return _member(self.positions, candidates, self.size)


class PostingTerm(PositionsTerm):
    """The positions whose type, conclusion or value (`where`) mentions one constant: its
    posting list, as stored; as a mask, the index's kept one (`SearchIndex.posting_mask`)."""

    def __init__(self, index: SearchIndex, constant_id: int, where: str):
        super().__init__(index.posting_list(constant_id, where), index.size)
        self.index, self.constant_id, self.where = index, constant_id, where

    def dense(self) -> np.ndarray:
        return self.index.posting_mask(self.constant_id, self.where)

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        kept = self.index.mask_kept(("posting", self.constant_id, self.where))
        if self.dense_first and (kept or len(self.positions) <= PROBE_SEARCH_RATIO * len(candidates)):
            return self.dense()[candidates]
        return super().probe(candidates)


class FragmentTerm(Term):
    """The names containing one `name_contains` fragment. The estimate is its occurrence count
    (the size of its suffix-array range: two binary searches). Whole answers come from its
    occurrences' owners; for a fragment in at least one name in `DENSE_FRACTION`, from a mask the
    index keeps (`byte_mask` for one byte, `SearchIndex.kept_array` otherwise; a fragment in one name in
    `KEPT_FRAGMENT_FRACTION` keeps its mask too, once built). Candidates are probed from that
    mask when it is kept, else by reading their own names when that costs less than finding
    every occurrence's owner (`NAME_PROBE_RATIO`)."""

    def __init__(self, index: SearchIndex, fragment: str, case_sensitive: bool):
        self.index, self.fragment, self.case_sensitive = index, fragment, case_sensitive
        # The range is kept: the occurrences are read from it without searching the suffix array again.
        self.places = index.suffix_range(fragment, case_sensitive)
        super().__init__(self.places[1] - self.places[0], index.size)
        self.found: Occurrences | None = None
        needle = fragment.encode()
        self.byte = needle.lower()[0] if len(needle) == 1 and not case_sensitive else needle[0] if len(needle) == 1 else None

    def occurrences(self) -> Occurrences:
        """The fragment's occurrences (`SearchIndex.occurrences`), looked up once."""
        if self.found is None:
            self.found = self.index.occurrences(self.fragment, self.case_sensitive, self.places)
        return self.found

    def _byte_mask(self) -> np.ndarray | None:
        if self.byte is None or not self.dense_first:
            return None
        return self.index.byte_mask(self.byte, self.case_sensitive)

    def _keeps_mask(self) -> bool:
        """Whether its mask, once built, is kept (`kept_array`): a fragment in at least one
        name in `KEPT_FRAGMENT_FRACTION` (a one-byte fragment answered by `byte_mask` aside)."""
        return self.estimate * KEPT_FRAGMENT_FRACTION >= self.size

    def sparse(self) -> np.ndarray:
        if self.dense_first or self.index.mask_kept(self._mask_key()):
            return np.flatnonzero(self.dense())
        if self._keeps_mask():
            # Kept as sorted positions too: a plan that starts from this fragment never builds its mask.
            key = ("positions", *self._mask_key()[1:])
            return self.index.kept_array(key, lambda: unique_positions(self.occurrences().owners, self.size))
        return unique_positions(self.occurrences().owners, self.size)

    def dense(self) -> np.ndarray:
        mask = self._byte_mask()
        if mask is not None:
            return mask
        if self._keeps_mask():
            return self.index.kept_array(self._mask_key(), lambda: _scattered(self.occurrences().owners, self.size))
        return _scattered(self.occurrences().owners, self.size)

    def _mask_key(self) -> tuple[object, ...]:
        """The key of its kept mask (`SearchIndex.mask_kept`)."""
        if self.byte is not None and self.dense_first:
            return ("byte", self.byte, self.case_sensitive)
        needle = self.fragment.encode()
        return ("fragment", needle if self.case_sensitive else needle.lower(), self.case_sensitive)

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        kept = self.index.mask_kept(self._mask_key())
        if not kept and self.found is None and len(candidates) * NAME_PROBE_RATIO < self.estimate:
            return self.index.names_contain(candidates, self.fragment, self.case_sensitive)
        return self.dense()[candidates]


#: A fragment in at least one name in this many keeps its mask once built (`kept_array`,
#: within the index's `KEPT_MASK_BYTES`): building it costs what scattering its owners for one
#: search does, and the next search with it (a common fragment: `mul_`, `_of_`) reads it instead
#: of sorting or scattering its occurrences again.
KEPT_FRAGMENT_FRACTION = 1024
#: Candidates are probed by reading their names when they are fewer than the fragment's
#: occurrences / this: on the 800k synthetic catalog a name read costs about 450 ns, an
#: occurrence's owner 10 ns with the suffix array in the page cache and 140 ns without.
NAME_PROBE_RATIO = 16


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

    def terms(self) -> list[Term]:
        """The terms a match must all satisfy (at least one)."""
        raise NotImplementedError

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
        #: One term per fragment (`request.name_fragments()` order).
        self.fragments = [FragmentTerm(catalog.index, f, request.case_sensitive) for f in request.name_fragments()]

    @property
    def occurrences(self) -> list[Occurrences] | None:
        """Each fragment's occurrences (`SearchIndex.occurrences`) when the search looked them
        all up, for relevance order to read again (`relevance.name_hits`); None otherwise."""
        found = [term.found for term in self.fragments]
        return None if any(f is None for f in found) else found  # type: ignore[return-value]

    def terms(self) -> list[Term]:
        return list(self.fragments)

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

    def terms(self) -> list[Term]:
        return [PositionsTerm(textrank.match_set(self.catalog.text, self.query, self.request.text_match or "any"), self.catalog.index.size)]

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

    def terms(self, catalog: LoadedCatalog, where: str) -> list[Term]:
        """One posting list per known constant (`where`: type, conclusion or value), as stored
        (no copy); one empty term when a constant is unknown."""
        size = catalog.index.size
        if self.unknown:
            return [PositionsTerm(EMPTY, size)]
        return [PostingTerm(catalog.index, catalog.constant_ids[c], where) for c in self.known]

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

    def terms(self) -> list[Term]:
        return [*self.constants.terms(self.catalog, "type"), *self.conclusion.terms(self.catalog, "conclusion")]

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

    def terms(self) -> list[Term]:
        index = self.catalog.index
        if self.unknown:
            return [PositionsTerm(EMPTY, index.size)]
        if self.table:
            return [PositionsTerm(self.listed, index.size)]
        heads = np.flatnonzero(np.asarray(index.head) == self.catalog.constant_ids[self.constants.known[0]])
        bit = FLAG_FIELDS.index("is_instance")
        return [PositionsTerm(heads[((np.asarray(index.flags[heads]) >> bit) & 1).astype(bool)], index.size)]

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

    def terms(self) -> list[Term]:
        return self.constants.terms(self.catalog, "value")

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
        self.ranges = [
            (prefix, index.namespace_range(namespace_key(parse_request_name(prefix, "namespace_prefixes"))))
            for prefix in request.namespace_prefixes or []
        ]

        self._sorted: dict[tuple[int, int], np.ndarray] = {}

    def terms(self) -> list[Term]:
        index = self.catalog.index
        return [NamespaceTerm(index, list(dict.fromkeys(r for _, r in self.ranges)))]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        if len(self.ranges) == 1:  # a match lies in the one namespace given
            return [MatchReason(filter="namespace_prefix", value=self.ranges[0][0])]
        pos = int(row["pos"])
        return [MatchReason(filter="namespace_prefix", value=p) for p, r in self.ranges if _contains(self._inside(r), pos)]

    def _inside(self, at: tuple[int, int]) -> np.ndarray:
        """The sorted positions of one namespace range, sorted once per search."""
        if at not in self._sorted:
            self._sorted[at] = np.sort(np.asarray(self.catalog.index.ns_pos[at[0] : at[1]]))
        return self._sorted[at]


class NamespaceTerm(Term):
    """The positions strictly inside any of some namespaces, each a range of the namespace
    index (`SearchIndex.namespace_range`): its length is the estimate (nested or repeated
    prefixes may count a position twice), and the positions are sorted only when the term
    starts the search."""

    def __init__(self, index: SearchIndex, ranges: list[tuple[int, int]]):
        super().__init__(sum(hi - lo for lo, hi in ranges), index.size)
        self.index, self.ranges = index, ranges

    def _unsorted(self) -> np.ndarray:
        return np.concatenate([np.asarray(self.index.ns_pos[lo:hi]) for lo, hi in self.ranges]) if self.ranges else EMPTY

    def sparse(self) -> np.ndarray:
        if len(self.ranges) == 1:  # one range lists each of its positions once
            return np.sort(self._unsorted()).astype(np.int64)
        return unique_positions(self._unsorted(), self.size)

    def dense(self) -> np.ndarray:
        return _scattered(self._unsorted(), self.size)


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

    def terms(self) -> list[Term]:
        return [KindsTerm(self.catalog.index, self._allowed())]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="kind", value=row["kind"])]


class KindsTerm(Term):
    """The positions whose kind code is allowed (`allowed`, one bool per code): the estimate
    is exact (the index's kind counts), a mask is the index's kept mask of each kind."""

    def __init__(self, index: SearchIndex, allowed: np.ndarray):
        counts = index.kind_counts()
        self.codes = [int(c) for c in np.flatnonzero(allowed[: len(counts)])]
        super().__init__(int(sum(counts[c] for c in self.codes)), index.size)
        self.index, self.allowed = index, allowed

    def dense(self) -> np.ndarray:
        if len(self.codes) == 1:
            return self.index.kind_mask(self.codes[0])
        mask = np.zeros(self.size, dtype=bool)
        for code in self.codes:
            mask |= self.index.kind_mask(code)
        return mask

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        return self.allowed[np.asarray(self.index.kind[candidates])]


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

    def terms(self) -> list[Term]:
        return [ModulesTerm(self.catalog.index, self._ok())]

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        module = row["module"]
        if module is None:
            return []
        return [MatchReason(filter="module_prefix", value=p) for p in self.request.module_prefixes or [] if module_matches(module, p)]


class ModulesTerm(Term):
    """The positions whose module id is allowed (`ok`, one bool per module id and a final one
    for id -1); no estimate below the catalog's size is known without reading every id."""

    def __init__(self, index: SearchIndex, ok: np.ndarray):
        super().__init__(index.size, index.size)
        self.index, self.ok = index, ok

    def dense(self) -> np.ndarray:
        return self.ok[np.asarray(self.index.module_id)]

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        return self.ok[np.asarray(self.index.module_id[candidates])]


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

    def terms(self) -> list[Term]:
        bits = {FLAG_FIELDS.index(SEARCH_FLAGS[key]): value for key, value in self._wanted().items()}
        return [FlagsTerm(self.catalog.index, bits, self._keeps)]

    def read(self) -> dict[str, list[str] | None]:
        return dict.fromkeys(SEARCH_FLAGS[key] for key in self._wanted())

    def reasons(self, row: dict[str, Any]) -> list[MatchReason]:
        return [MatchReason(filter="flag", value=f"{key}={'true' if value else 'false'}") for key, value in self._wanted().items()]


class FlagsTerm(Term):
    """The positions with each of `bits` (flag bit -> whether it must be set) as wanted: the
    estimate is the smallest count among them (the index counts each flag once), a mask the
    index's kept masks of each flag combined; candidates are probed on their flag words by
    `keeps`."""

    def __init__(self, index: SearchIndex, bits: dict[int, bool], keeps: Callable[[np.ndarray], np.ndarray]):
        counts = [index.flag_count(bit) if value else index.size - index.flag_count(bit) for bit, value in bits.items()]
        super().__init__(min(counts), index.size)
        self.index, self.bits, self.keeps = index, bits, keeps

    def dense(self) -> np.ndarray:
        if len(self.bits) == 1 and all(self.bits.values()):
            return self.index.flag_mask(next(iter(self.bits)))
        mask: np.ndarray | None = None
        for bit, value in self.bits.items():
            one = self.index.flag_mask(bit)
            if mask is None:
                mask = one.copy() if value else ~one
            elif value:
                mask &= one
            else:
                mask &= ~one
        assert mask is not None
        return mask

    def probe(self, candidates: np.ndarray) -> np.ndarray:
        return self.keeps(np.asarray(self.index.flags[candidates]))


#: Every filter, in the order they apply and their reasons are listed.
FILTERS: tuple[type[SearchFilter], ...] = (
    NameContains, Text, TypeConstants, InstancesOf, UsesConstants, NamespacePrefixes, Kinds, ModulePrefixes, Flags,
)
