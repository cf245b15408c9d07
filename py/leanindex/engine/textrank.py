"""Ranked text search: which declarations a `text` matches, and the score that orders them.

The match set (what `total_matches` counts): with `text_match: "any"` (the default), every
declaration having at least one word of the query (`catalog.text.Words` reading) in its name,
namespace, docstring or type, plus the declarations a nickname in the query names
(`catalog.lexicon.NICKNAMES`); with `"all"`, those having every word.

The score, highest first (ties then follow `engine.relevance`'s rule):

- **BM25 per field**, summed with the weights `FIELD_WEIGHTS`: each field has its own length
  normalisation (`catalog.text.FIELD_PARAMS`), so a word of a short name counts more than one
  of a long docstring; a word in more than `COMMON` of a field's declarations scores nothing
  there (it still matches);
- **coordination**: `COORDINATION` times the square of the share of the query's words the
  declaration has in any field (every word counts more than most);
- **the name**: `NAME_COVER` times the share of the last name component's words the query
  has; `CONTAINED` times log(1 + its words) when every word of the whole name is in the query
  (`the composition of two surjective functions is surjective` contains
  `Function.Surjective.comp`); less `NAMESPACE_EXTRA` for each namespace word the query does
  not have (`Int.mul_comm` after `mul_comm` for `a * b = b * a`);
- **a concept**: `CONCEPT` when the query's words are exactly the words of the last component
  (`lattice` -> `Lattice`, `galois connection` -> `GaloisConnection`) or of the whole name
  (`nat prime` -> `Nat.Prime`) and it is a structure, class, inductive type or definition, not
  a projection or an instance (a binder named `self`, a parent projection `toX`:
  `catalog.text`'s `secondary.npy`);
- **the formula**: a query whose statement (hypotheses and conclusion) has the formula key of a
  declaration's type (`catalog.formula`: variables renamed, so `n + m = m + n` is `a + b = b +
  a`) gains `FORMULA_STATEMENT`, one whose conclusion has its conclusion's key
  `FORMULA_CONCLUSION`, each times log(n / d) / log(n) for `d` declarations with that key of
  `n` (a rare formula says more);
- **a nickname**: the declarations a nickname in the query names gain `NICKNAME`, the first
  named most;
- **a theorem for a statement**: a query with a relation or an implication among its symbols
  (`=`, `≤`, `∣`, `→`, …) or of at least `STATEMENT_WORDS` words gives theorems `THEOREM`;
- **popularity**: `POPULARITY` times log(1 + uses) (`catalog.ranking`'s uses) times the share
  of the query's words the whole name has: popular among the names that answer the query.

The name terms count the query's words, not the words of its symbols (an `=` would otherwise
spell `Eq`) unless the query has nothing else, and a negation only in a name that has another
word of the query.

Every constant is a documented weight of this module, chosen on the tuning half of
`benchmarks/nl/` (`benchmarks/nl_tune.py`), never on its test half. A field whose weight is 0
(the docstring's BM25: its words count through coordination) is not scored at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..catalog import formula
from ..catalog.index import SearchIndex
from ..catalog.lexicon import NICKNAMES
from ..catalog.text import FIELDS, NEGATIONS, TextIndex, Token, fold_accents, query_tokens
from ..records import FLAG_FIELDS, KIND_ORDER

FIELD_WEIGHTS: dict[str, float] = {"name": 0.75, "namespace": 0.6, "doc": 0.0, "type": 0.7}
NAME_COVER = 3.7969
CONTAINED = 3.375
NAMESPACE_EXTRA = 1.6875
COORDINATION = 18.0
CONCEPT = 0.75
NICKNAME = 75.0
POPULARITY = 1.6875
FORMULA_STATEMENT = 10.0
FORMULA_CONCLUSION = 27.0
THEOREM = 3.0
#: A word in more than this share of a field's declarations (`=` in types, `type`) adds nothing
#: to their score in that field: its BM25 weight is near zero, and adding it would cost the
#: time of a pass over most of the catalog. It still matches.
COMMON = 0.1
#: A query of at least this many words states something (as a relation among its symbols does).
STATEMENT_WORDS = 4
#: The kinds a concept query looks for first (a structure or class is an `inductive`).
_CONCEPT_KINDS = frozenset(i for i, kind in enumerate(KIND_ORDER) if kind.value in ("inductive", "definition", "opaque", "axiom"))
_NICKNAME_TEXT = re.compile(r"[^a-z0-9' ]+")
_THEOREM = KIND_ORDER.index(next(k for k in KIND_ORDER if k.value == "theorem"))
#: Symbols that make a query a statement (a relation or an implication).
_RELATIONS = frozenset({"eq", "le", "lt", "ne", "iff", "imp", "dvd", "mem", "subset", "modeq"})
_INSTANCE_BIT = np.uint16(1 << FLAG_FIELDS.index("is_instance"))


@dataclass(frozen=True)
class Weights:
    """The score's constants (module docstring); the benchmark varies them, the engine uses
    `DEFAULT`."""

    fields: dict[str, float] = field(default_factory=lambda: dict(FIELD_WEIGHTS))
    name_cover: float = NAME_COVER
    contained: float = CONTAINED
    namespace_extra: float = NAMESPACE_EXTRA
    coordination: float = COORDINATION
    concept: float = CONCEPT
    nickname: float = NICKNAME
    popularity: float = POPULARITY
    formula_statement: float = FORMULA_STATEMENT
    formula_conclusion: float = FORMULA_CONCLUSION
    theorem: float = THEOREM


DEFAULT = Weights()


def nickname_targets(text: str) -> list[str]:
    """The declarations the nicknames in `text` name, best first (`lexicon.NICKNAMES`; a
    nickname matches as whole words, case and punctuation aside)."""
    plain = " " + " ".join(_NICKNAME_TEXT.sub(" ", fold_accents(text).lower().replace("’", "'")).split()) + " "
    found: list[str] = []
    for nickname, names in NICKNAMES.items():
        key = " " + " ".join(_NICKNAME_TEXT.sub(" ", fold_accents(nickname)).split()) + " "
        if key in plain or key.replace("'s ", " ") in plain.replace("'s ", " "):
            found.extend(names)
    return list(dict.fromkeys(found))


@dataclass
class TextQuery:
    """A query read for the text index: its distinct tokens, those no declaration has, and
    the nickname targets present in the catalog."""

    tokens: list[Token]
    known: list[tuple[Token, int]]
    unknown: list[Token]
    nicknamed: list[int]
    #: Whether the query states something (a relation or an implication among its symbols).
    statement: bool
    #: Per formula key kind (`formula.CONCLUSION`, `formula.STATEMENT`): the sorted positions
    #: whose type has the query's key.
    formulas: dict[str, np.ndarray]

    #: `presence`'s answer, once computed (the match set and the score both read it).
    _presence: np.ndarray | None = field(default=None, repr=False)

    def presence(self, text_index: TextIndex) -> np.ndarray:
        """How many of the query's known words each declaration has in some field (int16, one
        entry per catalog position), computed on first use."""
        if self._presence is None:
            size = len(text_index.secondary)
            have = np.zeros(size, dtype=np.int16)
            for _, word_id in self.known:
                have += _word_mask(text_index, word_id, size)
            self._presence = have
        return self._presence

    @classmethod
    def read(cls, text_index: TextIndex, index: SearchIndex, text: str) -> TextQuery:
        """Read `text` (the query) against one catalog's text and name index."""
        tokens = query_tokens(text_index.words, text)
        known: list[tuple[Token, int]] = []
        unknown: list[Token] = []
        for token in tokens:
            word_id = text_index.word_id(token.word)
            if word_id is None or not any(len(m.postings(word_id)[0]) for m in text_index.fields.values()):
                unknown.append(token)
            else:
                known.append((token, word_id))
        nicknamed = [p for p in (index.position_of(n) for n in nickname_targets(text)) if p is not None]
        formulas = {kind: text_index.with_formula(key) for kind, key in formula.query_keys(text).items()}
        statement = any(t.symbol and t.word in _RELATIONS for t in tokens) or sum(not t.symbol for t in tokens) >= STATEMENT_WORDS
        return cls(tokens, known, unknown, nicknamed, statement, formulas)


