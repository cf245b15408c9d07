"""The call gate: immediate `busy` at the bound, `timeout` past the budget, slots held by work
that is still running and freed when it ends."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.service.gate import CallGate


def test_result_and_library_errors_pass_through() -> None:
    gate = CallGate(2, 30)

    def refuse() -> None:
        raise LeanIndexError(ErrorCode.NOT_FOUND, "no such thing")

    async def main() -> None:
        assert await gate.run(lambda a, b: a + b, 2, 3) == 5
        with pytest.raises(LeanIndexError) as raised:
            await gate.run(refuse)
        assert raised.value.code is ErrorCode.NOT_FOUND

    anyio.run(main)
    assert gate.in_flight == 0


def test_bound_refuses_at_once_and_frees_slots_when_work_ends() -> None:
    gate = CallGate(2, 30)
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> str:
        started.release()
        release.wait(30)
        return "done"

    async def main() -> None:
        results: list[str] = []
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(lambda: _collect(gate.run(hold), results))
            for _ in range(2):
                await anyio.to_thread.run_sync(started.acquire)
            assert gate.in_flight == 2
            for _ in range(3):
                with pytest.raises(LeanIndexError) as raised:
                    await gate.run(lambda: "never")
                assert raised.value.code is ErrorCode.BUSY
            release.set()
        assert results == ["done", "done"]
        assert await gate.run(lambda: "again") == "again"

    anyio.run(main)
    assert gate.in_flight == 0


async def _collect(pending, results: list) -> None:
    results.append(await pending)


def test_zero_bound_refuses_everything() -> None:
    gate = CallGate(0, 30)

    async def main() -> None:
        with pytest.raises(LeanIndexError) as raised:
            await gate.run(lambda: 1)
        assert raised.value.code is ErrorCode.BUSY

    anyio.run(main)


def test_timeout_keeps_the_slot_until_the_thread_finishes() -> None:
    gate = CallGate(1, 0.05)
    release = threading.Event()
    finished = threading.Event()

    def slow() -> None:
        release.wait(30)
        finished.set()

    async def main() -> None:
        with pytest.raises(LeanIndexError) as raised:
            await gate.run(slow)
        assert raised.value.code is ErrorCode.TIMEOUT
        assert gate.in_flight == 1
        with pytest.raises(LeanIndexError) as busy:
            await gate.run(lambda: 1)
        assert busy.value.code is ErrorCode.BUSY
        release.set()
        await anyio.to_thread.run_sync(finished.wait, 30)

    anyio.run(main)
    # The worker releases its slot right after `slow` returns.
    for _ in range(1000):
        if gate.in_flight == 0:
            break
        time.sleep(0.01)
    assert gate.in_flight == 0


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        CallGate(-1, 1)
    with pytest.raises(ValueError):
        CallGate(1, 0)
