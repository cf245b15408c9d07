"""Per-tactic goals of one declaration's proof, read from the REPL's info tree
(`"infotree": "full"`, REPL/Lean/InfoTree/ToJson.lean: a `TacticInfo` node carries its syntax
with range and `goalsBefore`/`goalsAfter`, Lean's `Elab.TacticInfo`), flat (`tactic_steps`) or
as a tree of goals (`proof_tree`).

Kept: tactic nodes with a source range (a macro's expansion has a synthetic range and repeats
its original), whose kind is not a tactic sequence or a `by` block (those only hold the
tactics), one node per source range (the outermost, i.e. the tactic as written).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lean_interact.interface import CommandResponse, InfoTree, TacticNode

from ..errors import ErrorCode, LeanIndexError
from ..models import InspectRequest, InspectResponse
from .goals import Goal, parse_goal
from .models import Position, ProofBox, TacticOutcome, TacticStep, TreeTactic
from .probe import declared_name, top_commands

#: Syntax kinds of tactic nodes that only group the tactics written in them.
GROUPING_KINDS = frozenset(
    {
        "Lean.Parser.Term.byTactic",
        "Lean.Parser.Tactic.tacticSeq",
        "Lean.Parser.Tactic.tacticSeq1Indented",
        "Lean.Parser.Tactic.tacticSeqBracketed",
        "null",
    }
)


def declaration_tree(trees: list[InfoTree], theorem: str | None) -> tuple[str, InfoTree]:
    """The name and command node of the declaration `theorem` (as written at its declaration),
    or of the only named declaration when `theorem` is None.

    Raises `LeanIndexError`: `not_found` (no such declaration; `details.declared` lists the
    names), `invalid_request` (no name given and the file declares several or none).
    """
    named: list[tuple[str, InfoTree]] = []
    for tree in trees:
        for command in top_commands(tree):
            name = declared_name(command)
            if name is not None:
                named.append((name, command))
    declared = [name for name, _ in named]
    if theorem is None:
        if len(named) != 1:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST, f"the file declares {len(named)} names; give `theorem`", {"declared": declared}
            )
        return named[0]
    for name, command in named:
        if theorem == name or theorem.endswith("." + name):
            return name, command
    raise LeanIndexError(ErrorCode.NOT_FOUND, f"the file declares no {theorem!r}", {"theorem": theorem, "declared": declared})


def _text(lines: list[str], start: Position, end: Position) -> str:
    if start.line == end.line:
        return lines[start.line - 1][start.column : end.column]
    parts = [lines[start.line - 1][start.column :], *lines[start.line : end.line - 1], lines[end.line - 1][: end.column]]
    return "\n".join(parts)


def tactic_steps(command: InfoTree, body: str) -> list[TacticStep]:
    """Every tactic of the declaration in source order (see the module docstring); the tactic
    text is the source between its range's ends in `body` (the submitted file, header blanked)."""
    lines = body.split("\n")
    seen: set[tuple[int, int, int, int]] = set()
    # Each step with its REPL range (lines and columns, always given there) to order it by.
    keyed: list[tuple[tuple[int, int, int, int], TacticStep]] = []
    for sub in command.dfs_walk():
        node = sub.node
        if not isinstance(node, TacticNode) or node.stx.range.synthetic or node.stx.kind in GROUPING_KINDS:
            continue
        r = node.stx.range
        key = (r.start.line, r.start.column, r.finish.line, r.finish.column)
        if key in seen:
            continue
        seen.add(key)
        start, end = Position(line=r.start.line, column=r.start.column), Position(line=r.finish.line, column=r.finish.column)
        keyed.append(
            (
                key,
                TacticStep(
                    tactic=_text(lines, start, end),
                    start=start,
                    end=end,
                    goals_before=[parse_goal(g) for g in node.goals_before],
                    goals_after=[parse_goal(g) for g in node.goals_after],
                ),
            )
        )
    keyed.sort(key=lambda k: (k[0][0], k[0][1], -k[0][2], -k[0][3]))
    return [step for _, step in keyed]


def _inside(inner: TacticStep, outer: TacticStep) -> bool:
    return (outer.start.line, outer.start.column) <= (inner.start.line, inner.start.column) and (
        inner.end.line,
        inner.end.column,
    ) <= (outer.end.line, outer.end.column) and inner != outer


def _outermost(steps: list[TacticStep]) -> list[TacticStep]:
    return [s for s in steps if not any(_inside(s, other) for other in steps)]


class _OpenBox:
    """A box being built: its goal, the goal its next tactic works on, its tactics."""

    def __init__(self, goal: Goal):
        self.goal = goal
        self.current: Goal | None = goal
        self.tactics: list[TreeTactic] = []
        self.children: list[_OpenBox] = []
        self.slots: list[tuple[int, list[_OpenBox]]] = []


def proof_tree(steps: list[TacticStep]) -> ProofBox | None:
    """The proof as nested boxes (see `TreeTactic`): each outermost tactic (focusing tactics
    replaced by what they hold, `_sequence`) goes to the open box whose current goal is its first
    goal before (the latest opened such box); the tactics written inside it form its
    `have_boxes`, built the same way. None when the proof has no tactic."""
    return _build(steps)


