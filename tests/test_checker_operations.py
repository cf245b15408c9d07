"""The checker's operations registry (`checker.operations.OPERATIONS`): every operation is whole,
every named call of a backend goes through it, and a backend that forwards (the Ray front)
refuses exactly the operations that are not hosted, without a cluster."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest
from pydantic import BaseModel

from leanindex.checker.backend import CheckerBackend
from leanindex.checker.checker import Checker
from leanindex.checker.cluster import RayChecker, RaySettings
from leanindex.checker.models import (
    AuditRequest,
    CheckRequest,
    ProofStateRequest,
    ProofStepsRequest,
    TargetCheckRequest,
    TargetMode,
)
from leanindex.checker.operations import OPERATIONS, TARGET_MODES, Operation
from leanindex.errors import ErrorCode, LeanIndexError

from checker_support import standin_config

@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_is_whole(name: str) -> None:
    operation = OPERATIONS[name]
    assert operation.name == name
    assert issubclass(operation.request_model, BaseModel) and issubclass(operation.response_model, BaseModel)
    assert type(operation).run is not Operation.run, f"{name} does not define run"
    assert inspect.getdoc(type(operation)), f"{name} has no docstring"
    if "code" in operation.request_model.model_fields:
        assert "timeout_s" in operation.request_model.model_fields and "environment" in operation.request_model.model_fields


def test_every_named_call_of_a_backend_is_an_operation() -> None:
    """Each public coroutine of `CheckerBackend` other than the batch ones names a registered
    operation in its body, and the target modes map onto registered ones."""
    named = {
        name for name, member in vars(CheckerBackend).items() if inspect.iscoroutinefunction(member) and not name.startswith("_")
    } - {"perform"}
    assert named == {"check", "audit", "check_target", "proof_state", "proof_step", "proof_close", "proof_steps"}
    assert set(TARGET_MODES) == set(TargetMode) and set(TARGET_MODES.values()) <= set(OPERATIONS)
    # A cluster front and the local checker are the same kind of backend: no method mirrored.
    for backend in (Checker, RayChecker):
        assert issubclass(backend, CheckerBackend)
        assert not (named & set(vars(backend))), f"{backend.__name__} redefines {named & set(vars(backend))}"


def test_an_unknown_operation_is_refused(tmp_path: Path) -> None:
    config, _ = standin_config(tmp_path, instant=True)
    with pytest.raises(LeanIndexError) as refused:
        asyncio.run(Checker(config).perform("no_such_operation", CheckRequest(environment="TEST", code="theorem t : True := trivial")))
    assert refused.value.code is ErrorCode.INVALID_REQUEST and "check" in refused.value.message


def test_the_cluster_front_refuses_what_it_does_not_host_before_any_actor(tmp_path: Path) -> None:
    """Not started, so a hosted operation fails on the missing actors (`backend_error`) and a
    not hosted one is refused first (`check_disabled`), for every registered operation."""
    config, _ = standin_config(tmp_path, instant=True)
    front = RayChecker(config, RaySettings(actors=1))
    front._closed = True  # a closed front answers at once instead of waiting for actors
    requests = {
        "check": CheckRequest(environment="TEST", code="theorem t : True := trivial"),
        "audit": AuditRequest(environment="TEST", code="theorem t : True := trivial"),
        "check_target": TargetCheckRequest(environment="TEST", code="theorem t : True := trivial", target="t", candidates=["theorem t : True := trivial"]),
        "check_sequential": TargetCheckRequest(environment="TEST", code="theorem t : True := trivial", mode=TargetMode.SEQUENTIAL),
        "proof_state": ProofStateRequest(environment="TEST", code="theorem t : True := sorry"),
        "proof_steps": ProofStepsRequest(environment="TEST", code="theorem t : True := by trivial"),
        "proof_tree": ProofStepsRequest(environment="TEST", code="theorem t : True := by trivial"),
    }
    for name, operation in OPERATIONS.items():
        request = requests.get(name)
        if request is None:
            continue  # proof_step / proof_close need a state id: covered by the hosted flag below
        request = operation.request_model.model_validate(request.model_dump(exclude_none=True))
        with pytest.raises(LeanIndexError) as refused:
            asyncio.run(front.perform(name, request))
        expected = ErrorCode.BACKEND_ERROR if operation.hosted else ErrorCode.CHECK_DISABLED
        assert refused.value.code is expected, (name, refused.value)
    assert {n for n, o in OPERATIONS.items() if not o.hosted} == {"proof_state", "proof_step", "proof_close", "proof_steps", "proof_tree"}
