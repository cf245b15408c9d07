"""The checker's operations as objects: each is admitted, then run, on one shared run context.

A `Run` is one call of one operation: the profile's pool and configuration, the file's header
after the refusals every request shares (`Run.admit`), the effective timeout, the clock (received,
worker acquired) and the envelope every answer of that profile carries (environment identity,
isolation, `protected`, `lean_toolchain`, `code_sha256`, `timings`), filled by `Run.respond` into
whichever of those fields the response model declares. An `Operation` names its request and
response models, says whether an actor of a cluster may answer it (`hosted`), admits a request
(`admit`: refusals before any REPL is touched) and runs it (`run`: a worker, Lean, the verdict,
the answer). `OPERATIONS` lists them all; `CheckerBackend.perform` is the one entry point, so a
backend that forwards requests (`cluster.RayChecker`) forwards any registered operation.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from lean_interact.interface import CommandResponse, LeanError
from pydantic import BaseModel

from ..errors import ErrorCode, LeanIndexError
from ..models import InspectRequest, InspectResponse, display_profile
from . import fence as statement_fence
from .audit import audited_declarations
from .commands import find_target, split_commands
from .config import CheckerConfig
from .forbidden import forbidden_words
from .header import Header, parse_header, uncovered_imports, unknown_modules
from .models import (
    AuditRequest,
    AuditResponse,
    CheckRequest,
    CheckResponse,
    Diagnostic,
    Position,
    ProofCloseRequest,
    ProofCloseResponse,
    ProofStateRequest,
    ProofStateResponse,
    ProofStepRequest,
    ProofStepResponse,
    ProofStepsRequest,
    ProofStepsResponse,
    Reference,
    StepMessage,
    StepStatus,
    TargetCheckRequest,
    TargetCheckResponse,
    TargetMode,
    Timings,
    UnitVerdict,
    Verdict,
)
from .pool import ProfilePool
from .proofs import chosen_sorry, goals_of, refusal_is_lean, step_status
from .states import unknown_state
from .tactics import catalog_signatures, declaration_tree, proof_tree, tactic_steps, used_constants
from .target import decide_raw, moved_diagnostics, unit_verdict
from .verdict import audit_decision, diagnostics_of, sorries_of
from .worker import RawCheck, Worker

if TYPE_CHECKING:
    from .checker import Checker

RequestT = TypeVar("RequestT", bound=BaseModel)
ResponseT = TypeVar("ResponseT", bound=BaseModel)
ModelT = TypeVar("ModelT", bound=BaseModel)

#: The catalog's inspect, for operations that read the signatures of the constants a proof uses.
Inspect = Callable[[InspectRequest], Awaitable[InspectResponse]]


def reference_texts(reference: Reference | None) -> list[str]:
    """The reference's Lean texts, counted against `max_code_bytes` with the code."""
    if reference is None:
        return []
    return [*(t.statement for t in reference.theorems), *([reference.file] if reference.file else [])]


def reference_digest(reference: Reference | None) -> str:
    """A digest of the reference, part of the verdict cache key and prepared-environment key."""
    if reference is None:
        return "-"
    return hashlib.sha256(reference.model_dump_json().encode("utf-8")).hexdigest()


def fence_plan(reference: Reference | None, config: CheckerConfig) -> statement_fence.FencePlan | None:
    """The reference command with fresh names (`fence.plan`), or None without a reference."""
    if reference is None:
        return None
    return statement_fence.plan(reference, config.imports, secrets.randbelow(10**12) + 10**12)


