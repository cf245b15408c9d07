"""The tools of `leanindex.tools.TOOLS`, bound to one server's engine, call gate and checker.

`ToolCalls` holds the calls a tool can be answered by (`ToolSpec.answered_by` names one): the
engine's, run through the server's `CallGate` (so `busy` and `timeout` apply), and the
checker's, which owns its own limits (bounded queue answering `busy`, per-check timeout, code
size cap). `server_tools` binds every tool to its call; the HTTP routes, the MCP servers
(`leanindex serve`, `leanindex mcp`), the search page, `Client.local()` and `api/` all take
their tools from it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel

from ..checker.backend import CheckerBackend
from ..checker.models import (
    AuditRequest,
    AuditResponse,
    BatchCheckRequest,
    BatchCheckResponse,
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
from ..engine import Engine
from ..engine.diff import DeclarationDiff, DiffRequest
from ..errors import ErrorCode, LeanIndexError
from ..models import (
    EnvironmentsRequest,
    EnvironmentsResponse,
    ExistsRequest,
    ExistsResponse,
    InspectManyRequest,
    InspectManyResponse,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
)
from ..tools import TOOLS, ToolSpec
from .gate import CallGate


class ToolCalls:
    """The calls that answer tools on one server: each takes a validated request model and
    returns its response model, or raises `LeanIndexError`.

    Engine calls run on `engine` through `gate` (`busy`, `timeout`). Checker calls run on
    `checker` (a local `Checker` or a `RayChecker`, whose proof tools answer `check_disabled`);
    without one they raise `check_disabled`. `needs_checker(name)` says which is which.
    """

    def __init__(self, engine: Engine, gate: CallGate, checker: CheckerBackend | None):
        self.engine = engine
        self.gate = gate
        self.checker = checker

    async def search(self, request: SearchRequest) -> SearchResponse:
        """`Engine.search`."""
        return await self.gate.run(self.engine.search, request)

    async def inspect(self, request: InspectRequest) -> InspectResponse:
        """`Engine.inspect`."""
        return await self.gate.run(self.engine.inspect, request)

    async def inspect_many(self, request: InspectManyRequest) -> InspectManyResponse:
        """`Engine.inspect_many` (one gated call for all of its names)."""
        return await self.gate.run(self.engine.inspect_many, request)

    async def exists(self, request: ExistsRequest) -> ExistsResponse:
        """`Engine.exists` (one gated call for all of its names)."""
        return await self.gate.run(self.engine.exists, request)

    async def environments(self, request: EnvironmentsRequest) -> EnvironmentsResponse:
        """`Engine.environments` (the request has no fields)."""
        return await self.gate.run(self.engine.environments)

    async def diff(self, request: DiffRequest) -> DeclarationDiff:
        """`Engine.diff`."""
        return await self.gate.run(self.engine.diff, request)

    def _checker(self) -> CheckerBackend:
        if self.checker is None:
            raise LeanIndexError(
                ErrorCode.CHECK_DISABLED,
                "checking is not enabled on this server; start it with --check PROFILE=PROJECT --check-repl DIR",
                {},
            )
        return self.checker

    async def check(self, request: CheckRequest) -> CheckResponse:
        """`CheckerBackend.check`."""
        return await self._checker().check(request)

    async def check_batch(self, request: BatchCheckRequest) -> BatchCheckResponse:
        """`CheckerBackend.check_batch`."""
        return await self._checker().check_batch(request)

    async def check_target(self, request: TargetCheckRequest) -> TargetCheckResponse:
        """`CheckerBackend.check_target`."""
        return await self._checker().check_target(request)

    async def audit(self, request: AuditRequest) -> AuditResponse:
        """`CheckerBackend.audit`."""
        return await self._checker().audit(request)

    async def proof_state(self, request: ProofStateRequest) -> ProofStateResponse:
        """`CheckerBackend.proof_state`."""
        return await self._checker().proof_state(request)

    async def proof_step(self, request: ProofStepRequest) -> ProofStepResponse:
        """`CheckerBackend.proof_step`."""
        return await self._checker().proof_step(request)

    async def proof_close(self, request: ProofCloseRequest) -> ProofCloseResponse:
        """`CheckerBackend.proof_close`."""
        return await self._checker().proof_close(request)

    async def proof_steps(self, request: ProofStepsRequest) -> ProofStepsResponse:
        """`CheckerBackend.proof_steps` as a list; `include_theorems` reads this server's catalog."""
        return await self._checker().proof_steps(request, tree=False, inspect=self.inspect)

    async def proof_tree(self, request: ProofStepsRequest) -> ProofStepsResponse:
        """`CheckerBackend.proof_steps` as a tree of goal boxes."""
        return await self._checker().proof_steps(request, tree=True, inspect=self.inspect)


@dataclass(frozen=True, kw_only=True)
class ServedTool(ToolSpec):
    """A `ToolSpec` bound to one server: `call` answers a validated request (the
    `ToolCalls` method the spec names); `enabled` is False for a checker tool on a server
    without a checker (MCP does not list it; a call raises `check_disabled`)."""

    call: Callable[[Any], Coroutine[Any, Any, BaseModel]]
    enabled: bool = True


def server_tools(engine: Engine, gate: CallGate, checker: CheckerBackend | None) -> list[ServedTool]:
    """Every tool of `TOOLS`, in listing order, bound to `ToolCalls(engine, gate, checker)`."""
    return bind_tools(ToolCalls(engine, gate, checker))


def bind_tools(calls: ToolCalls) -> list[ServedTool]:
    """Every tool of `TOOLS`, in listing order, bound to its method of `calls`; enabled unless
    it is a checker tool and `calls` has no checker.

    Raises `RuntimeError` for a spec naming no `ToolCalls` method (a programming error, caught by
    `tests/test_registries.py`)."""
    checker = calls.checker
    served = []
    for spec in TOOLS:
        call = getattr(calls, spec.answered_by, None)
        if call is None or spec.answered_by.startswith("_"):
            raise RuntimeError(f"tool {spec.name} is answered by {spec.answered_by!r}, which ToolCalls has not")
        contract = {field.name: getattr(spec, field.name) for field in fields(spec)}
        served.append(ServedTool(**contract, call=call, enabled=checker is not None or spec.tag != "check"))
    return served
