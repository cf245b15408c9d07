"""Failure classes: what kind of failure a non-accepted answer is, with one line on what to try
next, so that an agent does not retry the same mistake.

A reason's class follows from its code, except for `error` reasons, which are classed by Lean's
message text (`classify_error`). The texts are those of Lean's elaborator and parser; both the
current spellings (Lean 4.35.0's library: "Unknown identifier `x`", "Unknown constant `x`",
"Type mismatch", "Application type mismatch", "Invalid field `f`: The environment does not
contain `T.f`", seen with the real front end, `tests/test_failure_frontend.py`) and the older
ones of the recorded REPL transcripts and earlier toolchains ("unknown identifier 'x'", "type
mismatch", "(kernel) application type mismatch") are read.
"""

from __future__ import annotations

import re
from enum import StrEnum


class ReasonCode(StrEnum):
    """Why a verdict is not `accepted` (the verdict table's rules, `verdict.RULES`)."""

    ERROR = "error"
    UNSOLVED_GOALS = "unsolved_goals"
    SORRY = "sorry"
    DISALLOWED_AXIOM = "disallowed_axiom"
    FORBIDDEN_COMMAND = "forbidden_command"
    AXIOMS_UNVERIFIED = "axioms_unverified"
    STATEMENT_CHANGED = "statement_changed"
    NOTHING_AUDITED = "nothing_audited"


class FailureClass(StrEnum):
    """The class of one failure (a `Reason`, or a tool error `timeout`):

    - `unknown_identifier`: Lean does not know a name (identifier, constant, or field);
    - `type_mismatch`: a term's type is not the one expected (elaborator or kernel);
    - `syntax_error`: the file does not parse (unexpected token, unknown tactic, ...);
    - `timeout`: Lean ran out of heartbeats or recursion depth, or the check its wall-clock budget;
    - `other_error`: any other error Lean reported;
    - every `ReasonCode` but `error` (`unsolved_goals`, `sorry`, `disallowed_axiom` (a declared
      `axiom` or another axiom outside the allowlist, e.g. `native_decide`'s), `forbidden_command`,
      `axioms_unverified`, `statement_changed`, `nothing_audited`): its own class, of the same name.
    """

    # The classes an `error` reason is split into by Lean's message (`classify_error`).
    UNKNOWN_IDENTIFIER = "unknown_identifier"
    TYPE_MISMATCH = "type_mismatch"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"
    OTHER_ERROR = "other_error"
    # One per `ReasonCode` but `error`, of the same name and value
    # (tests/test_registries.py fails when one is missing).
    UNSOLVED_GOALS = ReasonCode.UNSOLVED_GOALS.value
    SORRY = ReasonCode.SORRY.value
    DISALLOWED_AXIOM = ReasonCode.DISALLOWED_AXIOM.value
    FORBIDDEN_COMMAND = ReasonCode.FORBIDDEN_COMMAND.value
    AXIOMS_UNVERIFIED = ReasonCode.AXIOMS_UNVERIFIED.value
    STATEMENT_CHANGED = ReasonCode.STATEMENT_CHANGED.value
    NOTHING_AUDITED = ReasonCode.NOTHING_AUDITED.value


