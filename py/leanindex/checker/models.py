"""Request and response models of the proof checker (`lean.check`, `POST /v1/check`,
`leanindex check`), defined once here.

Positions follow the Lean REPL's `Pos` (REPL/JSON.lean, from Lean's `Position`): `line` is
1-based, `column` is 0-based and counts Unicode code points. Times are milliseconds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from ..base import Frozen
from ..models import EnvironmentIdentity, ProfileId
from ..records import Position

#: Hard ceiling of a per-check timeout, in seconds (the default is `CheckerConfig.timeout_s`).
MAX_TIMEOUT_S = 300.0

#: The axioms a proof may depend on and still be `accepted` (an allowlist, not a denylist).
ALLOWED_AXIOMS: tuple[str, ...] = ("propext", "Classical.choice", "Quot.sound")


class CheckRequest(Frozen):
    """A complete Lean file to check against a profile's warm environment.

    `code` holds the imports (each must be covered by the profile's imports) and then the
    declarations; its size is capped by the checker's `max_code_bytes` (UTF-8 bytes, default
    256 KiB, `payload_too_large`). `timeout_s` defaults to the checker's configured timeout and
    may not exceed 300 s.
    """

    environment: ProfileId
    code: Annotated[str, StringConstraints(min_length=1)] = Field(description="A complete Lean file.")
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(
        default=None, description="Wall-clock budget of the check in seconds (at most 300)."
    )


class Verdict(StrEnum):
    """Lean's verdict: `accepted` (no error, no `sorry`, only allowed axioms), `incomplete`
    (`sorry` or unsolved goals and nothing worse), `rejected` (errors, disallowed axioms, or a
    forbidden command)."""

    ACCEPTED = "accepted"
    INCOMPLETE = "incomplete"
    REJECTED = "rejected"


class Diagnostic(Frozen):
    """One message Lean reported, positions in the submitted file's coordinates."""

    severity: Literal["error", "warning", "info", "trace"]
    start: Position
    end: Position | None
    text: str


class SorryGoal(Frozen):
    """A `sorry` in the submission and the goal it stands for (the REPL's `sorries`)."""

    start: Position | None
    end: Position | None
    goal: str


class TheoremAxioms(Frozen):
    """The axioms a declaration of the submission depends on (`#print axioms`, from Lean's
    `Lean.Elab.Command` `#print axioms` handler via `Lean.collectAxioms`); `flagged` lists those
    outside `propext`, `Classical.choice`, `Quot.sound`, in the same order."""

    name: str
    axioms: list[str]
    flagged: list[str]


class ReasonCode(StrEnum):
    """Why a verdict is not `accepted`."""

    ERROR = "error"
    UNSOLVED_GOALS = "unsolved_goals"
    SORRY = "sorry"
    DISALLOWED_AXIOM = "disallowed_axiom"
    FORBIDDEN_COMMAND = "forbidden_command"
    AXIOMS_UNVERIFIED = "axioms_unverified"


class Reason(Frozen):
    """One reason behind a non-accepted verdict; `command`/`start` name a forbidden command or
    an unverifiable declaration and where it is."""

    code: ReasonCode
    message: str
    command: str | None = None
    start: Position | None = None


class Timings(Frozen):
    """Where the time went, in milliseconds: waiting for a worker, in the REPL, end to end."""

    queue_ms: float
    check_ms: float
    total_ms: float


class Isolation(Frozen):
    """Which isolation applied to the REPL process that answered."""

    scrubbed_environment: bool
    private_tmp_home: bool
    rlimits: dict[str, int] = Field(description="Resource limits set, by name (bytes, seconds or counts).")
    network_namespace: bool = Field(description="True when the REPL ran in a new network namespace (no network).")
    pid_namespace: bool


class CheckResponse(EnvironmentIdentity):
    """Lean's verdict on a submission, with everything it was based on.

    `protected` is false when the checker runs with `allow_unsafe_commands`: commands that can
    forge a verdict were not refused, so the verdict is only as trustworthy as the caller.
    `cached` is true when an identical (environment, code) pair was answered before and the
    stored verdict is returned. `code_sha256` identifies the submission.
    """

    verdict: Verdict
    reasons: list[Reason]
    diagnostics: list[Diagnostic]
    sorries: list[SorryGoal]
    axioms: list[TheoremAxioms]
    timings: Timings
    isolation: Isolation
    cached: bool
    protected: bool
    lean_toolchain: str | None = Field(description="The worker's Lean version, from the project's `lean-toolchain`.")
    code_sha256: str
