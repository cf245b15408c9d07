"""Reading REPL answers whose info trees hold nodes lean-interact's models refuse: kinds it does
not list (Lean 4.35's `ErrorNameInfo`, `DocElabInfo`, `DocInfo`, and any later one), goal holes,
anonymous elaborators. Trees are written in the REPL's shapes (tests/standin/scripted.py)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from lean_interact.interface import CommandResponse, LeanError
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent / "standin"))

import scripted  # noqa: E402
from leanindex.checker.forbidden import find_forbidden  # noqa: E402
from leanindex.checker.probe import survey  # noqa: E402
from leanindex.checker.replies import HOLE_KIND, parse_command_response  # noqa: E402

UNLISTED = ["ErrorNameInfo", "DocElabInfo", "DocInfo", "SomeInfoOfLean5"]


def answer(kind: str) -> dict:
    """A submission `theorem t ...` then `#eval 1` whose command nodes sit under a node of `kind`."""
    theorem = scripted.declaration("theorem t : True := trivial", "theorem", "t", (1, 0), (1, 27))
    theorem["children"].append({"goalState": "⊢ True"})
    evaluation = scripted.command("#eval 1", "Lean.Parser.Command.eval", None, (2, 0), (2, 7))
    return {"env": 3, "infotree": [scripted.other_info(kind, [theorem, scripted.other_info(kind, [evaluation])])]}


@pytest.mark.parametrize("kind", UNLISTED)
def test_unlisted_kinds_are_read_and_walked(kind):
    raw = answer(kind)
    with pytest.raises(ValidationError):
        CommandResponse.model_validate(copy.deepcopy(raw))  # lean-interact 0.11.6 alone refuses it
    response = parse_command_response(raw)
    assert isinstance(response, CommandResponse) and response.env == 3
    kinds = [sub.kind for tree in response.infotree for sub in tree.dfs_walk()]
    assert sorted(kinds) == sorted([kind, "CommandInfo", "TermInfo", HOLE_KIND, kind, "CommandInfo"])
    # Nothing under such a node escapes the checker's walks.
    assert [(f.command, f.line) for f in find_forbidden(response.infotree)] == [("#eval", 2)]
    assert [d.name for d in survey(response.infotree).declarations] == ["t"]


def test_anonymous_elaborator_and_refusal():
    raw = answer("DocInfo")
    response = parse_command_response(raw)
    [evaluation] = [
        sub.node for tree in response.infotree for sub in tree.dfs_walk()
        if sub.kind == "CommandInfo" and sub.node.stx.kind == "Lean.Parser.Command.eval"
    ]
    assert evaluation.elaborator == ""
    assert isinstance(parse_command_response({"message": "Unknown environment."}), LeanError)


def test_a_node_without_a_kind_that_is_not_a_hole_is_refused():
    with pytest.raises(ValidationError):
        parse_command_response({"env": 0, "infotree": [{"node": None, "children": []}]})
