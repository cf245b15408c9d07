"""Bounded concurrency and a time budget for blocking library calls made by the servers.

Engine calls are synchronous and CPU-bound, so the HTTP and MCP adapters run them in worker
threads through one `CallGate`. The gate never queues: a call that finds every slot taken is
refused at once with `busy`, and a call that outlives the time budget is answered with
`timeout`. A thread cannot be killed, so a timed-out call keeps its slot until its thread really
finishes; the bound therefore counts work actually running, not work merely waited for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from ..errors import ErrorCode, LeanIndexError

T = TypeVar("T")


class CallGate:
    """Run blocking calls in worker threads, at most `max_concurrent` at a time, each within
    `time_budget_s` seconds.

    `max_concurrent` may be 0 (every call is refused with `busy`, e.g. to drain a server);
    `time_budget_s` must be positive. Raises `ValueError` for a negative bound or a non-positive
    budget.
    """

    def __init__(self, max_concurrent: int, time_budget_s: float):
        if max_concurrent < 0:
            raise ValueError("max_concurrent must be >= 0")
        if not time_budget_s > 0:
            raise ValueError("time_budget_s must be > 0")
        self.max_concurrent = max_concurrent
        self.time_budget_s = time_budget_s
        self._slots = threading.Semaphore(max_concurrent)
        self._in_flight = 0
        self._count_lock = threading.Lock()
        # A private thread limiter as large as the bound, so a call that got a slot never waits
        # behind anyio's shared default limiter (40 threads) either.
        self._limiter = anyio.CapacityLimiter(max(1, max_concurrent))

    @property
    def in_flight(self) -> int:
        """Calls holding a slot right now (running, or timed out but still running)."""
        return self._in_flight

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` in a worker thread; its result, or the `LeanIndexError` it raised.

        Raises `LeanIndexError(busy)` at once when no slot is free, and
        `LeanIndexError(timeout)` when the call did not finish within the budget (the call
        goes on in its thread and frees its slot when done).
        """
        if not self._slots.acquire(blocking=False):
            raise LeanIndexError(
                ErrorCode.BUSY,
                f"the server is at its concurrency bound ({self.max_concurrent} calls); retry shortly",
                {"max_concurrent": self.max_concurrent},
            )
        with self._count_lock:
            self._in_flight += 1
        # The slot is freed by whichever side finishes with the call: the worker when it ran, or
        # this coroutine when the call was abandoned before its thread started.
        state = {"phase": "pending"}
        state_lock = threading.Lock()

        def release() -> None:
            with self._count_lock:
                self._in_flight -= 1
            self._slots.release()

        def work() -> T:
            with state_lock:
                if state["phase"] == "abandoned":
                    raise LeanIndexError(ErrorCode.TIMEOUT, "abandoned before it started")
                state["phase"] = "running"
            try:
                return fn(*args)
            finally:
                release()

        try:
            with anyio.fail_after(self.time_budget_s):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=self._limiter)
        except TimeoutError:
            raise LeanIndexError(
                ErrorCode.TIMEOUT,
                f"the call did not finish within the time budget of {self.time_budget_s:g} s",
                {"time_budget_s": self.time_budget_s},
            ) from None
        finally:
            # Timed out or cancelled (client gone) before the thread picked the call up.
            with state_lock:
                if state["phase"] == "pending":
                    state["phase"] = "abandoned"
                    release()