@dataclass
class Run:
    """One call of one operation on `host` (a local `Checker`): see the module docstring.

    `header` and `code_sha256` are None for operations on an open proof state (no file);
    `timeout_s` is the request's timeout or the profile's (seconds); `received` and `acquired`
    are `time.perf_counter()` readings (`acquired` None until a worker is held); `inspect` is the
    catalog's inspect, when the caller has a catalog."""

    host: Checker
    pool: ProfilePool
    header: Header | None
    code_sha256: str | None
    timeout_s: float
    received: float
    inspect: Inspect | None = None
    acquired: float | None = None

    @classmethod
    def admit(
        cls, host: Checker, environment: str, code: str | None, extra: Sequence[str] = (), timeout_s: float | None = None,
        inspect: Inspect | None = None,
    ) -> Run:
        """The run of a request on `environment`, after the refusals every request shares:
        `unknown_environment`, and with a file `code`: `payload_too_large` (`code` and `extra`
        together over `max_code_bytes`), `header_mismatch` (`prelude`, imports outside the
        profile)."""
        received = time.perf_counter()
        pool = host.pool(environment)
        config = pool.config
        header = None
        if code is not None:
            size = len(code.encode("utf-8")) + sum(len(text.encode("utf-8")) for text in extra)
            if size > config.max_code_bytes:
                raise LeanIndexError(
                    ErrorCode.PAYLOAD_TOO_LARGE,
                    f"code is {size} bytes; the limit is {config.max_code_bytes}",
                    {"bytes": size, "limit": config.max_code_bytes},
                )
            header = parse_header(code)
            if header.prelude:
                raise LeanIndexError(ErrorCode.HEADER_MISMATCH, "`prelude` files cannot be checked against a profile", {})
            outside = uncovered_imports(header.imports, config.imports)
            if outside:
                raise LeanIndexError(
                    ErrorCode.HEADER_MISMATCH,
                    f"imports not covered by {display_profile(config.profile)} ({', '.join(config.imports)}): {', '.join(outside)}",
                    {"uncovered": outside, "profile_imports": config.imports},
                )
        return cls(
            host=host,
            pool=pool,
            header=header,
            code_sha256=hashlib.sha256(code.encode("utf-8")).hexdigest() if code is not None else None,
            timeout_s=timeout_s if timeout_s is not None else config.timeout_s,
            received=received,
            inspect=inspect,
        )

    @property
    def config(self) -> CheckerConfig:
        """The profile's checker configuration."""
        return self.pool.config

    @property
    def protect(self) -> bool:
        """True when verdict-forging commands are refused (`allow_unsafe_commands` off)."""
        return not self.config.allow_unsafe_commands

    @property
    def body(self) -> str:
        """The file with its header blanked (what the worker elaborates after the header)."""
        assert self.header is not None, "an operation on a file"
        return self.header.body

    async def worker(self, prefer: str | None = None) -> Worker:
        """A worker of the pool (one that prepared `prefer` when free), once the header's modules
        are known to exist on its search path (`header_mismatch` otherwise, the worker given
        back); records when it was acquired. Raises the pool's `busy`, `backend_error`."""
        worker = await self.pool.acquire(prefer)
        if self.header is not None:
            unknown = unknown_modules(self.header.imports, worker.search_path)
            if unknown:
                self.pool.give_back(worker)
                raise LeanIndexError(
                    ErrorCode.HEADER_MISMATCH,
                    f"no such module in {display_profile(self.config.profile)}'s environment: {', '.join(unknown)}",
                    {"unknown_modules": unknown, "profile_imports": self.config.imports},
                )
        self.acquired = time.perf_counter()
        return worker

    async def suggested(self, diagnostics: list[Any]) -> list[Any]:
        """`diagnostics` with the catalog's closest names on each unknown name
        (`Checker.suggested`)."""
        return await self.host.suggested(self.config, diagnostics)

    def timings(self, check_ms: float | None = None) -> Timings:
        """Queue, check and total time so far (ms); `check_ms` defaults to the time since the
        worker was acquired (0 when none was)."""
        now = time.perf_counter()
        acquired = self.acquired if self.acquired is not None else self.received
        if check_ms is None:
            check_ms = (now - acquired) * 1000 if self.acquired is not None else 0.0
        return Timings(queue_ms=(acquired - self.received) * 1000, check_ms=check_ms, total_ms=(now - self.received) * 1000)

    def respond(self, model: type[ModelT], *, check_ms: float | None = None, **fields: Any) -> ModelT:
        """`model` built from `fields` and the envelope fields it declares (environment identity,
        `isolation`, `protected`, `lean_toolchain`, `code_sha256`, `timings` with `check_ms`),
        the timings read last; a field given in `fields` is kept."""
        profile = self.config.profile
        envelope: dict[str, Any] = {
            **self.config.identity.model_dump(),
            "isolation": self.host.isolation.get(profile),
            "protected": self.protect,
            "lean_toolchain": self.host.toolchains.get(profile),
            "code_sha256": self.code_sha256,
        }
        declared = model.model_fields
        shared = {key: value for key, value in envelope.items() if key in declared and key not in fields}
        if "timings" in declared and "timings" not in fields:
            shared["timings"] = self.timings(check_ms)
        return model(**shared, **fields)


