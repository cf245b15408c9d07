"""Close declaration names for a name Lean does not know (the `suggestions` of a checker
diagnostic "Unknown identifier `x`").

The rule, best first, at most `limit` names, only visible declarations (not private, not
internal), each name once:

1. the name itself, when the catalog has it (Lean may not see it for another reason: a missing
   import, a `protected` name used unqualified);
2. names of which the given name is a proper trailing part, component-wise (`mul_comm` ->
   `Nat.mul_comm`, `Measure.map` -> `MeasureTheory.Measure.map`), fewer extra components
   first, then shorter, then `Name.lt`;
3. for a name written with a namespace, names of that namespace whose last component is within
   a small edit distance of the given last component (Levenshtein distance at most 1 for up to
   4 characters, 2 up to 10, else 3: `max_distance`), ranked by that distance, then shorter,
   then `Name.lt` (`Nat.add_com` -> `Nat.add_comm`);
4. for a name written with a namespace, names of that namespace one of whose last component's
   words (`words`: split at `_`, `'`, digits and lower-to-upper case changes, case aside) is
   the given last component's first word (`stem`, at least `MIN_CLOSE_LENGTH` characters),
   ranked by how many of the given one's words they hold (more first), then the longer common
   start of the last components, then shorter, then `Name.lt`: `Nat.rec` (a recursor doc-gen4
   does not record) -> `Nat.recAux`, `Nat.recCompiled`, ..., `Nat.strongRecOn`; `Nat.recOn` ->
   `Nat.strongRecOn`, `Nat.caseStrongRecOn`, `Nat.recAux`, ...;
5. names of other namespaces (of any, for a name written without one) whose last component is
   within that edit distance, ranked by the distance, then by the edit distance between the
   namespaces, then shorter, then `Name.lt` (`Nat.rec` -> `Quot.rec`; `add_comn` ->
   `Nat.add_comm`, `Int.add_comm`).

Rules 3 and 4 come before 5: a name written with its namespace most likely means a declaration
of that namespace, and short last components (`rec`, `map`) are within a few edits of hundreds
of others' (`rev`, `ref`, `mop`) in every namespace. A name written without one says nothing
about where it lives: the root namespace is not preferred beyond rule 5's namespace distance.

A last component of fewer than `MIN_CLOSE_LENGTH` characters (`x`, `h'`: a local variable,
most likely) gets rule 1 only: every catalog has hundreds of names ending in `.x`, and none of
them is what was meant. So does a name longer than `MAX_CLOSE_NAME_LENGTH` characters.

Costs: the table is built once per loaded catalog (one pass over the names). A look-up reads
the few names that share the last component, and for rules 3 and 5 computes edit distances (in C,
rapidfuzz) only for the distinct last components that pass a bigram count filter: an edit
removes at most two of a string's bigrams, so a component within distance `k` of `last` shares
at least `|bigrams(last)| - 2k` of `last`'s distinct bigrams (padded with `^` and `$`). Rule 4
reads the namespace's names by word, indexed once per namespace on its first look-up.
`benchmarks/suggest_bench.py` measures it on the Mathlib catalog.
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from ..names import NameSyntaxError, parse_name, printed_namespace

#: Most suggestions one diagnostic carries.
MAX_SUGGESTIONS = 8
#: Shortest last component that gets more than the exact name (rules 2 and 3).
MIN_CLOSE_LENGTH = 3
#: Longest name (characters) that gets more than the exact name: far above any real
#: declaration name, and it bounds the cost of the namespace distances of rule 3.
MAX_CLOSE_NAME_LENGTH = 300


#: The words of a last component: runs split at `_`, `'`, digits and lower-to-upper case changes
#: (`strongRecOn` -> `strong`, `Rec`, `On`; `HAdd` -> `H`, `Add`; `add_comm` -> `add`, `comm`).
_WORD = re.compile(r"[A-Z]+(?![^\W\d_A-Z])|[A-Z]?[^A-Z_'0-9]+")


def words(last: str) -> list[str]:
    """The words of the last component `last` (`_WORD`), lower-cased, in order."""
    return [word.lower() for word in _WORD.findall(last)]


def stem(last: str) -> str:
    """The first word of the last component `last` (`words`), or "" when it has none of at
    least `MIN_CLOSE_LENGTH` characters there (`le` of `le_refl`: too common to mean anything)."""
    found = words(last)
    return found[0] if found and len(found[0]) >= MIN_CLOSE_LENGTH else ""


def _split(name: str) -> tuple[str, str]:
    """(namespace, last component) of a printed name, both as printed ("" namespace at the
    root); a name that cannot be read back counts as one component."""
    if "«" not in name and "»" not in name:
        # Lean prints no empty component and no leading zero, so an unescaped name splits at its last dot.
        namespace, _, last = name.rpartition(".")
        return namespace, last
    try:
        components = parse_name(name)
    except NameSyntaxError:
        return "", name
    printed = printed_namespace(name, components)
    return ("", name) if printed is None else (printed, name[len(printed) + 1 :])


def _bigram_codes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(bigram code, index into `texts`) of every distinct bigram of each text padded with `^`
    and `$`, a code being its two code points as one int64; one vectorised pass."""
    if not texts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    padded = "".join("^" + text + "$" for text in texts)
    # surrogatepass: a lone surrogate is no text, but it must not fail a look-up.
    points = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), [len(text) + 2 for text in texts])
    same = owner[:-1] == owner[1:]
    codes = (points[:-1] << 21 | points[1:])[same]
    owners = owner[:-1][same]
    order = np.lexsort((owners, codes))
    codes, owners = codes[order], owners[order]
    first = np.r_[True, (codes[1:] != codes[:-1]) | (owners[1:] != owners[:-1])]
    return codes[first], owners[first]


