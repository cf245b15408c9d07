"""`Checker`: the proof checker's library API, one warm pool per profile.

    checker = Checker([CheckerConfig.for_profile(root, "CORE", project_dir=..., repl_dir=...)])
    await checker.start()
    response = await checker.check(CheckRequest(environment="CORE", code=text))
    await checker.close()

`check` is safe to call concurrently from one event loop; the HTTP and MCP adapters call it
directly. `check_sync` runs start, one check and close on a private loop, for the CLI. The
interactive operations (`check_target`, `proof_state`, `proof_step`, `proof_close`,
`proof_steps`) share the same pools, limits, refusals and timeouts (docs/agent-workflow.md).
Batches (`check_many`, `check_stream`, `check_batch`) come from `batch.BatchChecking`.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import logging
import secrets
import tempfile
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from lean_interact import LeanREPLConfig, LocalProject
from lean_interact.interface import CommandResponse, LeanError

from ..errors import ErrorCode, LeanIndexError
from ..models import InspectRequest, InspectResponse, display_profile
from .audit import audited_declarations
from .batch import BatchChecking, answer_with
from .failures import unknown_name
from .cache import VerdictCache
from .config import CheckerConfig
from .commands import find_target, split_commands
from . import fence as statement_fence
from .forbidden import forbidden_words
from .proofs import chosen_sorry, goals_of, refusal_is_lean, step_status
from .states import ProofStates, unknown_state
from .tactics import catalog_signatures, declaration_tree, proof_tree, tactic_steps, used_constants
from .header import Header, parse_header, uncovered_imports, unknown_modules
from .isolation import make_sandbox
from .models import (
    AuditRequest,
    AuditResponse,
    BatchItem,
    BatchResult,
    CheckRequest,
    Reference,
    CheckResponse,
    Diagnostic,
    Isolation,
    Position,
    ProofCloseRequest,
    ProofCloseResponse,
    ProofStateRequest,
    ProofStateResponse,
    ProofStepRequest,
    ProofStepResponse,
    ProofStepsRequest,
    ProofStepsResponse,
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
from .target import decide_raw, moved_diagnostics, unit_verdict
from .verdict import audit_decision, diagnostics_of, sorries_of
from .worker import RawCheck, Worker

log = logging.getLogger("leanindex.checker")

#: Most distinct unknown names of one answer that get `suggestions` (the first ones, in the
#: order of the diagnostics); the diagnostics of any further name keep `suggestions: null`.
MAX_SUGGESTED_NAMES = 32

#: `(profile, names) -> (environment digest of the catalog, suggestions per name)`: close
#: catalog names for names Lean does not know (`leanindex.engine.Engine.close_names`).
CloseNames = Callable[[str, Sequence[str]], tuple[str, list[list[str]]]]

T = TypeVar("T")
M = TypeVar("M", Diagnostic, StepMessage)
_LIVE: weakref.WeakSet[Checker] = weakref.WeakSet()


@atexit.register
def _kill_all_at_exit() -> None:
    for checker in list(_LIVE):
        checker.kill_now()


def repl_config_for(config: CheckerConfig) -> LeanREPLConfig:
    """lean-interact's configuration for `config`: the local, already built REPL and Lake
    project (no download, no build), incremental reuse and parallel elaboration off so a verdict
    does not depend on earlier checks, no lean-interact memory limit (the sandbox sets rlimits).

    Raises `LeanIndexError(invalid_request)` when lean-interact rejects the paths (e.g. no
    `lean-toolchain` in the project).
    """
    if not config.repl_binary.exists():
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"no built REPL at {config.repl_binary} (build it with `lake build` in {config.repl_dir})",
            {"repl": str(config.repl_dir)},
        )
    try:
        return LeanREPLConfig(
            project=LocalProject(directory=str(config.project_dir), lake_path=str(config.lake_path), auto_build=False),
            local_repl_path=str(config.repl_dir),
            build_repl=False,
            lake_path=str(config.lake_path),
            cache_dir=Path(tempfile.gettempdir()) / "leanindex-lean-interact",
            memory_hard_limit_mb=None,
            enable_incremental_optimization=False,
            enable_parallel_elaboration=False,
        )
    except (ValueError, RuntimeError) as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"cannot use the Lean project or REPL: {error}", {}) from None


def _reference_texts(reference: Reference | None) -> list[str]:
    """The reference's Lean texts, counted against `max_code_bytes` with the code."""
    if reference is None:
        return []
    return [*(t.statement for t in reference.theorems), *([reference.file] if reference.file else [])]


