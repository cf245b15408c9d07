"""Failure classes and unknown names read from real answers of the Lean 4.35.0 front end (`lean
--json` through `leanlib`, on a `prelude` file: nothing can be imported where it runs).

Each command below is one kind of mistake an agent makes; Lean's own message for it must be
classed as that kind, and for an unknown name the name Lean printed must be read back exactly
(`failures.unknown_name`), since it is what the catalog is asked about.
"""

from __future__ import annotations

import json
from pathlib import Path

import leanlib
from leanindex.checker.failures import FailureClass, classify_error, unknown_name

LEAN_DIR = Path(__file__).resolve().parent / "lean"

# (command, the class of its first error, the unknown name Lean reports or None)
MISTAKES = [
    ("theorem uses_missing : True := Nat.add_comm_nope", FailureClass.UNKNOWN_IDENTIFIER, "Nat.add_comm_nope"),
    ("def uses_local (n : Nat) : Nat := m", FailureClass.UNKNOWN_IDENTIFIER, "m"),
    ("def uses_primed (n : Nat) : Nat := n'", FailureClass.UNKNOWN_IDENTIFIER, "n'"),
    ("def uses_field (n : Nat) : Nat := n.doubleIt", FailureClass.UNKNOWN_IDENTIFIER, "Nat.doubleIt"),
    ("theorem wrong_type : True := Nat.zero", FailureClass.TYPE_MISMATCH, None),
    ("theorem wrong_argument : True := Function.const Nat True.intro Unit.unit", FailureClass.TYPE_MISMATCH, None),
    ("theorem cut_short : True :=\ntheorem after : True := True.intro", FailureClass.SYNTAX_ERROR, None),
    ("theorem lean3 : True := begin exact True.intro end", FailureClass.UNKNOWN_IDENTIFIER, "begin"),
    ("theorem no_tactics : True := by frobnicate", FailureClass.SYNTAX_ERROR, None),
    ("def twice : Nat := Nat.zero\ndef twice : Nat := Nat.zero", FailureClass.OTHER_ERROR, None),
]


def _preamble() -> str:
    """The cut-down `Init` of tests/lean/accepted.lean (everything before its submission)."""
    text = (LEAN_DIR / "accepted.lean").read_text()
    return text[: text.index("-- The submission.")]


def _first_errors(tmp_path: Path) -> list[tuple[int, str]]:
    """(line, text) of the first error Lean reports on each command of MISTAKES."""
    head = _preamble()
    body, starts = "", []
    for command, _, _ in MISTAKES:
        starts.append(len((head + body).splitlines()) + 1)
        body += command + "\n"
    (tmp_path / "mistakes.lean").write_text(head + body)
    run = leanlib.run_lean(["--json", "mistakes.lean"], tmp_path)
    errors = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    errors = [m for m in errors if m["severity"] == "error"]
    firsts = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else 10**9
        inside = [m for m in errors if start <= m["pos"]["line"] < end]
        assert inside, f"Lean reported no error on {MISTAKES[index][0]!r}"
        firsts.append((start, inside[0]["data"]))
    return firsts


def test_lean_messages_are_classed_and_unknown_names_read_back(tmp_path):
    leanlib.library_path_or_skip()
    for (command, expected_class, expected_name), (_line, text) in zip(MISTAKES, _first_errors(tmp_path)):
        assert classify_error(text) is expected_class, (command, text)
        assert unknown_name(text) == expected_name, (command, text)