class Operation(Generic[RequestT, ResponseT]):
    """One checker operation (see the module docstring). Subclasses set `name`,
    `request_model`, `response_model` and `hosted`, and define `run`; `admit` refuses what
    every file request refuses (`Run.admit`)."""

    name: ClassVar[str]
    request_model: ClassVar[type[BaseModel]]
    response_model: ClassVar[type[BaseModel]]
    #: False when the answer needs what lives in one process: an open proof state in one REPL,
    #: or the serving process's catalog. A cluster answers such an operation `check_disabled`.
    hosted: ClassVar[bool] = True

    def admit(self, host: Checker, request: RequestT, inspect: Inspect | None) -> Run:
        """The run of `request` (its `environment`, `code` and `timeout_s`) after the shared
        refusals (`Run.admit`)."""
        data: Any = request
        return Run.admit(host, data.environment, data.code, self.extra_texts(request), data.timeout_s, inspect)

    def extra_texts(self, request: RequestT) -> Sequence[str]:
        """Texts counted against `max_code_bytes` with the code (references, candidates)."""
        return ()

    async def run(self, run: Run, request: RequestT) -> ResponseT:
        """The answer; raises `LeanIndexError` (see each operation)."""
        raise NotImplementedError


class Check(Operation[CheckRequest, CheckResponse]):
    """`lean.check`: Lean's verdict on a complete file, with the statement fence when the
    request has a reference; cached per environment, protection, code and reference. Raises the
    refusals and tool failures of the `Checker` class docstring, never for Lean rejecting the
    code (a `rejected` verdict); a reference adds `invalid_request` (malformed, or Lean does not
    elaborate it: `details.stage == "reference"`), `header_mismatch` and `forbidden_command`."""

    name = "check"
    request_model = CheckRequest
    response_model = CheckResponse

    def extra_texts(self, request: CheckRequest) -> Sequence[str]:
        return reference_texts(request.reference)

    async def run(self, run: Run, request: CheckRequest) -> CheckResponse:
        config = run.config
        fence = fence_plan(request.reference, config)
        key = (config.identity.environment_digest, run.protect, run.code_sha256, reference_digest(request.reference))
        cache = run.host.caches[config.profile]
        hit = cache.get(key)
        if hit is not None:
            total = (time.perf_counter() - run.received) * 1000
            return hit.model_copy(update={"cached": True, "timings": Timings(queue_ms=0.0, check_ms=0.0, total_ms=total)})
        worker = await run.worker()
        raw: RawCheck = await run.pool.run(worker, worker.check, run.body, run.timeout_s, fence)
        decision = decide_raw(raw, run.protect)
        response = run.respond(
            CheckResponse,
            check_ms=raw.check_ms,
            **decision.summary(),
            diagnostics=await run.suggested(decision.diagnostics),
            sorries=decision.sorries,
            axioms=raw.probe.axioms,
            cached=False,
            fence=raw.fence,
        )
        cache.put(key, response)
        return response


class Audit(Operation[AuditRequest, AuditResponse]):
    """`lean.audit`: the check's verdict and every declaration the file adds with its axioms
    and `sorry` use; never `accepted` unless every declaration was audited and there is at
    least one (`verdict.audit_decision`). Never cached. Raises as `Check`."""

    name = "audit"
    request_model = AuditRequest
    response_model = AuditResponse

    async def run(self, run: Run, request: AuditRequest) -> AuditResponse:
        worker = await run.worker()
        raw: RawCheck = await run.pool.run(worker, worker.check, run.body, run.timeout_s)
        declarations, unverified = audited_declarations(raw)
        added, audited = len(declarations), len(declarations) - len(unverified)
        decision = audit_decision(decide_raw(raw, run.protect), added, audited)
        return run.respond(
            AuditResponse,
            check_ms=raw.check_ms,
            **decision.summary(),
            declarations_added=added,
            declarations_audited=audited,
            declarations=declarations,
            unverified=unverified,
            diagnostics=await run.suggested(decision.diagnostics),
        )