def _reference_digest(reference: Reference | None) -> str:
    """A digest of the reference, part of the verdict cache key and prepared-environment key."""
    if reference is None:
        return "-"
    return hashlib.sha256(reference.model_dump_json().encode("utf-8")).hexdigest()


class Checker(BatchChecking):
    """Checks Lean files against warm REPL pools, one per configured profile.

    `check` raises `LeanIndexError` for tool failures and refusals, never for Lean rejecting
    the code (that is a `rejected` verdict): `unknown_environment` (profile not configured),
    `payload_too_large` (code over `max_code_bytes`), `header_mismatch` (imports outside the
    profile, imports of modules that do not exist, or `prelude`), `invalid_request` (timeout over the cap, malformed header), `busy`
    (queue full), `timeout` (the REPL was killed and is being replaced), `backend_error` (REPL
    crashed, answered garbage, or the profile's header does not elaborate). The other
    operations raise the same, plus what their docstrings add. Open proof states are kept in one
    table for every profile, with the expiry and bound of the first configuration
    (`proof_state_ttl_s`, `proof_states_per_worker`).

    With `close_names` (the catalogs' `Engine.close_names`), every error naming a name Lean does
    not know gets `suggestions` from the profile's catalog (`Diagnostic.suggestions`), if that
    catalog is of the same environment (digest); otherwise, or when the catalog cannot be read,
    the diagnostics keep `suggestions: null` and a warning is logged.
    """

    def __init__(self, configs: CheckerConfig | Sequence[CheckerConfig], close_names: CloseNames | None = None):
        items = [configs] if isinstance(configs, CheckerConfig) else list(configs)
        if not items:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "no profile configured for the checker", {})
        self.configs = {c.profile: c for c in items}
        self._close_names = close_names
        self._pools: dict[str, ProfilePool] = {}
        self._caches = {c.profile: VerdictCache(c.cache_entries) for c in items}
        self._isolation: dict[str, Isolation] = {}
        self._toolchains: dict[str, str | None] = {}
        first = items[0]
        self._states = ProofStates(first.proof_state_ttl_s, first.proof_states_per_worker)
        _LIVE.add(self)

    async def start(self) -> None:
        """Start every profile's workers (header elaborated); raises the first failure."""
        for profile, config in self.configs.items():
            if profile in self._pools:
                continue
            repl_config = repl_config_for(config)
            self._toolchains[profile] = repl_config.lean_version
            probe = make_sandbox(config)
            self._isolation[profile] = probe.describe()
            probe.remove()
            pool = ProfilePool(config, repl_config)
            self._pools[profile] = pool
            await pool.start()

    async def answer(self, item: BatchItem) -> BatchResult:
        """One batch item checked as `check` does; a refusal or tool failure is the result's
        error (see `batch.BatchChecking`)."""
        return await answer_with(self.check, item)

    def batch_width(self) -> int:
        """A batch's default checks in flight: each profile's workers plus as many queued (at
        most its `queue_size`), so the REPLs never wait for the next item and a batch alone
        never fills a queue (`busy`); the smallest over the profiles."""
        return min(c.workers + min(c.workers, c.queue_size) for c in self.configs.values())

    def pool(self, environment: str) -> ProfilePool:
        """The pool serving `environment` (any case); `unknown_environment` otherwise."""
        profile = environment.lower()
        pool = self._pools.get(profile)
        if pool is None:
            known = sorted(display_profile(p) for p in self.configs)
            if profile in self.configs:
                raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is not started", {})
            raise LeanIndexError(
                ErrorCode.UNKNOWN_ENVIRONMENT,
                f"the checker does not serve {environment!r}; it serves {', '.join(known)}",
                {"environment": environment, "known": known},
            )
        return pool

    def _admit(self, environment: str, code: str, extra: Sequence[str] = ()) -> tuple[ProfilePool, Header]:
        """The profile's pool and the file's header, after the refusals every request shares:
        `unknown_environment`, `payload_too_large` (`code` and `extra` together over
        `max_code_bytes`), `header_mismatch` (`prelude`, imports outside the profile)."""
        pool = self.pool(environment)
        config = pool.config
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
        return pool, header

    async def _acquire_for(self, pool: ProfilePool, header: Header, prefer: str | None = None) -> Worker:
        """A worker of `pool`, once the header's modules are known to exist on its search path
        (`header_mismatch` otherwise, the worker given back)."""
        worker = await pool.acquire(prefer)
        unknown = unknown_modules(header.imports, worker.search_path)
        if unknown:
            pool.give_back(worker)
            raise LeanIndexError(
                ErrorCode.HEADER_MISMATCH,
                f"no such module in {display_profile(pool.config.profile)}'s environment: {', '.join(unknown)}",
                {"unknown_modules": unknown, "profile_imports": pool.config.imports},
            )
        return worker

    async def check(self, request: CheckRequest) -> CheckResponse:
        """Check `request.code` against its profile's warm environment; with `request.reference`,
        the statement fence too (`fence`; a theorem not kept is `rejected`, `statement_changed`).

        The awaiting task can be cancelled: a queued check leaves the queue; a running one
        finishes in the background and releases its worker. See the class docstring for errors;
        a reference adds `invalid_request` (malformed, or Lean does not elaborate it:
        `details.stage == "reference"`), `header_mismatch` (its file imports what the profile
        does not cover) and `forbidden_command` (it holds a command that can forge a verdict).
        """
        received = time.perf_counter()
        pool, header = self._admit(request.environment, request.code, _reference_texts(request.reference))
        config = pool.config
        protect = not config.allow_unsafe_commands
        digest = hashlib.sha256(request.code.encode("utf-8")).hexdigest()
        fence = self._fence_plan(request.reference, config)
        key = (config.identity.environment_digest, protect, digest, _reference_digest(request.reference))
        cache = self._caches[config.profile]
        hit = cache.get(key)
        if hit is not None:
            total = (time.perf_counter() - received) * 1000
            return hit.model_copy(update={"cached": True, "timings": Timings(queue_ms=0.0, check_ms=0.0, total_ms=total)})
        timeout_s = request.timeout_s if request.timeout_s is not None else config.timeout_s
        worker = await self._acquire_for(pool, header)
        acquired = time.perf_counter()
        raw: RawCheck = await pool.run(worker, worker.check, header.body, timeout_s, fence)
        response = await self._respond(config, raw, protect, digest, queue_ms=(acquired - received) * 1000, received=received)
        cache.put(key, response)
        return response

    async def _suggested(self, config: CheckerConfig, diagnostics: list[M]) -> list[M]:
        """`diagnostics` (`Diagnostic`s or `StepMessage`s) with `suggestions` on each error naming
        a name Lean does not know (`failures.unknown_name`), looked up off the event loop (the
        first look-up on a catalog builds its name table); unchanged without `close_names`, or
        when the catalog cannot answer for this environment (logged)."""
        unknown = [(i, name) for i, d in enumerate(diagnostics) if d.severity == "error" and (name := unknown_name(d.text)) is not None]
        if not unknown or self._close_names is None:
            return diagnostics
        # Each distinct name is looked up once, and at most MAX_SUGGESTED_NAMES of them: a file of
        # thousands of unknown names must not cost seconds of catalog work after Lean's answer.
        names = list(dict.fromkeys(name for _, name in unknown))[:MAX_SUGGESTED_NAMES]
        try:
            digest, lists = await asyncio.to_thread(self._close_names, config.profile, names)
        except LeanIndexError as error:
            log.warning("no name suggestions for %s: %s", display_profile(config.profile), error)
            return diagnostics
        if digest != config.identity.environment_digest:
            log.warning(
                "no name suggestions for %s: its catalog is of environment %s, the checker's of %s",
                display_profile(config.profile), digest, config.identity.environment_digest,
            )
            return diagnostics
        found = dict(zip(names, lists))
        suggested = list(diagnostics)
        for i, name in unknown:
            if name in found:
                suggested[i] = suggested[i].model_copy(update={"suggestions": found[name]})
        return suggested

    async def _respond(
        self, config: CheckerConfig, raw: RawCheck, protect: bool, digest: str, *, queue_ms: float, received: float
    ) -> CheckResponse:
        decision = decide_raw(raw, protect)
        response = CheckResponse(
            **config.identity.model_dump(),
            verdict=decision.verdict,
            failure_class=decision.failure_class,
            hint=decision.hint,
            reasons=decision.reasons,
            diagnostics=await self._suggested(config, decision.diagnostics),
            sorries=decision.sorries,
            axioms=raw.probe.axioms,
            timings=Timings(queue_ms=queue_ms, check_ms=raw.check_ms, total_ms=0.0),
            isolation=self._isolation[config.profile],
            cached=False,
            protected=protect,
            lean_toolchain=self._toolchains.get(config.profile),
            code_sha256=digest,
            fence=raw.fence,
        )
        total_ms = (time.perf_counter() - received) * 1000
        return response.model_copy(update={"timings": response.timings.model_copy(update={"total_ms": total_ms})})

    @staticmethod
    def _fence_plan(reference: Reference | None, config: CheckerConfig) -> statement_fence.FencePlan | None:
        """The reference command with fresh names (`fence.plan`), or None without a reference."""
        if reference is None:
            return None
        return statement_fence.plan(reference, config.imports, secrets.randbelow(10**12) + 10**12)

    async def audit(self, request: AuditRequest) -> AuditResponse:
        """Check `request.code` as `check` does and report every declaration it adds, with its
        axioms and `sorry` use (`audit.audited_declarations`); the verdict is the check's, never
        `accepted` unless every declaration was audited and there is at least one
        (`verdict.audit_decision`). Never cached. Raises as `check`.
        """
        received = time.perf_counter()
        pool, header = self._admit(request.environment, request.code)
        config = pool.config
        protect = not config.allow_unsafe_commands
        timeout_s = request.timeout_s if request.timeout_s is not None else config.timeout_s
        worker = await self._acquire_for(pool, header)
        acquired = time.perf_counter()
        raw: RawCheck = await pool.run(worker, worker.check, header.body, timeout_s)
        declarations, unverified = audited_declarations(raw)
        added, audited = len(declarations), len(declarations) - len(unverified)
        decision = audit_decision(decide_raw(raw, protect), added, audited)
        return AuditResponse(
            **config.identity.model_dump(),
            verdict=decision.verdict,
            failure_class=decision.failure_class,
            hint=decision.hint,
            reasons=decision.reasons,
            declarations_added=added,
            declarations_audited=audited,
            declarations=declarations,
            unverified=unverified,
            diagnostics=await self._suggested(config, decision.diagnostics),
            timings=Timings(queue_ms=(acquired - received) * 1000, check_ms=raw.check_ms, total_ms=(time.perf_counter() - received) * 1000),
            isolation=self._isolation[config.profile],
            protected=protect,
            lean_toolchain=self._toolchains.get(config.profile),
            code_sha256=hashlib.sha256(request.code.encode("utf-8")).hexdigest(),
        )

    async def check_target(self, request: TargetCheckRequest) -> TargetCheckResponse:
        """Check replacements for one declaration of a file against the environment just before
        it (target mode), or every command of the file in order (sequential mode); see
        `TargetCheckRequest`. Each verdict comes from the same verdict table as `check`.

        Raises `LeanIndexError` as `check` does, and `not_found` (no command of the file
        declares `target`; `details.declared` lists the names it declares), `invalid_request`
        (a candidate that is not one command declaring the target's name, a file with no
        command after its header, or a reference naming another theorem than the target).
        """
        received = time.perf_counter()
        pool, header = self._admit(request.environment, request.code, [*request.candidates, *_reference_texts(request.reference)])
        config = pool.config
        commands = split_commands(header.body)
        if not commands:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "the file has no command after its header", {})
        protect = not config.allow_unsafe_commands
        timeout_s = request.timeout_s if request.timeout_s is not None else config.timeout_s
        digest = hashlib.sha256(request.code.encode("utf-8")).hexdigest()
        if request.mode is TargetMode.SEQUENTIAL:
            worker = await self._acquire_for(pool, header)
            acquired = time.perf_counter()

            def accepts(raw: RawCheck) -> bool:
                return decide_raw(raw, protect).verdict is Verdict.ACCEPTED

            raws = await pool.run(worker, worker.check_sequence, [c.text for c in commands], timeout_s, accepts)
            results = []
            for command, raw in zip(commands, raws):
                decision = decide_raw(raw, protect)
                results.append(
                    unit_verdict(
                        decision, raw, lines=command.line - 1, start_line=command.line, name=command.name,
                        candidate=None, extended=decision.verdict is Verdict.ACCEPTED,
                    )
                )
            return await self._target_response(
                config, request, results, digest, reused=False, prefix_sha256=None, prefix_diagnostics=[],
                prepare_ms=0.0, queue_ms=(acquired - received) * 1000, received=received,
            )
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
        fence = self._fence_plan(request.reference, config)
        target_name = statement_fence.name_parts(target.full_name or "")
        if fence is not None and any(t.name != target.full_name for t in fence.theorems):
            others = sorted(t.name for t in fence.theorems if t.name != target.full_name)
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"a target check fences only its target {target.full_name}; the reference also names {', '.join(others)}",
                {"target": target.full_name, "others": others},
            )
        namespace = tuple(target_name[: len(target_name) - len(statement_fence.name_parts(target.name or ""))])
        lines = header.body.split("\n")
        first = commands[0].line
        prefix = "\n".join(lines[first - 1 : target.line - 1]).rstrip()
        prefix_sha256 = hashlib.sha256(prefix.encode("utf-8")).hexdigest()
        key = f"{config.profile}:{_reference_digest(request.reference)}:{prefix_sha256}"
        worker = await self._acquire_for(pool, header, prefer=key)
        acquired = time.perf_counter()
        raw_target = await pool.run(
            worker, worker.check_target, key, prefix, [c.rstrip() for c in request.candidates], timeout_s, fence, namespace
        )
        prepared = raw_target.prepared
        inherited = len(prepared.forbidden) if protect else 0
        results = [
            unit_verdict(
                decide_raw(raw, protect, prepared.forbidden, prepared.has_infotree), raw,
                lines=target.line - 1, start_line=target.line, name=target.name, candidate=number, extended=False,
                inherited=inherited, inherited_lines=first - 1,
            )
            for number, raw in enumerate(raw_target.checks)
        ]
        prefix_diagnostics = moved_diagnostics(diagnostics_of(prepared.response), first - 1) if prepared.response else []
        return await self._target_response(
            config, request, results, digest, reused=raw_target.reused, prefix_sha256=prefix_sha256,
            prefix_diagnostics=prefix_diagnostics, prepare_ms=raw_target.prepare_ms,
            queue_ms=(acquired - received) * 1000, received=received,
        )

    async def _target_response(
        self,
        config: CheckerConfig,
        request: TargetCheckRequest,
        results: list[UnitVerdict],
        digest: str,
        *,
        reused: bool,
        prefix_sha256: str | None,
        prefix_diagnostics: list[Diagnostic],
        prepare_ms: float,
        queue_ms: float,
        received: float,
    ) -> TargetCheckResponse:
        check_ms = prepare_ms + sum(r.check_ms for r in results)
        results = [r.model_copy(update={"diagnostics": await self._suggested(config, r.diagnostics)}) for r in results]
        return TargetCheckResponse(
            **config.identity.model_dump(),
            mode=request.mode,
            target=request.target,
            reused=reused,
            prefix_sha256=prefix_sha256,
            prefix_diagnostics=await self._suggested(config, prefix_diagnostics),
            prepare_ms=prepare_ms,
            results=results,
            timings=Timings(queue_ms=queue_ms, check_ms=check_ms, total_ms=(time.perf_counter() - received) * 1000),
            isolation=self._isolation[config.profile],
            protected=not config.allow_unsafe_commands,
            lean_toolchain=self._toolchains.get(config.profile),
            code_sha256=digest,
        )

    def _profile_of(self, environment: str) -> tuple[ProfilePool, CheckerConfig]:
        pool = self.pool(environment)
        return pool, pool.config

    async def _open(
        self, environment: str, code: str, timeout_s: float | None, all_tactics: bool = False
    ) -> tuple[ProfilePool, Worker, CommandResponse, str, float]:
        """Run a file for its proof states or tactics: (pool, worker, response, body with the
        header blanked, when the worker was acquired). Raises as `check`, and
        `forbidden_command` (the worker is retired), `backend_error` without an info tree."""
        pool, header = self._admit(environment, code)
        config = pool.config
        budget = timeout_s if timeout_s is not None else config.timeout_s
        worker = await self._acquire_for(pool, header)
        acquired = time.perf_counter()
        response, forbidden = await pool.run(worker, worker.open_proof, header.body, budget, all_tactics)
        if forbidden and not config.allow_unsafe_commands:
            raise LeanIndexError(
                ErrorCode.FORBIDDEN_COMMAND,
                f"the file uses {', '.join(f.command for f in forbidden)}, which can change how proofs are checked",
                {"commands": [{"command": f.command, "line": f.line, "column": f.column} for f in forbidden]},
            )
        if response.infotree is None:
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, "the REPL returned no info tree, so forbidden commands could not be ruled out", {"stage": "infotree"}
            )
        return pool, worker, response, header.body, acquired

    async def proof_steps(
        self, request: ProofStepsRequest, *, tree: bool, inspect: Callable[[InspectRequest], Awaitable[InspectResponse]] | None = None
    ) -> ProofStepsResponse:
        """The tactics of one declaration's proof with the goals before and after each
        (`tree=False`: `steps`, `lean.proof.steps`) or as nested goal boxes (`tree=True`:
        `tree`, `lean.proof.tree`); see `tactics`. With `include_theorems`, every constant the
        tactics use (the REPL's `usedConstants`) is looked up with `inspect` (the catalog's, no
        Lean round trip).

        Raises as `proof_state` (but a file needs no `sorry`), and `not_found` /
        `invalid_request` as `tactics.declaration_tree`; `invalid_request` when
        `include_theorems` is asked and no catalog `inspect` was given.
        """
        if request.include_theorems and inspect is None:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "include_theorems needs the profile's catalog, which this checker has not", {})
        received = time.perf_counter()
        pool, _worker, response, body, acquired = await self._open(
            request.environment, request.code, request.timeout_s, all_tactics=request.include_theorems
        )
        config = pool.config
        name, command = declaration_tree(response.infotree or [], request.theorem)
        steps = tactic_steps(command, body)
        used = found = missing = None
        if request.include_theorems and inspect is not None:
            used = used_constants(response, command)
            found, missing = await catalog_signatures(inspect, request.environment, used)
        finished = time.perf_counter()
        return ProofStepsResponse(
            **config.identity.model_dump(),
            theorem=name,
            initial_hypotheses=steps[0].goals_before[0].hypotheses if steps and steps[0].goals_before else [],
            steps=[] if tree else steps,
            tree=proof_tree(steps) if tree else None,
            diagnostics=await self._suggested(config, diagnostics_of(response)),
            used_constants=used,
            used_theorems=found,
            not_in_catalog=missing,
            protected=not config.allow_unsafe_commands,
            timings=Timings(queue_ms=(acquired - received) * 1000, check_ms=(finished - acquired) * 1000, total_ms=(finished - received) * 1000),
        )

    async def proof_state(self, request: ProofStateRequest) -> ProofStateResponse:
        """Open a proof at a `sorry` of `request.code` (see `ProofStateRequest`).

        Raises `LeanIndexError` as `check` does, and `invalid_request` (no `sorry`, or an
        ambiguous or wrong `position`), `forbidden_command` (the file holds a command that can
        forge a verdict; the worker is retired), `backend_error` (no info tree came back, so
        such commands could not be ruled out).
        """
        received = time.perf_counter()
        pool, worker, response, _body, acquired = await self._open(request.environment, request.code, request.timeout_s)
        config = pool.config
        chosen = chosen_sorry(response, request.position)
        goals = goals_of([chosen.goal])
        state = self._states.add(request.session, config.profile, worker, chosen.proof_state)
        finished = time.perf_counter()
        return ProofStateResponse(
            **config.identity.model_dump(),
            state_id=state.state_id,
            session=request.session,
            position=Position(line=chosen.start_pos.line, column=chosen.start_pos.column) if chosen.start_pos else None,
            goals=goals,
            diagnostics=await self._suggested(config, diagnostics_of(response)),
            sorries=sorries_of(response),
            ttl_s=self._states.ttl_s,
            protected=not config.allow_unsafe_commands,
            timings=Timings(queue_ms=(acquired - received) * 1000, check_ms=(finished - acquired) * 1000, total_ms=(finished - received) * 1000),
        )

    async def proof_step(self, request: ProofStepRequest) -> ProofStepResponse:
        """Run one tactic on an open state (see `ProofStepRequest`); the old state stays usable.
        Lean refusing the tactic is `status: error`, not an exception.

        Raises `LeanIndexError`: `unknown_proof_state` (see `states.ProofStates.get`; also when
        the REPL no longer holds the state, never replayed elsewhere), `forbidden_command` (the
        tactic writes a refused keyword or option, `forbidden.forbidden_words`), `timeout` (the
        worker was killed: its states are gone), `busy`, `backend_error`, `unknown_environment`.
        """
        received = time.perf_counter()
        pool, config = self._profile_of(request.environment)
        words = forbidden_words(request.tactic) if not config.allow_unsafe_commands else []
        if words:
            raise LeanIndexError(
                ErrorCode.FORBIDDEN_COMMAND,
                f"the tactic uses {', '.join(words)}, which can change how proofs are checked",
                {"commands": words},
            )
        state = self._states.get(request.session, config.profile, request.state_id)
        try:
            worker = await pool.acquire_this(state.worker)
        except LookupError:
            raise unknown_state(
                request.state_id, "the REPL holding this proof state stopped (timeout, crash or recycling); open the proof again"
            ) from None
        acquired = time.perf_counter()
        timeout_s = request.timeout_s if request.timeout_s is not None else config.timeout_s
        answer = await pool.run(worker, worker.step, state.repl_state, request.tactic, timeout_s)
        finished = time.perf_counter()
        timings = Timings(queue_ms=(acquired - received) * 1000, check_ms=(finished - acquired) * 1000, total_ms=(finished - received) * 1000)
        common = {**config.identity.model_dump(), "previous_state_id": request.state_id, "timings": timings}
        if isinstance(answer, LeanError):
            if not refusal_is_lean(answer):
                self._states.remove(request.session, config.profile, request.state_id)
                raise unknown_state(request.state_id, f"the REPL does not hold it ({answer.message})")
            return ProofStepResponse(
                **common, state_id=None, status=StepStatus.ERROR, goals=[], messages=[], proof_status=answer.message
            )
        status = step_status(answer)
        messages = await self._suggested(config, [StepMessage(severity=m.severity, text=m.data) for m in answer.messages])
        goals = goals_of(answer.goals)
        new_id = None
        if status is not StepStatus.ERROR:
            new_id = self._states.add(request.session, config.profile, worker, answer.proof_state).state_id
        return ProofStepResponse(
            **common, state_id=new_id, status=status, goals=goals, messages=messages, proof_status=answer.proof_status
        )

    async def proof_close(self, request: ProofCloseRequest) -> ProofCloseResponse:
        """Release an open state. Raises `unknown_proof_state` as `proof_step`."""
        _pool, config = self._profile_of(request.environment)
        remaining = self._states.remove(request.session, config.profile, request.state_id)
        return ProofCloseResponse(state_id=request.state_id, open_states=remaining)

    async def close(self) -> None:
        """Stop every pool: waiting callers get `backend_error`, every REPL process group is killed."""
        for pool in self._pools.values():
            await pool.close()
        self._pools.clear()

    def kill_now(self) -> None:
        """Kill every REPL process group synchronously (signal handlers, interpreter exit)."""
        for pool in list(self._pools.values()):
            pool.kill_now()

    async def __aenter__(self) -> Checker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def check_sync(self, request: CheckRequest) -> CheckResponse:
        """Start, check once, close, on a private event loop (for the CLI)."""
        return self.run_sync(self.check, request)

    def check_target_sync(self, request: TargetCheckRequest) -> TargetCheckResponse:
        """Start, run one target check, close, on a private event loop (for the CLI)."""
        return self.run_sync(self.check_target, request)

    def run_sync(self, call: Callable[..., Awaitable[T]], request: object, **options: object) -> T:
        """Start, run `call(request, **options)` (one of this checker's methods) once, close, on
        a private event loop (for the CLI)."""

        async def once() -> T:
            async with self:
                return await call(request, **options)

        return asyncio.run(once())