def max_distance(last: str) -> int:
    """The largest edit distance between last components that still counts as close."""
    return 1 if len(last) <= 4 else 2 if len(last) <= 10 else 3


@dataclass
class NameTable:
    """Visible declaration names of one catalog, grouped for suggestions.

    `by_last` maps a printed last component to the positions (ascending, so `Name.lt` order) of
    the names ending with it; `lasts` lists those components (key ids index it), `last_lengths`
    their lengths (code points) and `postings` maps a bigram (`_bigram_codes`) to the ids of the
    components that have it (ascending int32)."""

    names: list[str]
    namespaces: list[str]
    by_last: dict[str, list[int]]
    lasts: list[str]
    last_lengths: np.ndarray
    postings: dict[int, np.ndarray]
    by_namespace: dict[str, list[int]]
    #: Per namespace, each word (`words`) of its visible names' last components to their
    #: positions (ascending), made on the namespace's first rule-4 look-up (`_by_word`).
    word_index: dict[str, dict[str, list[int]]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, names: list[str], hidden: np.ndarray) -> NameTable:
        """The table of `names` (every printed name in `pos` order) without the `hidden` ones."""
        namespaces = [""] * len(names)
        by_last: dict[str, list[int]] = {}
        by_namespace: dict[str, list[int]] = {}
        for pos in np.flatnonzero(~np.asarray(hidden, dtype=bool)).tolist():
            namespace, last = _split(names[pos])
            namespaces[pos] = namespace
            by_last.setdefault(last, []).append(pos)
            by_namespace.setdefault(namespace, []).append(pos)
        lasts = list(by_last)
        codes, owners = _bigram_codes(lasts)
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.empty(0, dtype=np.int64)
        # Not strict: with no bigram at all, `np.split` still gives one (empty) piece.
        postings = {int(code): ids.astype(np.int32) for code, ids in zip(codes[starts], np.split(owners, starts[1:]), strict=False)}
        lengths = np.fromiter((len(last) for last in lasts), dtype=np.int32, count=len(lasts))
        return cls(names, namespaces, by_last, lasts, lengths, postings, by_namespace)

    def shortest(self, last: str) -> str:
        """The shortest visible name ending with the last component `last` (the first in
        `Name.lt` order among equals); raises KeyError for a last component no name has."""
        return self.names[min(self.by_last[last], key=lambda p: (len(self.names[p]), p))]

    def suggest(self, name: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
        """Up to `limit` visible names close to `name` (a name as Lean printed it), by the rule
        of the module docstring, best first."""
        namespace, last = _split(name)
        same_last = self.by_last.get(last, [])
        chosen = [p for p in same_last if self.names[p] == name][:limit]
        if len(last) < MIN_CLOSE_LENGTH or len(name) > MAX_CLOSE_NAME_LENGTH:
            return [self.names[p] for p in chosen]
        tail = "." + name
        trailing = sorted(
            (p for p in same_last if self.names[p].endswith(tail)),
            key=lambda p: (self.names[p].count("."), len(self.names[p]), p),
        )
        chosen.extend(trailing[: limit - len(chosen)])
        if len(chosen) < limit:
            levels = self._levels(last)
            same = [
                p for distance in sorted(levels)
                for p in sorted((p for p in levels[distance] if self.namespaces[p] == namespace), key=lambda p: (len(self.names[p]), p))
            ] if namespace else []
            stemmed = self._same_stem(namespace, last, limit) if namespace else []
            for ranked in (same, stemmed, self._elsewhere(namespace, levels, limit)):
                taken = set(chosen)
                chosen.extend([p for p in ranked if p not in taken][: limit - len(chosen)])
        return [self.names[p] for p in chosen]

    def _same_stem(self, namespace: str, last: str, wanted: int) -> list[int]:
        """Rule 4 (module docstring): the best `2 * wanted` positions of `namespace` holding the
        word `stem(last)`, ranked (enough for `wanted` new ones when every name chosen by rules
        1-3, fewer than `wanted`, is among them)."""
        first = stem(last)
        if not first or namespace not in self.by_namespace:
            return []
        given = set(words(last))

        def rank(p: int) -> tuple[int, int, int, int]:
            other = _split(self.names[p])[1]
            return (-len(given.intersection(words(other))), -len(os.path.commonprefix([other, last])), len(self.names[p]), p)

        return heapq.nsmallest(2 * wanted, self._by_word(namespace).get(first, []), key=rank)

    def _by_word(self, namespace: str) -> dict[str, list[int]]:
        """`namespace`'s entry of `word_index`, made on first use and kept (two threads that
        make it at once each make the same one; the second assignment is as good)."""
        made = self.word_index.get(namespace)
        if made is None:
            made = {}
            for p in self.by_namespace[namespace]:
                for word in dict.fromkeys(words(_split(self.names[p])[1])):
                    made.setdefault(word, []).append(p)
            self.word_index[namespace] = made
        return made

    def _candidates(self, last: str, bound: int) -> list[str]:
        """Last components that may be within `bound` edits of `last`: of a length within
        `bound` and passing the bigram count filter (module docstring)."""
        grams = _bigram_codes([last])[0].tolist()
        lists = [self.postings[g] for g in grams if g in self.postings]
        need = len(grams) - 2 * bound
        if need <= 0 or not lists:
            ids = np.arange(len(self.lasts))
        else:
            counts = np.bincount(np.concatenate(lists), minlength=len(self.lasts))
            ids = np.flatnonzero(counts >= need)
        lengths = self.last_lengths[ids]
        ids = ids[(lengths >= len(last) - bound) & (lengths <= len(last) + bound)]
        return [self.lasts[i] for i in ids.tolist()]

    def _levels(self, last: str) -> dict[int, list[int]]:
        """Every visible name whose last component is within `max_distance(last)` edits of
        `last`, by that distance (positions ascending within a component)."""
        bound = max_distance(last)
        found = process.extract(last, self._candidates(last, bound), scorer=Levenshtein.distance, score_cutoff=bound, limit=None)
        levels: dict[int, list[int]] = {}
        for key, distance, _index in found:
            levels.setdefault(int(distance), []).extend(self.by_last[key])
        return levels

    def _elsewhere(self, namespace: str, levels: dict[int, list[int]], wanted: int) -> list[int]:
        """Rule 5 (module docstring): the names of `levels` outside `namespace` (all of them for
        the root, ""), ranked; whole distance levels, until at least `wanted` + the names
        already chosen are found."""
        ranked: list[int] = []
        for distance in sorted(levels):
            positions = [p for p in levels[distance] if not namespace or self.namespaces[p] != namespace]
            if not positions:
                continue
            spaces = [self.namespaces[p] for p in positions]
            apart = process.cdist([namespace], spaces, scorer=Levenshtein.distance, dtype=np.int32)[0]
            order = sorted(range(len(positions)), key=lambda i: (int(apart[i]), len(self.names[positions[i]]), positions[i]))
            ranked.extend(positions[i] for i in order)
            if len(ranked) >= 2 * wanted:
                break
        return ranked
