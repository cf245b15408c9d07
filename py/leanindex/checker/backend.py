"""`CheckerBackend`: the checker's API, whatever runs it (the local `Checker`'s warm pools, or
`cluster.RayChecker`'s actors).

A backend supplies `perform` (one registered operation of `operations.OPERATIONS` on one
request), `answer` (one batch item), `batch_width`, `start` and `close`; the named calls the
adapters use (`check`, `audit`, `check_target`, `proof_state`, `proof_step`, `proof_close`,
`proof_steps`) are defined here once over `perform`, and the batch calls come from
`batch.BatchChecking`.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from .batch import BatchChecking
from .models import (
    AuditRequest,
    AuditResponse,
    CheckRequest,
    CheckResponse,
    ProofCloseRequest,
    ProofCloseResponse,
    ProofStateRequest,
    ProofStateResponse,
    ProofStepRequest,
    ProofStepResponse,
    ProofStepsRequest,
    ProofStepsResponse,
    TargetCheckRequest,
    TargetCheckResponse,
)
from .operations import TARGET_MODES, Audit, Check, Inspect, ProofClose, ProofState, ProofStep, ProofSteps, ProofTree


class CheckerBackend(BatchChecking):
    """The checker's API (see the module docstring); every call raises what its operation's
    docstring says (`operations`), plus what the backend adds (`backend_error`, `busy`,
    `check_disabled` for an operation a cluster does not host)."""

    async def perform(self, operation: str, request: BaseModel, *, inspect: Inspect | None = None) -> Any:
        """The answer of `operation` (a key of `operations.OPERATIONS`) to `request` (its
        request model); `inspect` is the caller's catalog inspect, for `proof_steps` and
        `proof_tree` with `include_theorems`. Raises `invalid_request` for an unknown operation."""
        raise NotImplementedError

    async def check(self, request: CheckRequest) -> CheckResponse:
        """`lean.check` (`operations.Check`)."""
        return cast(CheckResponse, await self.perform(Check.name, request))

    async def audit(self, request: AuditRequest) -> AuditResponse:
        """`lean.audit` (`operations.Audit`)."""
        return cast(AuditResponse, await self.perform(Audit.name, request))

    async def check_target(self, request: TargetCheckRequest) -> TargetCheckResponse:
        """`lean.check.target`: the operation of the request's mode (`operations.TARGET_MODES`)."""
        return cast(TargetCheckResponse, await self.perform(TARGET_MODES[request.mode], request))

    async def proof_state(self, request: ProofStateRequest) -> ProofStateResponse:
        """`lean.proof.state` (`operations.ProofState`)."""
        return cast(ProofStateResponse, await self.perform(ProofState.name, request))

    async def proof_step(self, request: ProofStepRequest) -> ProofStepResponse:
        """`lean.proof.step` (`operations.ProofStep`)."""
        return cast(ProofStepResponse, await self.perform(ProofStep.name, request))

    async def proof_close(self, request: ProofCloseRequest) -> ProofCloseResponse:
        """`lean.proof.close` (`operations.ProofClose`)."""
        return cast(ProofCloseResponse, await self.perform(ProofClose.name, request))

    async def proof_steps(self, request: ProofStepsRequest, *, tree: bool, inspect: Inspect | None = None) -> ProofStepsResponse:
        """`lean.proof.steps` (`tree=False`, `operations.ProofSteps`) or `lean.proof.tree`
        (`tree=True`, `operations.ProofTree`); `inspect` answers `include_theorems`."""
        name = ProofTree.name if tree else ProofSteps.name
        return cast(ProofStepsResponse, await self.perform(name, request, inspect=inspect))
