"""Request and response models of the proof checker (`lean.check`, `POST /v1/check`,
`leanindex check`), defined once here.

Positions follow the Lean REPL's `Pos` (REPL/JSON.lean, from Lean's `Position`): `line` is
1-based, `column` is 0-based and counts Unicode code points. Times are milliseconds.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from ..base import Frozen
from ..errors import ErrorBody
from ..models import EnvironmentIdentity, ProfileId
from ..records import Position
from .failures import HINTS, FailureClass, ReasonCode
from .goals import Goal

#: Hard ceiling of a per-check timeout, in seconds (the default is `CheckerConfig.timeout_s`).
MAX_TIMEOUT_S = 300.0

#: The axioms a proof may depend on and still be `accepted` (an allowlist, not a denylist).
ALLOWED_AXIOMS: tuple[str, ...] = ("propext", "Classical.choice", "Quot.sound")


#: Most theorems one reference may name.
MAX_REFERENCE_THEOREMS = 64


class ReferenceTheorem(Frozen):
    """A theorem whose statement is pinned: `name` as the submission declares it (with its
    namespaces, e.g. `Nat.my_add_comm`) and `statement`, the Lean source that follows the name in
    `theorem <name> <statement> := ...` (binders and type, e.g. `(n : Nat) : n + 0 = n`)."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=1024, pattern=r"^[^\s:()\[\]{}]+$")] = Field(
        description="Theorem name as the submission declares it."
    )
    statement: Annotated[str, StringConstraints(min_length=1)] = Field(description="Binders and type after the name, as Lean source.")


class Reference(Frozen):
    """The statements a submission must keep (the statement fence): `theorems` named one by one,
    and/or `file`, a Lean file (imports the profile covers; then `theorem`/`lemma` commands and
    scope commands: `namespace`, `section`, `end`, `open`, `universe`, `variable`,
    `set_option`) whose theorems must all be present. Both are elaborated in the profile's
    environment before the submission, under fresh names; see `leanindex.checker.fence`."""

    theorems: Annotated[list[ReferenceTheorem], Field(max_length=MAX_REFERENCE_THEOREMS)] = Field(
        default_factory=list, description="Theorems whose statements are pinned (at most 64)."
    )
    file: Annotated[str, StringConstraints(min_length=1)] | None = Field(default=None, description="A reference Lean file.")

    @model_validator(mode="after")
    def _something(self) -> Reference:
        if not self.theorems and self.file is None:
            raise ValueError("a reference needs `theorems` or a `file`")
        return self


class FenceStatus(StrEnum):
    """How a fenced theorem fared: `same` (declared by the submission as a theorem whose type is
    the reference's, by Lean's comparison), `changed` (its type differs), `missing` (the
    submission does not declare it), `not_theorem` (declared, but not as a `theorem`)."""

    SAME = "same"
    CHANGED = "changed"
    MISSING = "missing"
    NOT_THEOREM = "not_theorem"


class StatementFence(Frozen):
    """The statement fence on one theorem. `submitted` and `reference` are the two signatures as
    Lean's `#check` prints them (the reference under the theorem's own name); `first_difference`
    is the first differing subterm of the two printed forms (`[submitted, reference]`), a reading
    aid computed from Lean's prints, while `status` comes from Lean's own comparison."""

    name: str = Field(description="The fenced theorem.")
    status: FenceStatus = Field(description="Lean's comparison of the two statements.")
    kind: str | None = Field(description="The submission's declaration kind (`theorem`, `def`, ...); None when missing.")
    submitted: str | None = Field(description="The submission's signature as `#check` prints it; null when missing.")
    reference: str | None = Field(description="The reference's signature as `#check` prints it.")
    first_difference: list[str] | None = Field(default=None, description="First differing subterm, `[submitted, reference]`.")


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
    reference: Reference | None = Field(default=None, description="Statements the submission must keep (statement fence).")


class Verdict(StrEnum):
    """Lean's verdict: `accepted` (no error, no `sorry`, only allowed axioms), `incomplete`
    (`sorry` or unsolved goals and nothing worse), `rejected` (errors, disallowed axioms, or a
    forbidden command)."""

    ACCEPTED = "accepted"
    INCOMPLETE = "incomplete"
    REJECTED = "rejected"