class _TargetOperation(Operation[TargetCheckRequest, TargetCheckResponse]):
    """What the two modes of `lean.check.target` share: the candidates and reference counted
    with the code, and the answer's shape."""

    request_model = TargetCheckRequest
    response_model = TargetCheckResponse

    def extra_texts(self, request: TargetCheckRequest) -> Sequence[str]:
        return [*request.candidates, *reference_texts(request.reference)]

    @staticmethod
    def commands_of(run: Run) -> list[Any]:
        """The file's commands after its header; `invalid_request` when it has none."""
        commands = split_commands(run.body)
        if not commands:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "the file has no command after its header", {})
        return commands

    @staticmethod
    async def respond(
        run: Run,
        request: TargetCheckRequest,
        results: list[UnitVerdict],
        *,
        reused: bool,
        prefix_sha256: str | None,
        prefix_diagnostics: list[Diagnostic],
        prepare_ms: float,
    ) -> TargetCheckResponse:
        """The answer: each result's diagnostics with suggestions, `check_ms` the preparation and
        every check."""
        suggested = [r.model_copy(update={"diagnostics": await run.suggested(r.diagnostics)}) for r in results]
        return run.respond(
            TargetCheckResponse,
            check_ms=prepare_ms + sum(r.check_ms for r in results),
            mode=request.mode,
            target=request.target,
            reused=reused,
            prefix_sha256=prefix_sha256,
            prefix_diagnostics=await run.suggested(prefix_diagnostics),
            prepare_ms=prepare_ms,
            results=suggested,
        )


class TargetCandidates(_TargetOperation):
    """`lean.check.target` in `target` mode: 1-16 replacements for one declaration, each checked
    against the environment just before it (elaborated once per worker and reused). Raises as
    `Check`, and `not_found` (no command declares `target`; `details.declared` lists the names
    the file declares), `invalid_request` (a candidate that is not one command declaring the
    target's name, a file with no command, a reference naming another theorem)."""

    name = "check_target"

    async def run(self, run: Run, request: TargetCheckRequest) -> TargetCheckResponse:
        config = run.config
        commands = self.commands_of(run)
        index = find_target(commands, request.target or "")
        if index < 0:
            declared = [c.full_name for c in commands if c.full_name]
            raise LeanIndexError(
                ErrorCode.NOT_FOUND,
                f"no declaration of the file is named {request.target!r}",
                {"target": request.target, "declared": declared},
            )
        target = commands[index]
        for number, candidate in enumerate(request.candidates):
            parts = split_commands(candidate)
            if len(parts) != 1 or parts[0].name != target.name:
                raise LeanIndexError(
                    ErrorCode.INVALID_REQUEST,
                    f"candidate {number} must be one whole declaration of {target.name} (it declares "
                    f"{', '.join(str(p.name) for p in parts) or 'nothing'})",
                    {"candidate": number, "target": target.name},
                )
        fence = fence_plan(request.reference, config)
        target_name = statement_fence.name_parts(target.full_name or "")
        if fence is not None and any(t.name != target.full_name for t in fence.theorems):
            others = sorted(t.name for t in fence.theorems if t.name != target.full_name)
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"a target check fences only its target {target.full_name}; the reference also names {', '.join(others)}",
                {"target": target.full_name, "others": others},
            )
        namespace = tuple(target_name[: len(target_name) - len(statement_fence.name_parts(target.name or ""))])
        lines = run.body.split("\n")
        first = commands[0].line
        prefix = "\n".join(lines[first - 1 : target.line - 1]).rstrip()
        prefix_sha256 = hashlib.sha256(prefix.encode("utf-8")).hexdigest()
        key = f"{config.profile}:{reference_digest(request.reference)}:{prefix_sha256}"
        worker = await run.worker(prefer=key)
        raw_target = await run.pool.run(
            worker, worker.check_target, key, prefix, [c.rstrip() for c in request.candidates], run.timeout_s, fence, namespace
        )
        prepared = raw_target.prepared
        inherited = len(prepared.forbidden) if run.protect else 0
        results = [
            unit_verdict(
                decide_raw(raw, run.protect, prepared.forbidden, prepared.has_infotree), raw,
                lines=target.line - 1, start_line=target.line, name=target.name, candidate=number, extended=False,
                inherited=inherited, inherited_lines=first - 1,
            )
            for number, raw in enumerate(raw_target.checks)
        ]
        prefix_diagnostics = moved_diagnostics(diagnostics_of(prepared.response), first - 1) if prepared.response else []
        return await self.respond(
            run, request, results, reused=raw_target.reused, prefix_sha256=prefix_sha256,
            prefix_diagnostics=prefix_diagnostics, prepare_ms=raw_target.prepare_ms,
        )


