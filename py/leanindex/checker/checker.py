"""`Checker`: the proof checker's library API, one warm pool per profile.

    checker = Checker([CheckerConfig.for_profile(root, "CORE", project_dir=..., repl_dir=...)])
    await checker.start()
    response = await checker.check(CheckRequest(environment="CORE", code=text))
    await checker.close()

Every call (`check`, `audit`, `check_target`, `proof_state`, `proof_step`, `proof_close`,
`proof_steps`, from `backend.CheckerBackend`) is one operation of `operations.OPERATIONS`,
admitted and run by `perform` on the same pools, limits, refusals and timeouts
(docs/agent-workflow.md); they are safe to call concurrently from one event loop, and the HTTP
and MCP adapters call them directly. `check_sync` runs start, one check and close on a private
loop, for the CLI. Batches (`check_many`, `check_stream`, `check_batch`) come from
`batch.BatchChecking`.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lean_interact import LeanREPLConfig, LocalProject
from pydantic import BaseModel

from ..errors import ErrorCode, LeanIndexError
from ..models import display_profile
from .backend import CheckerBackend
from .batch import answer_with
from .cache import VerdictCache
from .config import CheckerConfig
from .failures import unknown_name
from .isolation import make_sandbox
from .models import (
    BatchItem,
    BatchResult,
    CheckRequest,
    CheckResponse,
    Diagnostic,
    Isolation,
    StepMessage,
    TargetCheckRequest,
    TargetCheckResponse,
)
from .operations import Inspect
from .operations import operation as operation_named
from .pool import ProfilePool
from .states import ProofStates

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


class Checker(CheckerBackend):
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

    What the operations share lives here: `caches` (a `VerdictCache` per profile), `states`
    (the open proof states), `isolation` and `toolchains` (per profile, known once started),
    `pool()` and `suggested()`.

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
        self.caches = {c.profile: VerdictCache(c.cache_entries) for c in items}
        self.isolation: dict[str, Isolation] = {}
        self.toolchains: dict[str, str | None] = {}
        first = items[0]
        self.states = ProofStates(first.proof_state_ttl_s, first.proof_states_per_worker)
        _LIVE.add(self)

    async def start(self) -> None:
        """Start every profile's workers (header elaborated); raises the first failure."""
        for profile, config in self.configs.items():
            if profile in self._pools:
                continue
            repl_config = repl_config_for(config)
            self.toolchains[profile] = repl_config.lean_version
            probe = make_sandbox(config)
            self.isolation[profile] = probe.describe()
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

    async def perform(self, operation: str, request: BaseModel, *, inspect: Inspect | None = None) -> Any:
        """The answer of `operation` (`operations.OPERATIONS`) to `request`: admitted (the
        refusals every request shares, before any REPL is touched), then run on this checker's
        pools. The awaiting task can be cancelled: a queued request leaves the queue; a running
        one finishes in the background and releases its worker. Raises what the operation's
        docstring says, and `invalid_request` for an unknown operation."""
        chosen = operation_named(operation)
        run = chosen.admit(self, request, inspect)
        return await chosen.run(run, request)

    async def suggested(self, config: CheckerConfig, diagnostics: list[M]) -> list[M]:
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
        found = dict(zip(names, lists, strict=True))
        suggested = list(diagnostics)
        for i, name in unknown:
            if name in found:
                suggested[i] = suggested[i].model_copy(update={"suggestions": found[name]})
        return suggested

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