class Diagnostic(Frozen):
    """One message Lean reported, positions in the submitted file's coordinates.

    `suggestions` is set on an error naming a name Lean does not know ("Unknown identifier",
    "Unknown constant", "Invalid field ... does not contain"): at most 8 close declaration names
    of the profile's catalog, best first (`leanindex.engine.suggest`), `[]` when none is close;
    it is None on every other message, when the checker has no catalog for the profile, and
    past the first 32 distinct unknown names of one answer (`checker.MAX_SUGGESTED_NAMES`)."""

    severity: Literal["error", "warning", "info", "trace"] = Field(description="Lean's message severity.")
    start: Position = Field(description="Where the message starts in the file.")
    end: Position | None = Field(description="Where it ends; null when Lean gives no end.")
    text: str = Field(description="The message as Lean wrote it.")
    suggestions: list[str] | None = Field(default=None, description="For an unknown name: close catalog names, best first.")


class SorryGoal(Frozen):
    """A `sorry` in the submission and the goal it stands for (the REPL's `sorries`)."""

    start: Position | None = Field(description="Where the `sorry` starts in the file.")
    end: Position | None = Field(description="Where it ends.")
    goal: str = Field(description="The goal it stands for, as Lean prints it.")


class TheoremAxioms(Frozen):
    """The axioms a declaration of the submission depends on (`#print axioms`, from Lean's
    `Lean.Elab.Command` `#print axioms` handler via `Lean.collectAxioms`); `flagged` lists those
    outside `propext`, `Classical.choice`, `Quot.sound`, in the same order."""

    name: str = Field(description="The declaration.")
    axioms: list[str] = Field(description="Axioms it depends on (`#print axioms`).")
    flagged: list[str] = Field(description="Those outside the allowed three.")


def _failure_class(code: ReasonCode, given: str | None) -> FailureClass:
    """`given` (a `FailureClass` or its value) when set, else `code`'s own class: `other_error`
    for `error`, the class of the same name for any other code."""
    return FailureClass(given or (FailureClass.OTHER_ERROR if code is ReasonCode.ERROR else code.value))


class Reason(Frozen):
    """One reason behind a non-accepted verdict; `command`/`start` name a forbidden command or
    an unverifiable declaration and where it is. `failure_class` refines `code` (an `error` is
    classed by Lean's message, `failures.classify_error`; any other code is its own class) and
    `hint` is that class's one line on what to try next (`failures.HINTS`); both are filled in
    from `code` when not given."""

    code: ReasonCode = Field(description="Why the verdict is not `accepted`.")
    message: str = Field(description="The reason, for people.")
    command: str | None = Field(default=None, description="The forbidden command or unverifiable declaration.")
    start: Position | None = Field(default=None, description="Where it is in the file.")
    failure_class: FailureClass = Field(description="`code` refined by Lean's message.")
    hint: str = Field(description="What to try next (one line).")

    @model_validator(mode="before")
    @classmethod
    def _classed(cls, data: object) -> object:
        if isinstance(data, dict) and "code" in data:
            failure = _failure_class(ReasonCode(data["code"]), data.get("failure_class"))
            data = {**data, "failure_class": failure, "hint": data.get("hint") or HINTS[failure]}
        return data

    @classmethod
    def of(
        cls, code: ReasonCode, message: str, *, command: str | None = None, start: Position | None = None, failure_class: FailureClass | None = None
    ) -> Reason:
        """A reason whose `failure_class` is the one given or else `code`'s own, with that
        class's hint (the typed spelling of what the validator fills in)."""
        failure = _failure_class(code, failure_class)
        return cls(code=code, message=message, command=command, start=start, failure_class=failure, hint=HINTS[failure])


class FailureSummary(Frozen):
    """What a non-accepted verdict comes down to: `failure_class` and `hint` of its deciding
    reason (the first of `reasons`); both None for `accepted`."""

    failure_class: FailureClass | None = Field(default=None, description="The class of the reason that decided a non-accepted verdict.")
    hint: str | None = Field(default=None, description="What to try next, for that class (one line).")


class Timings(Frozen):
    """Where the time went, in milliseconds: waiting for a worker, in the REPL, end to end."""

    queue_ms: float = Field(description="Waiting for a worker, ms.")
    check_ms: float = Field(description="In the REPL, ms.")
    total_ms: float = Field(description="End to end, ms.")