def match_set(text_index: TextIndex, query: TextQuery, match: str) -> np.ndarray:
    """The sorted positions the query matches (module docstring), int64."""
    have = query.presence(text_index)
    if match == "all":
        if query.unknown or not query.known:
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero(have == len(query.known))
    mask = have > 0
    mask[query.nicknamed] = True
    return np.flatnonzero(mask)


def _word_mask(text_index: TextIndex, word_id: int, size: int) -> np.ndarray:
    """Which positions have `word_id` in any field (bool over the catalog)."""
    mask = np.zeros(size, dtype=bool)
    for matrix in text_index.fields.values():
        mask[matrix.postings(word_id)[0]] = True
    return mask


def features(text_index: TextIndex, index: SearchIndex, query: TextQuery, positions: np.ndarray, fields: tuple[str, ...] = FIELDS) -> dict[str, np.ndarray]:
    """Each term of the score (module docstring) for each of `positions` (sorted int64), before
    its weight, float32: `field:<f>` (BM25 of field f, for each of `fields`), `coordination`,
    `name_cover`, `contained`, `namespace_extra` (minus the namespace words not asked),
    `concept`, `popularity`, `theorem`,
    `formula_statement`, `formula_conclusion`, `nickname`.

    A match set can hold most of the catalog (`=` is in most types), so the name terms, zero
    wherever the name and namespace have no word of the query, are computed only where they
    have one."""
    size, n = index.size, len(positions)
    found: dict[str, np.ndarray] = {}
    # The name terms count the query's words, not its symbols (`=` would spell `Eq`), unless
    # the query has nothing else; a negation counts only beside another word (`not` alone
    # would spell `Not`).
    named = {i for t, i in query.known if not t.symbol and t.word not in NEGATIONS} or {i for _, i in query.known}
    negations = {i for t, i in query.known if t.word in NEGATIONS} - named
    asked = len({t.word for t, i in query.known if i in named | negations} | {t.word for t in query.unknown if not t.symbol})
    counts: dict[str, np.ndarray] = {}
    # Coordination: how many of the query's distinct words a declaration has, in any field.
    have = query.presence(text_index)
    found["coordination"] = (have[positions].astype(np.float32) / max(len(query.known) + len(query.unknown), 1)) ** 2
    for name in FIELDS:
        total = np.zeros(size, dtype=np.float32)
        count = np.zeros(size, dtype=np.int8) if name in ("name", "namespace") else None
        negated = np.zeros(size, dtype=np.int8) if name in ("name", "namespace") else None
        for _, word_id in query.known:
            at, values = text_index.fields[name].postings(word_id)
            if len(at) and len(at) <= COMMON * size and name in fields:
                total[at] += values
            if len(at) and count is not None and negated is not None:
                if word_id in named:
                    count[at] += 1
                elif word_id in negations:
                    negated[at] += 1
        if name in fields:
            found[f"field:{name}"] = total[positions]
        if count is not None and negated is not None:
            # A negation counts in a name that has another word of the query too.
            counts[name] = count + negated * (count > 0)
    # Where the name or namespace has a word of the query (few), as places in `positions`.
    some = np.flatnonzero((counts["name"][positions] > 0) | (counts["namespace"][positions] > 0))
    at = positions[some]
    hits = counts["name"][at].astype(np.int64)
    ns_hits = counts["namespace"][at].astype(np.int64)
    name_words = text_index.counts["name"][at].astype(np.int64)
    namespace_words = text_index.counts["namespace"][at].astype(np.int64)
    spelled = (hits == name_words) & (name_words == asked) & (asked > 0)
    spelled_full = (hits == name_words) & (ns_hits == namespace_words) & (hits + ns_hits == asked) & (namespace_words > 0)
    # Every word of the whole name is in the query: the more words, the more specific.
    contained = (hits == name_words) & (ns_hits == namespace_words) & (name_words > 0)
    concept = np.isin(index.kind[at], list(_CONCEPT_KINDS)) & ~_secondary(text_index, index, at)
    query_cover = (hits + ns_hits) / max(asked, 1)
    sparse = {
        "name_cover": np.divide(hits, name_words, out=np.zeros(len(at)), where=name_words > 0),
        "contained": contained * np.log1p(name_words + namespace_words),
        "concept": (spelled | spelled_full) & concept,
        # Popularity speaks for a declaration that answers much of the query, not for every
        # match (`Eq`, `Group` in a sentence that says "group").
        "popularity": query_cover * np.log1p(index.uses[at].astype(np.float64)),
    }
    for term, values in sparse.items():
        dense = np.zeros(n, dtype=np.float32)
        dense[some] = values
        found[term] = dense
    # Namespace words the query does not ask for (`Int.` in `Int.mul_comm` for `a * b = b * a`).
    extra = -text_index.counts["namespace"][positions].astype(np.float32)
    extra[some] += ns_hits
    found["namespace_extra"] = extra
    found["theorem"] = (index.kind[positions] == _THEOREM).astype(np.float32) if query.statement else np.zeros(n, dtype=np.float32)
    for kind in (formula.STATEMENT, formula.CONCLUSION):
        with_key = query.formulas.get(kind, np.empty(0, dtype=np.int64))
        rarity = np.log(size / len(with_key)) / np.log(size) if len(with_key) else 0.0
        found[f"formula_{kind}"] = np.float32(rarity) * np.isin(positions, with_key, assume_unique=True)
    nickname = np.zeros(n, dtype=np.float32)
    for rank, position in enumerate(query.nicknamed):
        place = int(np.searchsorted(positions, position))
        if place < n and positions[place] == position:
            nickname[place] = max(nickname[place], 1 / (1 + 0.2 * rank))
    found["nickname"] = nickname
    return found


