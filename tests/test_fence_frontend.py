"""The statement fence's probe read against real answers of the Lean 4.35.0 front end (`lean
--json` through `leanlib`, on a `prelude` file: nothing can be imported where it runs).

A `prelude` file has no `Init`, so `guard_expr` (syntax declared in `Init.Guard`) does not parse
there: every guard line must then answer an error and never the echo, and the theorem must come
out `changed`, never `same`. What does run is Lean's own answer to the other probe lines: the
signatures `#check _root_.<name>` prints, the universe parameters made by `universe`, and the
probe's line numbering. The guard's passing case needs `Init` and is covered by the Lean-marked
tests (test_checker_fence_lean.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from lean_interact.interface import CommandResponse

import leanlib
from leanindex.checker.fence import FencedTheorem, probe_command, read_fence, synced
from leanindex.checker.models import FenceStatus
from leanindex.checker.probe import Declaration, Survey

LEAN_DIR = Path(__file__).resolve().parent / "lean"
NONCE = 1_000_000_004_242
_SEVERITY = {"information": "info", "warning": "warning", "error": "error"}


def _preamble() -> str:
    """The cut-down `Init` of tests/lean/accepted.lean (everything before its submission)."""
    text = (LEAN_DIR / "accepted.lean").read_text()
    return text[: text.index("-- The submission.")]


def test_probe_lines_answered_by_the_real_front_end(tmp_path):
    leanlib.library_path_or_skip()
    submission = (
        "inductive Eq {α : Sort u} : α → α → Prop where\n  | refl (a : α) : Eq a a\n"
        "theorem poly {α : Sort u} (a : α) : Eq a a := Eq.refl a\n"
        "namespace Foo\ntheorem leanindex_fence_1_0 {α : Sort v} (a : α) : Eq a a := Eq.refl a\nend Foo\n"
    )
    theorems = (FencedTheorem("poly", "Foo.leanindex_fence_1_0"),)
    survey = Survey([Declaration("poly", (), "theorem", 3, 0)], [], [])
    probe, lines = probe_command(theorems, survey, NONCE)
    head = _preamble() + submission
    marker = len(head.splitlines())
    (tmp_path / "fence.lean").write_text(head + probe + "\n")
    run = leanlib.run_lean(["--json", "fence.lean"], tmp_path)
    messages = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    answers = [
        {
            "pos": {"line": m["pos"]["line"] - marker, "column": m["pos"]["column"]},
            "endPos": None,
            "severity": _SEVERITY[m["severity"]],
            "data": m["data"].strip(),
        }
        for m in messages
        if m["pos"]["line"] > marker
    ]
    response = CommandResponse.model_validate({"env": 1, "messages": answers})
    assert synced(response, NONCE)
    [fence] = read_fence(response, lines, theorems, survey)
    # Lean's own signatures, universe parameters included, the reference's under the theorem's name.
    assert fence.submitted == "poly.{u} {α : Sort u} (a : α) : Eq a a"
    assert fence.reference == "poly.{v} {α : Sort v} (a : α) : Eq a a"
    # Without `Init` no guard line can pass: the fence fails closed.
    assert fence.status is FenceStatus.CHANGED
    guard_errors = {a["pos"]["line"] for a in answers if a["severity"] == "error"} & set(lines.guards)
    assert guard_errors == set(lines.guards)