class Isolation(Frozen):
    """Which isolation applied to the REPL process that answered."""

    scrubbed_environment: bool = Field(description="Environment variables were scrubbed.")
    private_tmp_home: bool = Field(description="Private working folder and HOME.")
    rlimits: dict[str, int] = Field(description="Resource limits set, by name (bytes, seconds or counts).")
    network_namespace: bool = Field(description="True when the REPL ran in a new network namespace (no network).")
    pid_namespace: bool = Field(description="True when the REPL ran in a new PID namespace.")


class CheckResponse(EnvironmentIdentity, FailureSummary):
    """Lean's verdict on a submission, with everything it was based on.

    `protected` is false when the checker runs with `allow_unsafe_commands`: commands that can
    forge a verdict were not refused, so the verdict is only as trustworthy as the caller.
    `cached` is true when an identical (environment, code) pair was answered before and the
    stored verdict is returned. `code_sha256` identifies the submission.
    """

    verdict: Verdict = Field(description="Lean's verdict on the file.")
    reasons: list[Reason] = Field(description="Why it is not `accepted`, deciding reason first.")
    diagnostics: list[Diagnostic] = Field(description="Every message Lean reported.")
    sorries: list[SorryGoal] = Field(description="Each `sorry` with its goal.")
    axioms: list[TheoremAxioms] = Field(description="Axioms per declaration of the file.")
    timings: Timings = Field(description="Where the time went (ms).")
    isolation: Isolation = Field(description="Confinement of the REPL that answered.")
    cached: bool = Field(description="The stored verdict of an identical earlier check.")
    protected: bool = Field(description="False when verdict-forging commands were allowed.")
    lean_toolchain: str | None = Field(description="The worker's Lean version, from the project's `lean-toolchain`.")
    code_sha256: str = Field(description="sha256 of the submitted code (UTF-8).")
    fence: list[StatementFence] = Field(default_factory=list, description="The statement fence per referenced theorem.")


#: Most items one batch call over HTTP or MCP may carry (`BatchCheckRequest`); larger batches go
#: through `Checker.check_many` or `leanindex check-batch`, which stream them.
MAX_BATCH_ITEMS = 256

#: Longest caller's id of a batch item, in characters.
MAX_BATCH_ID_CHARS = 256


class BatchItem(CheckRequest):
    """One request of a batch: a `CheckRequest` with the caller's `id`, which its `BatchResult`
    carries back (results arrive in completion order, not input order). One line of
    `leanindex check-batch`'s input is one item as a JSON object."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_BATCH_ID_CHARS)] = Field(
        description="The caller's id of this request, unique in its batch."
    )

    def request(self) -> CheckRequest:
        """The check request without the id."""
        return CheckRequest.model_validate(self.model_dump(exclude={"id"}, exclude_none=True))


class BatchResult(Frozen):
    """The answer to one batch item: exactly one of `response` (Lean's verdict, as `lean.check`
    answers it) and `error` (the shared error object's body: a refusal or tool failure such as
    `header_mismatch`, `timeout`, `backend_error`; never a verdict). `attempts` counts the
    backends that ran it (2 when a Ray actor died under it and it was retried elsewhere). One
    line of `leanindex check-batch`'s output is one result."""

    id: str = Field(description="The item's id.")
    response: CheckResponse | None = Field(default=None, description="Lean's verdict, as `lean.check` answers it.")
    error: ErrorBody | None = Field(default=None, description="The tool's refusal or failure instead of a verdict.")
    attempts: Annotated[int, Field(ge=0)] = Field(default=1, description="Backends that ran it (2 after a retry).")

    @model_validator(mode="after")
    def _one_answer(self) -> BatchResult:
        if (self.response is None) == (self.error is None):
            raise ValueError("a batch result holds exactly one of `response` and `error`")
        return self


