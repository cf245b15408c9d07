"""The checker's reading of Lean's messages and `#print axioms` answers, on real outputs of the
Lean 4.35.0 front end (`lean --json`), not on hand-written strings.

`tests/lean/<case>.lean` are `prelude` files (nothing can be imported where they are run): the
submission, a line `-- probe`, then the axiom probe exactly as `probe_command` writes it for the
submission's declarations. `tests/lean/<case>.lean.json` is what `lean --json <case>.lean` printed,
pinned. Where the real library is present (`leanlib`), each file is run again and must give the
pinned output byte for byte, so a change of Lean's wording fails here. The parsing tests read the
pinned outputs, so they run everywhere.

From `lean --json` to what the checker reads. The checker receives lean-interact's
`CommandResponse`, built from the REPL's JSON, and the REPL maps each `Lean.Message` with
`REPL.Message.of` (leanprover-community/repl, `REPL/JSON.lean`): `pos` and `endPos` as
`{line, column}`, `severity` `information` → `info` (`warning`, `error` unchanged), `data` the
message text trimmed. `lean --json` prints the same `Lean.Message`s (`SerialMessage`: the same
positions and text, the severity spelled `information`, plus `fileName`, `kind`, `caption`...),
so `repl_message` applies that mapping field by field. The REPL runs the submission and the probe
as two commands, each counting lines from 1: the submission is the file up to `-- probe` (lines
unchanged), the probe's messages are shifted up by the marker's line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lean_interact.interface import CommandResponse

import leanlib
from leanindex.checker.models import ReasonCode, Verdict
from leanindex.checker.probe import Declaration, Survey, probe_command, read_probe
from leanindex.checker.verdict import decide

LEAN_DIR = Path(__file__).resolve().parent / "lean"
NONCE = 1_000_000_004_242
MARKER = "-- probe"
_SEVERITY = {"information": "info", "warning": "warning", "error": "error"}


@dataclass(frozen=True)
class Case:
    """A file, the declarations the probe asks about (name, namespace), and what the checker
    must read from Lean's answers."""

    file: str
    declarations: tuple[tuple[str, tuple[str, ...]], ...]
    verdict: Verdict
    reasons: tuple[ReasonCode, ...]
    axioms: dict[str, list[str]]


CASES = [
    Case("accepted", (("clean", ()),), Verdict.ACCEPTED, (), {"clean": []}),
    Case(
        "axioms",
        (("usesAxiom", ()), ("clean", ()), ("inner", ("Foo",)), ("usesMany", ())),
        Verdict.REJECTED,
        (ReasonCode.DISALLOWED_AXIOM,) * 3,
        {
            "usesAxiom": ["myAxiom"],
            "clean": [],
            "Foo.inner": ["myAxiom"],
            # Lean wraps this list over four lines.
            "usesMany": [
                "aFirstAxiomWithAQuiteLongName",
                "aFourthAxiomWithAQuiteLongName",
                "aSecondAxiomWithAQuiteLongName",
                "aThirdAxiomWithAQuiteLongName",
            ],
        },
    ),
    Case("sorry", (("usesSorry", ()),), Verdict.INCOMPLETE, (ReasonCode.SORRY,), {"usesSorry": ["sorryAx"]}),
    # Error recovery puts a synthetic `sorry` in the failed declaration: both show.
    *(
        Case(file, ((name, ()),), Verdict.REJECTED, (ReasonCode.ERROR, ReasonCode.SORRY), {name: ["sorryAx"]})
        for file, name in (("unknown_identifier", "broken"), ("type_mismatch", "mismatched"))
    ),
]


def _source(case: Case) -> list[str]:
    return (LEAN_DIR / f"{case.file}.lean").read_text().splitlines()


def _pinned(case: Case) -> str:
    return (LEAN_DIR / f"{case.file}.lean.json").read_text()


def repl_message(message: dict[str, Any], shift: int) -> dict[str, Any]:
    """One `lean --json` message as the REPL sends it (`REPL.Message.of`), lines shifted up by
    `shift`."""

    def position(pos: dict[str, int] | None) -> dict[str, int] | None:
        return None if pos is None else {"line": pos["line"] - shift, "column": pos["column"]}

    return {
        "pos": position(message["pos"]),
        "endPos": position(message["endPos"]),
        "severity": _SEVERITY[message["severity"]],
        "data": message["data"].strip(),
    }