#: One line per class: what to try next. The one place these hints are written.
HINTS: dict[FailureClass, str] = {
    FailureClass.UNKNOWN_IDENTIFIER: (
        "Lean does not know this name here: try the diagnostic's `suggestions`, or find the right name with "
        "lean.declaration.search; check the namespaces you `open` and the file's imports."
    ),
    FailureClass.TYPE_MISMATCH: (
        "A term does not have the type Lean expects: compare the two types in the message, check the lemma's "
        "signature with lean.declaration.inspect (argument order, implicit arguments, coercions)."
    ),
    FailureClass.SYNTAX_ERROR: (
        "Lean could not parse the file at this position: use Lean 4 syntax (no Lean 3 `begin ... end` or `λ x,`), "
        "check brackets, indentation of tactic blocks and that the tactic exists in the imports."
    ),
    FailureClass.TIMEOUT: (
        "Lean ran out of time or heartbeats: make the proof cheaper (`simp only [...]` instead of `simp`, explicit "
        "terms instead of search, no `decide` on large instances) rather than retrying it unchanged."
    ),
    FailureClass.OTHER_ERROR: (
        "Lean reported an error at this position: fix the first error first; later errors often follow from it."
    ),
    FailureClass.UNSOLVED_GOALS: (
        "Goals remain at the end of a tactic block (the message lists them): add tactics that close each one; "
        "lean.proof.state and lean.proof.step show the goals tactic by tactic."
    ),
    FailureClass.SORRY: (
        "The proof still contains `sorry`: replace each one (the answer's `sorries` give their goals)."
    ),
    FailureClass.DISALLOWED_AXIOM: (
        "The proof depends on an axiom outside propext, Classical.choice and Quot.sound: prove the fact instead of "
        "declaring it as an `axiom`, and use `decide` rather than `native_decide`."
    ),
    FailureClass.FORBIDDEN_COMMAND: (
        "This command can change how the file is checked and is refused: remove it (docs/checker.md lists them)."
    ),
    FailureClass.AXIOMS_UNVERIFIED: (
        "Name the declaration (`theorem my_name : ... := ...` rather than `example` or an anonymous `instance`) "
        "so that its axioms can be printed."
    ),
    FailureClass.STATEMENT_CHANGED: (
        "The theorem's statement must stay exactly the reference's: restore it and prove that statement, "
        "not a weaker or different one."
    ),
    FailureClass.NOTHING_AUDITED: (
        "The file adds no declaration whose axioms can be printed: an audit needs at least one named declaration."
    ),
}

# Lean's texts for a name it does not know; group 1 is the name as Lean printed it. Backticks
# (current Lean) or single quotes (older Lean) around it; the name runs to the last quote of the
# first line, so primes inside a name (`h'`) stay part of it.
_UNKNOWN_NAME = (
    re.compile(r"^[Uu]nknown (?:identifier|constant) `(.+)`"),
    re.compile(r"^[Uu]nknown (?:identifier|constant) '(.+)'"),
    re.compile(r"^[Ii]nvalid field `[^`]+`: [Tt]he environment does not contain `([^`]+)`"),
    re.compile(r"^invalid field '[^']+', the environment does not contain '(.+?)'"),
)
_TYPE_MISMATCH = re.compile(r"^(?:\(kernel\) )?(?:application )?type mismatch", re.IGNORECASE)
_SYNTAX = re.compile(r"^(?:unexpected |expected |unknown tactic|unterminated |missing end of )", re.IGNORECASE)
_RESOURCE = re.compile(r"^(?:\(deterministic\) timeout|maximum recursion depth has been reached)")


def unknown_name(text: str) -> str | None:
    """The name Lean reports it does not know in an error `text` ("Unknown identifier `x`",
    "Unknown constant `x`", "Invalid field `f`: The environment does not contain `T.f`" and the
    older single-quoted spellings), as Lean printed it; None for any other message."""
    first = text.split("\n", 1)[0]
    for pattern in _UNKNOWN_NAME:
        found = pattern.match(first)
        if found:
            return found.group(1)
    return None


def classify_error(text: str) -> FailureClass:
    """The class of an error message of Lean's (its text): `unknown_identifier`,
    `type_mismatch`, `syntax_error`, `timeout` (heartbeats, recursion depth) or `other_error`."""
    if unknown_name(text) is not None:
        return FailureClass.UNKNOWN_IDENTIFIER
    if _TYPE_MISMATCH.match(text):
        return FailureClass.TYPE_MISMATCH
    if _SYNTAX.match(text):
        return FailureClass.SYNTAX_ERROR
    if _RESOURCE.match(text):
        return FailureClass.TIMEOUT
    return FailureClass.OTHER_ERROR


def timeout_details(budget_s: float) -> dict[str, object]:
    """The `details` of a `timeout` tool error: the budget (seconds), its failure class and hint."""
    return {"timeout_s": budget_s, "failure_class": FailureClass.TIMEOUT.value, "hint": HINTS[FailureClass.TIMEOUT]}