class BatchCheckRequest(Frozen):
    """A batch of 1 to 256 checks (`lean.check.batch`, `POST /v1/check/batch`), each with an id
    unique in the batch; they run concurrently on the checker's workers."""

    items: Annotated[list[BatchItem], Field(min_length=1, max_length=MAX_BATCH_ITEMS)] = Field(
        description="1-256 checks, ids unique."
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> BatchCheckRequest:
        repeated = sorted(name for name, count in Counter(item.id for item in self.items).items() if count > 1)
        if repeated:
            raise ValueError(f"batch ids must be unique; repeated: {', '.join(repeated[:10])}")
        return self


class BatchCheckResponse(Frozen):
    """One `BatchResult` per item, in the items' order, and how many ended each way
    (`counts`: `accepted`, `incomplete`, `rejected` and `error`)."""

    results: list[BatchResult] = Field(description="One per item, in the items' order.")
    counts: dict[str, int] = Field(description="Results per ending: accepted, incomplete, rejected, error.")


#: Most candidates one target check may carry.
MAX_CANDIDATES = 16


class TargetMode(StrEnum):
    """`target`: every candidate replaces the target declaration, each against the environment
    just before it; `sequential`: every command of the file in order, the environment extended
    by a command only when it is `accepted`."""

    TARGET = "target"
    SEQUENTIAL = "sequential"


class TargetCheckRequest(Frozen):
    """A Lean file and replacements for one of its declarations (`lean.check.target`).

    `code` is the whole file (imports the profile covers, then commands; top-level commands start
    at column 0, see `leanindex.checker.commands`). In `target` mode, `target` names one
    declaration of the file (as written, or with its namespaces) and `candidates` holds 1-16
    whole declarations, each declaring that same name. In `sequential` mode neither is given.
    The file and the candidates together are capped by `max_code_bytes` (UTF-8 bytes);
    `timeout_s` is the budget of the whole request (at most 300 s).
    """

    environment: ProfileId
    code: Annotated[str, StringConstraints(min_length=1)] = Field(description="A complete Lean file.")
    mode: TargetMode = Field(default=TargetMode.TARGET, description="`target` (replace one declaration) or `sequential`.")
    target: Annotated[str, StringConstraints(min_length=1, max_length=1024)] | None = Field(
        default=None, description="The declaration to replace (target mode)."
    )
    candidates: Annotated[list[Annotated[str, StringConstraints(min_length=1)]], Field(max_length=MAX_CANDIDATES)] = Field(
        default_factory=list, description="1-16 whole declarations replacing the target (target mode)."
    )
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(
        default=None, description="Wall-clock budget of the whole request in seconds (at most 300)."
    )
    reference: Reference | None = Field(
        default=None, description="Statements every candidate must keep (target mode; it may name only the target)."
    )

    @model_validator(mode="after")
    def _mode_fields(self) -> TargetCheckRequest:
        if self.mode is TargetMode.TARGET and (self.target is None or not self.candidates):
            raise ValueError("target mode needs `target` and 1-16 `candidates`")
        if self.mode is TargetMode.SEQUENTIAL and (self.target is not None or self.candidates):
            raise ValueError("sequential mode takes neither `target` nor `candidates`")
        if self.mode is TargetMode.SEQUENTIAL and self.reference is not None:
            raise ValueError("sequential mode takes no `reference`; fence a whole file with lean.check")
        return self


class UnitVerdict(FailureSummary):
    """Lean's verdict on one candidate (target mode) or one command of the file (sequential).

    Positions are the file's: a candidate's lines are counted as if it stood in place of the
    target. `candidate` is the candidate's index (target mode); `name` the declared name as
    written (None when the command declares none); `extended` whether the environment was
    extended by it (sequential mode: only after `accepted`). `check_ms` is its REPL time.
    """

    candidate: int | None = Field(description="The candidate's index (target mode); null in sequential mode.")
    name: str | None = Field(description="The declared name as written; null when none.")
    start: Position = Field(description="Where the candidate or command starts in the file.")
    verdict: Verdict = Field(description="Lean's verdict on this unit.")
    reasons: list[Reason] = Field(description="Why it is not `accepted`, deciding reason first.")
    diagnostics: list[Diagnostic] = Field(description="Lean's messages on this unit.")
    sorries: list[SorryGoal] = Field(description="Each `sorry` with its goal.")
    axioms: list[TheoremAxioms] = Field(description="Axioms per declaration of this unit.")
    extended: bool = Field(description="The environment was extended by it.")
    check_ms: float = Field(description="Its REPL time, ms.")
    fence: list[StatementFence] = Field(default_factory=list, description="The statement fence on the candidate.")


class TargetCheckResponse(EnvironmentIdentity):
    """Verdicts of a target check or a sequential pass.

    `reused` is true when the environment before the target was already prepared on the worker
    that answered (keyed by environment, protection and `prefix_sha256`), so only the candidates
    were elaborated. `prefix_diagnostics` are Lean's messages on the commands before the target
    (file positions); a command there that can forge a verdict is a `forbidden_command` reason
    of every candidate. `timings.check_ms` is the REPL time of the whole request,
    `prepare_ms` that of the prefix (0 when reused).
    """

    mode: TargetMode = Field(description="The request's mode.")
    target: str | None = Field(description="The request's target; null in sequential mode.")
    reused: bool = Field(description="The prefix was already prepared on the worker.")
    prefix_sha256: str | None = Field(description="sha256 of the source before the target; null in sequential mode.")
    prefix_diagnostics: list[Diagnostic] = Field(description="Lean's messages on the commands before the target.")
    prepare_ms: float = Field(description="REPL time of the prefix, ms (0 when reused).")
    results: list[UnitVerdict] = Field(description="One verdict per candidate or command.")
    timings: Timings = Field(description="Where the time went (ms).")
    isolation: Isolation = Field(description="Confinement of the REPL that answered.")
    protected: bool = Field(description="False when verdict-forging commands were allowed.")
    lean_toolchain: str | None = Field(description="The worker's `lean-toolchain` line.")
    code_sha256: str = Field(description="sha256 of the submitted code (UTF-8).")


class AuditRequest(Frozen):
    """A complete Lean file to audit (`lean.audit`): checked as `lean.check` does, then every
    declaration it adds is reported. Size cap and `timeout_s` as `lean.check`."""

    environment: ProfileId
    code: Annotated[str, StringConstraints(min_length=1)] = Field(description="A complete Lean file.")
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(
        default=None, description="Wall-clock budget of the audit in seconds (at most 300)."
    )


class AuditedDeclaration(Frozen):
    """One declaration the file adds: its name (None for an `example` or an anonymous
    `instance`), kind, where it starts, and, when Lean's `#print axioms` answered for it
    (`verified`), its axioms, the flagged ones (outside the allowlist) and whether it uses
    `sorry` (`sorryAx` among its axioms)."""

    name: str | None = Field(description="Declared name; null for `example` or an anonymous instance.")
    kind: str = Field(description="Declaration keyword, e.g. `theorem`, `def`.")
    start: Position = Field(description="Where it starts in the file.")
    verified: bool = Field(description="Lean's `#print axioms` answered for it.")
    uses_sorry: bool | None = Field(description="`sorryAx` is among its axioms; null when unverified.")
    axioms: list[str] | None = Field(description="Its axioms; null when unverified.")
    flagged: list[str] = Field(description="Axioms outside the allowed three.")


class AuditResponse(EnvironmentIdentity, FailureSummary):
    """The audit of one file. `declarations_added` counts the declarations the file adds of the
    kinds whose axioms are printed (theorem, def, abbrev, opaque, instance, axiom, example; Lean's
    info trees say which); `declarations_audited` those whose axioms Lean printed. The verdict is
    `lean.check`'s, except that it is never `accepted` unless both counts agree and are above
    zero (`nothing_audited` when the file adds none). `unverified` lists the declarations whose
    axioms could not be printed."""

    verdict: Verdict = Field(description="`lean.check`'s verdict, `accepted` only when every declaration was audited.")
    reasons: list[Reason] = Field(description="Why it is not `accepted`, deciding reason first.")
    declarations_added: int = Field(description="Declarations added of the audited kinds.")
    declarations_audited: int = Field(description="Those whose axioms Lean printed.")
    declarations: list[AuditedDeclaration] = Field(description="Every declaration the file adds.")
    unverified: list[AuditedDeclaration] = Field(description="Those whose axioms could not be printed.")
    diagnostics: list[Diagnostic] = Field(description="Every message Lean reported.")
    timings: Timings = Field(description="Where the time went (ms).")
    isolation: Isolation = Field(description="Confinement of the REPL that answered.")
    protected: bool = Field(description="False when verdict-forging commands were allowed.")
    lean_toolchain: str | None = Field(description="The worker's `lean-toolchain` line.")
    code_sha256: str = Field(description="sha256 of the submitted code (UTF-8).")


#: A caller's session name: states opened under one session are reachable only from it.
SessionName = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
#: A proof state id as `lean.proof.state` and `lean.proof.step` return it.
StateId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class ProofStateRequest(Frozen):
    """Open a proof (`lean.proof.state`): `code` is a Lean file (imports the profile covers, then
    declarations) with at least one `sorry`; `position` picks the `sorry` (its 1-based line and
    0-based column in the file, as `sorries` report it) and may be left out when there is only
    one. `session` names the caller's session (states are reachable only from it; default
    `default`). Size cap and `timeout_s` as `lean.check`."""

    environment: ProfileId
    code: Annotated[str, StringConstraints(min_length=1)] = Field(description="A Lean file with a `sorry`.")
    position: Position | None = Field(default=None, description="Where the chosen `sorry` starts; needed when there are several.")
    session: SessionName = Field(default="default", description="The caller's session; its states are reachable only from it.")
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(default=None, description="Budget in seconds (at most 300).")


class ProofStateResponse(EnvironmentIdentity):
    """An open proof state: its id (valid in `session` until closed, idle for `ttl_s` seconds, or
    its worker is recycled), its goals, Lean's messages on the file, and every `sorry` of the
    file with its goal (the chosen one is `position`)."""

    state_id: str = Field(description="The new state's id, for `lean.proof.step`.")
    session: str = Field(description="The session that owns it.")
    position: Position | None = Field(description="Where the chosen `sorry` starts.")
    goals: list[Goal] = Field(description="The goals at the `sorry`.")
    diagnostics: list[Diagnostic] = Field(description="Lean's messages on the file.")
    sorries: list[SorryGoal] = Field(description="Every `sorry` of the file with its goal.")
    ttl_s: float = Field(description="Idle seconds before the state expires.")
    protected: bool = Field(description="False when verdict-forging commands were allowed.")
    timings: Timings = Field(description="Where the time went (ms).")


class ProofStepRequest(Frozen):
    """Run a tactic on an open state (`lean.proof.step`); the state stays usable whatever the
    answer. The REPL reads `tactic` as one tactic (its `ProofStep`); combinators such as
    `constructor <;> simp` or `first | a | b` are one tactic, while `;`-joined sequences and
    `case` blocks are known REPL limits (repl#43, repl#25)."""

    environment: ProfileId
    state_id: StateId = Field(description="The state to run on.")
    tactic: Annotated[str, StringConstraints(min_length=1, max_length=16 * 1024)] = Field(description="One tactic, as Lean source.")
    session: SessionName = Field(default="default", description="The session that owns the state.")
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(default=None, description="Budget in seconds (at most 300).")


class StepStatus(StrEnum):
    """`completed`: no goal is left and Lean's kernel accepted the assembled proof; `open`:
    goals remain; `incomplete`: no goal is left but the proof uses `sorry` or has unassigned
    metavariables; `error`: Lean refused the tactic (no new state)."""

    COMPLETED = "completed"
    OPEN = "open"
    INCOMPLETE = "incomplete"
    ERROR = "error"


class StepMessage(Frozen):
    """A message Lean reported on a tactic step; the REPL gives tactic-mode messages no
    position (it writes 0:0), so none is kept. `suggestions` as `Diagnostic.suggestions`."""

    severity: Literal["error", "warning", "info", "trace"] = Field(description="Lean's message severity.")
    text: str = Field(description="The message as Lean wrote it.")
    suggestions: list[str] | None = Field(default=None, description="For an unknown name: close catalog names, best first.")


class ProofStepResponse(EnvironmentIdentity):
    """Lean's answer to one tactic: the new state's id (None when Lean refused the tactic), its
    goals, Lean's messages, and Lean's own status line (`proof_status`, the REPL's
    `proofStatus`, or the refusal's text)."""

    state_id: str | None = Field(description="The new state's id; null when Lean refused the tactic.")
    previous_state_id: str = Field(description="The state the tactic ran on (still open).")
    status: StepStatus = Field(description="Where the proof stands after the tactic.")
    goals: list[Goal] = Field(description="Goals of the new state.")
    messages: list[StepMessage] = Field(description="Lean's messages on the tactic.")
    proof_status: str = Field(description="The REPL's `proofStatus`, or the refusal's text.")
    timings: Timings = Field(description="Where the time went (ms).")


class ProofCloseRequest(Frozen):
    """Release an open state (`lean.proof.close`)."""

    environment: ProfileId
    state_id: StateId = Field(description="The state to release.")
    session: SessionName = Field(default="default", description="The session that owns the state.")


class ProofCloseResponse(Frozen):
    """The state that was released and how many states stay open in the session."""

    state_id: str = Field(description="The released state.")
    open_states: int = Field(description="States still open in the session.")


class ProofStepsRequest(Frozen):
    """A complete Lean file and the declaration whose proof to show (`lean.proof.steps`,
    `lean.proof.tree`). `theorem` is its name as written (or with its namespaces); it may be
    left out when the file declares one name. `include_theorems`: also give the signature of
    every constant the proof's tactics use, from the profile's catalog."""

    environment: ProfileId
    code: Annotated[str, StringConstraints(min_length=1)] = Field(description="A complete Lean file.")
    theorem: Annotated[str, StringConstraints(min_length=1, max_length=1024)] | None = Field(
        default=None, description="The declaration whose proof to show; optional when the file declares one."
    )
    include_theorems: bool = Field(default=False, description="Also give the signatures of the constants the tactics use.")
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = Field(default=None, description="Budget in seconds (at most 300).")


class TacticStep(Frozen):
    """One tactic as Lean ran it: its source text and range (file positions), and every goal
    before and after it, each with its full context (as the infoview shows it); a tactic that
    closes its goal has the other goals, or none, after it."""

    tactic: str = Field(description="The tactic's source text.")
    start: Position = Field(description="Where it starts in the file.")
    end: Position = Field(description="Where it ends.")
    goals_before: list[Goal] = Field(description="Every goal before it.")
    goals_after: list[Goal] = Field(description="Every goal after it.")


#: What a tactic did to its goal (`TreeTactic.outcome`).
TacticOutcome = Literal["closed", "transformed", "split", "unchanged"]


class TreeTactic(Frozen):
    """A tactic in a proof tree: `outcome` `closed` (its goal is gone), `transformed` (one new
    goal, `new_goal`, which the box's next tactic works on), `split` (several new goals, one
    `subgoals` box each), or `unchanged`; `new_hypotheses` those its new goal(s) have that its
    goal had not; `have_boxes` the sub-proofs written inside it (a `have ... := by ...`)."""

    tactic: str = Field(description="The tactic's source text.")
    start: Position = Field(description="Where it starts in the file.")
    outcome: TacticOutcome = Field(description="What it did to its goal.")
    new_goal: Goal | None = Field(description="The one new goal (`transformed`); else null.")
    new_hypotheses: list[str] = Field(description="Hypotheses its new goals have that its goal had not.")
    subgoals: list[ProofBox] = Field(description="One box per new goal (`split`).")
    have_boxes: list[ProofBox] = Field(description="Sub-proofs written inside it (`have ... := by`).")


class ProofBox(Frozen):
    """A goal and the tactics that work on it, in order."""

    goal: Goal = Field(description="The goal.")
    tactics: list[TreeTactic] = Field(description="The tactics working on it, in order.")


class ProofStepsResponse(EnvironmentIdentity):
    """The tactics of one declaration's proof (`lean.proof.steps`: `steps`, flat, source order;
    `lean.proof.tree`: `tree`, nested boxes; the other one is empty), Lean's messages on the
    file, and, with `include_theorems`, `used_constants` (what the REPL reports the tactics use)
    with `used_theorems` (`"<kind> <name> : <type>"` from the catalog) and `not_in_catalog`
    (used constants the catalog does not hold, e.g. declared in the file)."""

    theorem: str = Field(description="The declaration whose proof is shown.")
    initial_hypotheses: list[str] = Field(description="Hypotheses of its first goal.")
    steps: list[TacticStep] = Field(description="Tactics in source order (`lean.proof.steps`; else empty).")
    tree: ProofBox | None = Field(description="Nested goal boxes (`lean.proof.tree`; else null).")
    diagnostics: list[Diagnostic] = Field(description="Lean's messages on the file.")
    used_constants: list[str] | None = Field(description="Constants the tactics use; null without `include_theorems`.")
    used_theorems: list[str] | None = Field(description="`<kind> <name> : <type>` per used constant in the catalog.")
    not_in_catalog: list[str] | None = Field(description="Used constants the catalog does not hold.")
    protected: bool = Field(description="False when verdict-forging commands were allowed.")
    timings: Timings = Field(description="Where the time went (ms).")

TreeTactic.model_rebuild()