def _declarations(case: Case, source: list[str]) -> list[Declaration]:
    """The probed declarations with the position of their `theorem` line (1-based line, column)."""
    found = []
    for name, namespace in case.declarations:
        line = next(i for i, text in enumerate(source, start=1) if text.startswith(f"theorem {name} "))
        found.append(Declaration(name, namespace, "theorem", line, 0))
    return found


def _responses(case: Case) -> tuple[CommandResponse, CommandResponse, int]:
    source = _source(case)
    marker = source.index(MARKER) + 1
    messages = [json.loads(line) for line in _pinned(case).splitlines()]
    submission = [repl_message(m, 0) for m in messages if m["pos"]["line"] < marker]
    probe = [repl_message(m, marker) for m in messages if m["pos"]["line"] > marker]
    return (
        CommandResponse.model_validate({"env": 0, "messages": submission}),
        CommandResponse.model_validate({"env": 1, "messages": probe}),
        marker,
    )


# `lean --json` prints messages only; the REPL's answer to the same file would also carry its
# info tree, which the acceptance checks require, so the converted answers are read as having one.
HAS_INFOTREE = True


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_probe_in_the_file_is_what_probe_command_writes(case: Case) -> None:
    source = _source(case)
    marker = source.index(MARKER) + 1
    text, _ = probe_command(Survey(_declarations(case, source), [], []), NONCE)
    assert "\n".join(source[marker:]) == text


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_checker_reads_lean_real_answers(case: Case) -> None:
    submission, probe_response, _ = _responses(case)
    _, by_line = probe_command(Survey(_declarations(case, _source(case)), [], []), NONCE)
    probe = read_probe(probe_response, NONCE, by_line)
    assert probe.synced
    assert probe.unanswered == []
    assert {entry.name: entry.axioms for entry in probe.axioms} == case.axioms
    decision = decide(submission, [], probe.axioms, probe.unanswered, [], protect=True, has_infotree=HAS_INFOTREE)
    assert (decision.verdict, tuple(r.code for r in decision.reasons)) == (case.verdict, case.reasons)


def test_error_reasons_quote_lean_first_line() -> None:
    texts = {}
    for case in CASES:
        submission, _, _ = _responses(case)
        decision = decide(submission, [], [], [], [], protect=True, has_infotree=HAS_INFOTREE)
        texts[case.file] = [r.message for r in decision.reasons if r.code is ReasonCode.ERROR]
    assert texts["unknown_identifier"] == ["Unknown identifier `notDeclaredAnywhere`"]
    assert texts["type_mismatch"] == ["Type mismatch"]


def test_flagged_axioms_name_the_declarations_as_lean_prints_them() -> None:
    case = next(c for c in CASES if c.file == "axioms")
    submission, probe_response, _ = _responses(case)
    _, by_line = probe_command(Survey(_declarations(case, _source(case)), [], []), NONCE)
    probe = read_probe(probe_response, NONCE, by_line)
    decision = decide(submission, [], probe.axioms, probe.unanswered, [], protect=True, has_infotree=HAS_INFOTREE)
    assert [r.command for r in decision.reasons] == ["usesAxiom", "Foo.inner", "usesMany"]


REASON = leanlib.unavailable_reason()


@pytest.mark.leanlib
@pytest.mark.skipif(REASON is not None, reason=REASON or "")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_pinned_output_is_what_lean_prints_today(case: Case) -> None:
    run = leanlib.run_lean(["--json", f"{case.file}.lean"], LEAN_DIR)
    errors = any(json.loads(line)["severity"] == "error" for line in run.stdout.splitlines())
    assert run.returncode == (1 if errors else 0), run.stderr
    assert run.stdout == _pinned(case), (
        f"Lean's output for tests/lean/{case.file}.lean drifted from the pinned one; after checking the"
        f" checker still reads it, re-pin with: cd tests/lean && python ../leanlib.py"
        f" {leanlib.library_path()} --json {case.file}.lean > {case.file}.lean.json"
    )
