"""From the REPL's answers on proof states to the answers of `lean.proof.state` and
`lean.proof.step`: which `sorry` a state is opened at, and what a step's status is.

The step status is read from the REPL's `proofStatus` (REPL `Main.lean`, `getProofStatus`:
`Completed` after its kernel check of the assembled proof, `Incomplete: ...` when goals,
`sorry` or metavariables remain, `Error: ...` when the kernel refused it) and its messages.
"""

from __future__ import annotations

from lean_interact.interface import CommandResponse, LeanError, ProofStepResponse, Sorry

from ..errors import ErrorCode, LeanIndexError
from .goals import Goal, parse_goal
from .models import Position, StepStatus

#: The REPL's reply to a proof state it does not hold (recorded `unknown_proof_state`).
UNKNOWN_STATE_REPLY = "Unknown proof state."
#: How the REPL prefixes Lean's own refusals of a tactic (recorded `unknown_tactic`).
LEAN_ERROR_PREFIX = "Lean error"


def chosen_sorry(response: CommandResponse, position: Position | None) -> tuple[Sorry, int]:
    """The `sorry` a state is opened at, with its REPL proof state: the one starting at
    `position`, or the only one.

    Raises `LeanIndexError(invalid_request)` when the file has no `sorry` with a proof state,
    when `position` names none of them, or when there are several and no `position`.
    """
    sorries = [(s, s.proof_state) for s in response.sorries if s.proof_state is not None]
    where = [{"line": s.start_pos.line, "column": s.start_pos.column} for s, _ in sorries if s.start_pos]
    if not sorries:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "the file has no `sorry` to open a proof state at", {})
    if position is None:
        if len(sorries) > 1:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST, f"the file has {len(sorries)} `sorry`s; give `position` to pick one", {"sorries": where}
            )
        return sorries[0]
    for s, state in sorries:
        if s.start_pos and (s.start_pos.line, s.start_pos.column) == (position.line, position.column):
            return s, state
    raise LeanIndexError(
        ErrorCode.INVALID_REQUEST, f"no `sorry` starts at {position.line}:{position.column}", {"sorries": where}
    )


def goals_of(texts: list[str]) -> list[Goal]:
    """Goal strings as `Goal`s."""
    return [parse_goal(text) for text in texts]


def step_status(answer: ProofStepResponse) -> StepStatus:
    """The status of a step the REPL answered with a state (see the module docstring): `error`
    when Lean reported an error or the kernel refused the proof, else by `proofStatus`."""
    if any(m.severity == "error" for m in answer.messages) or answer.proof_status.startswith("Error"):
        return StepStatus.ERROR
    if answer.proof_status == "Completed":
        return StepStatus.COMPLETED
    return StepStatus.OPEN if answer.goals else StepStatus.INCOMPLETE


def refusal_is_lean(answer: LeanError) -> bool:
    """Whether a REPL refusal of a step is Lean's answer (a tactic that does not parse), not a
    failure of the tool."""
    return answer.message.startswith(LEAN_ERROR_PREFIX)