def _sequence(steps: list[TacticStep]) -> list[tuple[TacticStep, list[TacticStep]]]:
    """The outermost tactics with the tactics written inside each; a tactic whose inner
    tactics start on its own goal (`·`, `case`, `next`, `focus`) is replaced by them."""
    sequence: list[tuple[TacticStep, list[TacticStep]]] = []
    for step in _outermost(steps):
        inner = [t for t in steps if _inside(t, step)]
        first = _outermost(inner)[:1]
        if first and first[0].goals_before and step.goals_before and first[0].goals_before[0].text == step.goals_before[0].text:
            sequence.extend(_sequence(inner))
        else:
            sequence.append((step, inner))
    return sequence


def _build(steps: list[TacticStep]) -> ProofBox | None:
    sequence = _sequence(steps)
    top = [step for step, _ in sequence]
    if not top or not top[0].goals_before:
        return None
    root = _OpenBox(top[0].goals_before[0])
    open_boxes = [root]
    for step, inner in sequence:
        if not step.goals_before:
            continue
        goal = step.goals_before[0]
        box = next((b for b in reversed(open_boxes) if b.current is not None and b.current.text == goal.text), None)
        if box is None:
            # A goal no open box is on (e.g. after a combinator): it starts its own box at the root.
            box = _OpenBox(goal)
            root.children.append(box)
            open_boxes.append(box)
        rest = [g.text for g in step.goals_before[1:]]
        after = [g for g in step.goals_after]
        new = after[: len(after) - len(rest)] if [g.text for g in after[len(after) - len(rest) :]] == rest else after
        haves = [b for b in (_build(group) for group in _groups(inner)) if b is not None]
        old = set(goal.hypotheses)
        subgoals: list[_OpenBox] = []
        outcome: TacticOutcome
        if not new:
            outcome, new_goal, box.current = "closed", None, None
        elif len(new) == 1 and new[0].text == goal.text:
            outcome, new_goal = "unchanged", None
        elif len(new) == 1:
            outcome, new_goal, box.current = "transformed", new[0], new[0]
        else:
            outcome, new_goal, box.current = "split", None, None
            subgoals = [_OpenBox(g) for g in new]
            open_boxes.extend(subgoals)
        index = len(box.tactics)
        box.tactics.append(
            TreeTactic(
                tactic=step.tactic,
                start=step.start,
                outcome=outcome,
                new_goal=new_goal,
                new_hypotheses=list(dict.fromkeys(h for g in new for h in g.hypotheses if h not in old)),
                subgoals=[],
                have_boxes=haves,
            )
        )
        if subgoals:
            box.slots.append((index, subgoals))
    return _freeze(root)


def _groups(inner: list[TacticStep]) -> list[list[TacticStep]]:
    """Tactics nested in one tactic, split into runs that start on a new first goal."""
    groups: list[list[TacticStep]] = []
    for step in inner:
        if groups and any(_inside(step, other) or step.goals_before == other.goals_after for other in groups[-1]):
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups


def _freeze(box: _OpenBox) -> ProofBox:
    tactics = list(box.tactics)
    for index, subgoals in box.slots:
        tactics[index] = tactics[index].model_copy(update={"subgoals": [_freeze(b) for b in subgoals]})
    if box.children:
        # Boxes on goals no tactic produced in view (see `_build`) follow as sub-proofs of the last tactic.
        last = tactics[-1] if tactics else None
        if last is not None:
            tactics[-1] = last.model_copy(update={"have_boxes": [*last.have_boxes, *(_freeze(b) for b in box.children)]})
    return ProofBox(goal=box.goal, tactics=tactics)


def used_constants(response: CommandResponse, command: InfoTree) -> list[str]:
    """The constants the REPL reports the declaration's tactics use (`allTactics`,
    `usedConstants`), first use first; tactics outside the declaration's range are left out."""
    r = command.node.stx.range if command.node is not None else None
    names: dict[str, None] = {}
    for tactic in response.tactics:
        if r is not None and not (
            (r.start.line, r.start.column) <= (tactic.start_pos.line, tactic.start_pos.column)
            and (tactic.end_pos.line, tactic.end_pos.column) <= (r.finish.line, r.finish.column)
        ):
            continue
        names.update(dict.fromkeys(tactic.used_constants))
    return list(names)


def signature_line(response: InspectResponse) -> str:
    """`<kind> <name> : <type>` (a doc-gen4 catalog's type is already a signature with its
    binders, so it follows the name without a colon)."""
    separator = " " if "type" in response.approximate_fields else " : "
    return f"{response.kind.value} {response.name}{separator}{response.type}"


async def catalog_signatures(
    inspect: Callable[[InspectRequest], Awaitable[InspectResponse]], environment: str, names: list[str]
) -> tuple[list[str], list[str]]:
    """The catalog's signature of each name (`signature_line`) and the names it does not hold
    (`not_found`); any other failure of the catalog is raised."""
    found, missing = [], []
    for name in names:
        try:
            found.append(signature_line(await inspect(InspectRequest(environment=environment, declaration_name=name))))
        except LeanIndexError as error:
            if error.code is not ErrorCode.NOT_FOUND:
                raise
            missing.append(name)
    return found, missing