def _secondary(text_index: TextIndex, index: SearchIndex, positions: np.ndarray) -> np.ndarray:
    """Whether each of `positions` is a projection or an instance (bool)."""
    return text_index.secondary[positions] | ((index.flags[positions] & _INSTANCE_BIT) != 0)


def combine(found: dict[str, np.ndarray], weights: Weights = DEFAULT) -> np.ndarray:
    """The score (float32): the weighted sum of `features`' terms."""
    score = np.zeros(len(next(iter(found.values()))), dtype=np.float32)
    for term, values in found.items():
        weight = weights.fields[term.split(":", 1)[1]] if term.startswith("field:") else getattr(weights, term)
        if weight:
            score += np.float32(weight) * values
    return score


def scores(text_index: TextIndex, index: SearchIndex, query: TextQuery, positions: np.ndarray, weights: Weights = DEFAULT) -> np.ndarray:
    """The text score (float32) of each of `positions` (sorted int64) for `query`."""
    scored = tuple(name for name in FIELDS if weights.fields[name])
    return combine(features(text_index, index, query, positions, scored), weights)


#: How an explanation names each field.
_FIELD_WORDS = {"name": "the name", "namespace": "the namespace", "doc": "the docstring", "type": "the type"}


def unmatched(query: TextQuery) -> list[str]:
    """The query's words, as written, that no declaration of the catalog has in any field."""
    return list(dict.fromkeys(token.surface for token in query.unknown))


def explain(text_index: TextIndex, query: TextQuery, position: int) -> list[str]:
    """Why the declaration at `position` matched, in the user's words: one line per field it
    matched in (`"prime", "odd" in the docstring`), then the nickname that names it."""
    at = np.asarray([position], dtype=np.int64)
    lines = []
    for name in FIELDS:
        words = [token.surface for token, word_id in query.known if text_index.has(name, word_id, at)[0]]
        if words:
            lines.append(", ".join(f'"{w}"' for w in dict.fromkeys(words)) + f" in {_FIELD_WORDS[name]}")
    if position in query.nicknamed:
        lines.append("named by a nickname in the text")
    return lines