class TargetSequential(_TargetOperation):
    """`lean.check.target` in `sequential` mode: every command of the file in order, each
    against the environment the accepted ones before it built. Raises as `Check`, and
    `invalid_request` for a file with no command after its header."""

    name = "check_sequential"

    async def run(self, run: Run, request: TargetCheckRequest) -> TargetCheckResponse:
        commands = self.commands_of(run)
        protect = run.protect
        worker = await run.worker()

        def accepts(raw: RawCheck) -> bool:
            return decide_raw(raw, protect).verdict is Verdict.ACCEPTED

        raws = await run.pool.run(worker, worker.check_sequence, [c.text for c in commands], run.timeout_s, accepts)
        results = []
        for command, raw in zip(commands, raws, strict=True):
            decision = decide_raw(raw, protect)
            results.append(
                unit_verdict(
                    decision, raw, lines=command.line - 1, start_line=command.line, name=command.name,
                    candidate=None, extended=decision.verdict is Verdict.ACCEPTED,
                )
            )
        return await self.respond(run, request, results, reused=False, prefix_sha256=None, prefix_diagnostics=[], prepare_ms=0.0)


#: The operation of each mode of `lean.check.target`.
TARGET_MODES: dict[TargetMode, str] = {TargetMode.TARGET: TargetCandidates.name, TargetMode.SEQUENTIAL: TargetSequential.name}


async def _opened(run: Run, all_tactics: bool = False) -> tuple[Worker, CommandResponse]:
    """Run the file for its proof states or tactics: (the worker, Lean's answer). Raises as
    `Check`, and `forbidden_command` (the worker is retired), `backend_error` without an info
    tree (forbidden commands could not be ruled out)."""
    worker = await run.worker()
    response, forbidden = await run.pool.run(worker, worker.open_proof, run.body, run.timeout_s, all_tactics)
    if forbidden and run.protect:
        raise LeanIndexError(
            ErrorCode.FORBIDDEN_COMMAND,
            f"the file uses {', '.join(f.command for f in forbidden)}, which can change how proofs are checked",
            {"commands": [{"command": f.command, "line": f.line, "column": f.column} for f in forbidden]},
        )
    if response.infotree is None:
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR, "the REPL returned no info tree, so forbidden commands could not be ruled out", {"stage": "infotree"}
        )
    return worker, response


class ProofState(Operation[ProofStateRequest, ProofStateResponse]):
    """`lean.proof.state`: open a proof at a `sorry` of the file. Raises as `Check`, and
    `invalid_request` (no `sorry`, or an ambiguous or wrong `position`), `forbidden_command`,
    `backend_error` (no info tree)."""

    name = "proof_state"
    request_model = ProofStateRequest
    response_model = ProofStateResponse
    hosted = False

    async def run(self, run: Run, request: ProofStateRequest) -> ProofStateResponse:
        worker, response = await _opened(run)
        chosen, repl_state = chosen_sorry(response, request.position)
        goals = goals_of([chosen.goal])
        state = run.host.states.add(request.session, run.config.profile, worker, repl_state)
        return run.respond(
            ProofStateResponse,
            state_id=state.state_id,
            session=request.session,
            position=Position(line=chosen.start_pos.line, column=chosen.start_pos.column) if chosen.start_pos else None,
            goals=goals,
            diagnostics=await run.suggested(diagnostics_of(response)),
            sorries=sorries_of(response),
            ttl_s=run.host.states.ttl_s,
        )


class ProofStep(Operation[ProofStepRequest, ProofStepResponse]):
    """`lean.proof.step`: one tactic on an open state; the old state stays usable, and Lean
    refusing the tactic is `status: error`. Raises `unknown_proof_state` (also when the REPL no
    longer holds the state, never replayed elsewhere), `forbidden_command` (the tactic writes a
    refused keyword or option), `timeout` (the worker was killed: its states are gone), `busy`,
    `backend_error`, `unknown_environment`."""

    name = "proof_step"
    request_model = ProofStepRequest
    response_model = ProofStepResponse
    hosted = False

    def admit(self, host: Checker, request: ProofStepRequest, inspect: Inspect | None) -> Run:
        run = Run.admit(host, request.environment, None, timeout_s=request.timeout_s, inspect=inspect)
        words = forbidden_words(request.tactic) if run.protect else []
        if words:
            raise LeanIndexError(
                ErrorCode.FORBIDDEN_COMMAND,
                f"the tactic uses {', '.join(words)}, which can change how proofs are checked",
                {"commands": words},
            )
        return run

    async def run(self, run: Run, request: ProofStepRequest) -> ProofStepResponse:
        states, profile = run.host.states, run.config.profile
        state = states.get(request.session, profile, request.state_id)
        try:
            worker = await run.pool.acquire_this(state.worker)
        except LookupError:
            raise unknown_state(
                request.state_id, "the REPL holding this proof state stopped (timeout, crash or recycling); open the proof again"
            ) from None
        run.acquired = time.perf_counter()
        answer = await run.pool.run(worker, worker.step, state.repl_state, request.tactic, run.timeout_s)
        if isinstance(answer, LeanError):
            if not refusal_is_lean(answer):
                states.remove(request.session, profile, request.state_id)
                raise unknown_state(request.state_id, f"the REPL does not hold it ({answer.message})")
            return run.respond(
                ProofStepResponse, previous_state_id=request.state_id, state_id=None, status=StepStatus.ERROR, goals=[],
                messages=[], proof_status=answer.message,
            )
        status = step_status(answer)
        timings = run.timings()
        messages = await run.suggested([StepMessage(severity=m.severity, text=m.data) for m in answer.messages])
        new_id = None
        if status is not StepStatus.ERROR:
            new_id = states.add(request.session, profile, worker, answer.proof_state).state_id
        return run.respond(
            ProofStepResponse, previous_state_id=request.state_id, timings=timings, state_id=new_id, status=status,
            goals=goals_of(answer.goals), messages=messages, proof_status=answer.proof_status,
        )


