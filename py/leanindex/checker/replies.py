"""Reading the REPL's answer to a command with lean-interact's response models, widened where the
REPL writes info trees those models refuse.

The REPL (leanprover-community/repl, `REPL/Lean/InfoTree/ToJson.lean`, commit 8948401a) writes
each info-tree node as `{"kind": Info.kind, "node": ..., "children": [...]}`, where `node` is
filled only for term, command and tactic infos and null for every other kind; its `Info.kind`
(`REPL/Lean/InfoTree.lean`) names kinds that lean-interact 0.11.6's `InfoTree.kind` literal does
not list (`ErrorNameInfo`, `DocElabInfo`, `DocInfo`, which Lean 4.35 emits, e.g. for docstrings
under `set_option doc.verso true`), and Lean may add more. A goal hole (`InfoTree.hole`) is
written as `{"goalState": ...}` with no kind at all. A command info with an anonymous
elaborator is written with `"elaborator": null`, which lean-interact's `CommandNode` refuses.

Refusing such a tree would turn a valid submission into `backend_error`; accepting it loses
nothing, because the checker reads only term, command and tactic nodes (whose shapes lean-
interact does check) and walks the children of every node, whatever its kind.
"""

from __future__ import annotations

from typing import Any

from lean_interact.interface import CommandResponse, InfoTree, LeanError
from pydantic import model_validator

#: The kind given to a goal hole, which the REPL writes without one (`InfoTree.HoleJson`).
HOLE_KIND = "hole"


class ReplInfoTree(InfoTree):
    """lean-interact's `InfoTree` with `kind` any string the REPL writes (see the module
    docstring); `node` and `children` keep lean-interact's models, `dfs_walk` works unchanged."""

    # Widening a field in a subclass is how pydantic reads more; mypy refuses any override of
    # an attribute's type (a reference typed as the base could assign through it), and nothing
    # here assigns these fields.
    kind: str  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _hole(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" not in data and "goalState" in data:
            return {**data, "kind": HOLE_KIND, "node": None, "children": []}
        return data


class ReplCommandResponse(CommandResponse):
    """lean-interact's `CommandResponse` whose info trees are `ReplInfoTree`s."""

    # As `kind` above: `list` is invariant, so mypy refuses the narrower element type.
    infotree: list[ReplInfoTree] | None = None  # type: ignore[assignment]


def parse_command_response(raw: dict[str, Any]) -> ReplCommandResponse | LeanError:
    """The REPL's JSON answer to a `Command` as lean-interact's models (a `LeanError` when the
    answer is only `{"message": ...}`, the REPL's refusal).

    Command nodes with `"elaborator": null` get the empty elaborator name (`raw` is modified).
    Raises pydantic's `ValidationError` for anything else that is not a REPL response.
    """
    if set(raw) == {"message"}:
        return LeanError.model_validate(raw)
    _fill_elaborators(raw.get("infotree") or [])
    return ReplCommandResponse.model_validate(raw)


def _fill_elaborators(trees: list[Any]) -> None:
    stack = list(trees)
    while stack:
        tree = stack.pop()
        if not isinstance(tree, dict):
            continue
        node = tree.get("node")
        if tree.get("kind") == "CommandInfo" and isinstance(node, dict) and node.get("elaborator") is None:
            node["elaborator"] = ""
        stack.extend(tree.get("children") or [])