class ProofClose(Operation[ProofCloseRequest, ProofCloseResponse]):
    """`lean.proof.close`: release an open state. Raises `unknown_proof_state` as `ProofStep`."""

    name = "proof_close"
    request_model = ProofCloseRequest
    response_model = ProofCloseResponse
    hosted = False

    def admit(self, host: Checker, request: ProofCloseRequest, inspect: Inspect | None) -> Run:
        return Run.admit(host, request.environment, None, inspect=inspect)

    async def run(self, run: Run, request: ProofCloseRequest) -> ProofCloseResponse:
        remaining = run.host.states.remove(request.session, run.config.profile, request.state_id)
        return ProofCloseResponse(state_id=request.state_id, open_states=remaining)


class ProofSteps(Operation[ProofStepsRequest, ProofStepsResponse]):
    """`lean.proof.steps`: the tactics of one declaration's proof with the goals before and
    after each; with `include_theorems`, every constant the tactics use looked up in the
    catalog (no Lean round trip). Raises as `ProofState` (but a file needs no `sorry`), and
    `not_found` / `invalid_request` as `tactics.declaration_tree`; `invalid_request` when
    `include_theorems` is asked and the caller has no catalog."""

    name = "proof_steps"
    request_model = ProofStepsRequest
    response_model = ProofStepsResponse
    #: The used theorems' signatures come from the serving process's catalog.
    hosted = False
    tree: ClassVar[bool] = False

    def admit(self, host: Checker, request: ProofStepsRequest, inspect: Inspect | None) -> Run:
        if request.include_theorems and inspect is None:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "include_theorems needs the profile's catalog, which this checker has not", {})
        return super().admit(host, request, inspect)

    async def run(self, run: Run, request: ProofStepsRequest) -> ProofStepsResponse:
        _worker, response = await _opened(run, all_tactics=request.include_theorems)
        name, command = declaration_tree(response.infotree or [], request.theorem)
        steps = tactic_steps(command, run.body)
        used = found = missing = None
        if request.include_theorems and run.inspect is not None:
            used = used_constants(response, command)
            found, missing = await catalog_signatures(run.inspect, request.environment, used)
        timings = run.timings()
        return run.respond(
            ProofStepsResponse,
            timings=timings,
            theorem=name,
            initial_hypotheses=steps[0].goals_before[0].hypotheses if steps and steps[0].goals_before else [],
            steps=[] if self.tree else steps,
            tree=proof_tree(steps) if self.tree else None,
            diagnostics=await run.suggested(diagnostics_of(response)),
            used_constants=used,
            used_theorems=found,
            not_in_catalog=missing,
        )


class ProofTree(ProofSteps):
    """`lean.proof.tree`: `ProofSteps` as nested goal boxes (`tree`) instead of a flat list."""

    name = "proof_tree"
    tree = True


#: Every operation by name, the one list `CheckerBackend.perform` answers from.
OPERATIONS: dict[str, Operation[Any, Any]] = {
    op.name: op
    for op in (
        Check(), Audit(), TargetCandidates(), TargetSequential(), ProofState(), ProofStep(), ProofClose(), ProofSteps(), ProofTree()
    )
}


def operation(name: str) -> Operation[Any, Any]:
    """The operation called `name`; `invalid_request` for a name not in `OPERATIONS`."""
    found = OPERATIONS.get(name)
    if found is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST, f"no checker operation {name!r}; known: {', '.join(OPERATIONS)}", {"operation": name}
        )
    return found
