"""The warm pool of one profile: N workers started ahead of need, a bounded wait queue, a spare
started before a worker is retired, and replacement after timeouts and crashes.

All bookkeeping runs on the event loop thread; REPL calls run in a private thread pool. A
caller cancelled while it waits in the queue leaves the queue; a caller cancelled while its check
runs gets `CancelledError` at once, and the check finishes (bounded by its timeout) and releases
its worker in the background.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from lean_interact import LeanREPLConfig

from ..errors import ErrorCode, LeanIndexError
from ..models import display_profile
from .config import CheckerConfig
from .worker import Worker

log = logging.getLogger(__name__)
T = TypeVar("T")


class ProfilePool:
    """Workers of one profile. Use from one event loop: `await start()`, `await run(...)`,
    `await close()`."""

    def __init__(self, config: CheckerConfig, repl_config: LeanREPLConfig):
        self.config = config
        self._repl_config = repl_config
        self._idle: deque[Worker] = deque()
        self._waiters: deque[asyncio.Future[Worker]] = deque()
        #: Callers waiting for one particular worker (its REPL holds their proof state).
        self._wanted: dict[Worker, deque[asyncio.Future[Worker]]] = {}
        self._all: set[Worker] = set()
        self._starting = 0
        self._spare: asyncio.Future[Worker] | None = None
        self._closed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=2 * config.workers + 2, thread_name_prefix=f"leanindex-check-{config.profile}"
        )
        self.retired = 0

    async def start(self) -> None:
        """Start every worker; raises the first start failure (`backend_error`, stage `header`)."""
        results = await asyncio.gather(*(self._new_worker() for _ in range(self.config.workers)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        for result in results:
            if isinstance(result, Worker):
                self._release(result)
        if failures:
            raise failures[0]

    async def _new_worker(self) -> Worker:
        worker = Worker(self.config, self._repl_config)
        self._all.add(worker)
        self._starting += 1
        try:
            await self._in_thread(worker.start)
        except BaseException:
            self._all.discard(worker)
            worker.close()
            raise
        finally:
            self._starting -= 1
        if self._closed:
            worker.close()
            self._all.discard(worker)
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is closed", {})
        return worker

    async def _in_thread(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _release(self, worker: Worker) -> None:
        """Hand a ready worker to the oldest caller waiting for it in particular, else to the
        oldest waiter, or park it."""
        wanting = self._wanted.get(worker)
        while wanting:
            waiter = wanting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)

    def give_back(self, worker: Worker) -> None:
        """Return a worker taken with `acquire` but not used (its check was refused before it ran)."""
        self._release(worker)

    async def acquire(self, prefer: str | None = None) -> Worker:
        """A ready worker, an idle one holding the prepared environment `prefer` when there is
        one; waits in the bounded queue. Raises `busy` when the queue is full, and the last
        start failure when no worker is running or starting."""
        if self._closed:
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is closed", {})
        if self._idle:
            holding = next((w for w in self._idle if prefer is not None and w.holds(prefer)), None)
            if holding is not None:
                self._idle.remove(holding)
                return holding
            return self._idle.popleft()
        self._room(f"all {self.config.workers} {display_profile(self.config.profile)} workers are busy")
        if not self._all and not self._starting:
            self._replace()
        return await self._wait_in(self._waiters)

    def _pending(self) -> int:
        waiting = [*self._waiters, *(w for queue in self._wanted.values() for w in queue)]
        return sum(1 for w in waiting if not w.done())

    async def acquire_this(self, worker: Worker) -> Worker:
        """`worker` itself once it is free (a proof state lives in its REPL), waiting in the
        same bounded queue as `acquire`. Raises `LookupError` when the worker is no longer in
        service (retired, dead, or retired while waited for), `busy` when the queue is full."""
        if self._closed:
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is closed", {})
        if worker not in self._all or not worker.alive:
            raise LookupError("the worker is no longer in service")
        if worker in self._idle:
            self._idle.remove(worker)
            return worker
        self._room(f"the {display_profile(self.config.profile)} worker holding this proof state is busy")
        queue = self._wanted.setdefault(worker, deque())
        try:
            return await self._wait_in(queue)
        finally:
            if not queue and self._wanted.get(worker) is queue:
                del self._wanted[worker]

    def _room(self, busy: str) -> None:
        """Raise `busy` (saying `busy` and how many wait) when the bounded queue is full."""
        pending = self._pending()
        if pending >= self.config.queue_size:
            raise LeanIndexError(
                ErrorCode.BUSY,
                f"{busy} and {pending} requests wait",
                {"queue_size": self.config.queue_size, "workers": self.config.workers},
            )

    async def _wait_in(self, queue: deque[asyncio.Future[Worker]]) -> Worker:
        """Wait in `queue` until `_release` hands over a worker."""
        waiter: asyncio.Future[Worker] = asyncio.get_running_loop().create_future()
        queue.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # Handed a worker in the same instant the caller went away: pass it on.
                self._release(waiter.result())
            raise
        finally:
            if waiter in queue:
                queue.remove(waiter)

    def _fail_wanted(self, worker: Worker) -> None:
        for waiter in self._wanted.pop(worker, deque()):
            if not waiter.done():
                waiter.set_exception(LookupError("the worker was retired"))

    def _fail_waiters(self, error: LeanIndexError) -> None:
        for worker in list(self._wanted):
            self._fail_wanted(worker)
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(error)

    async def run(self, worker: Worker, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(*args)` (a blocking call on `worker`) in the pool's threads; afterwards the
        worker is returned, retired or replaced whatever happened to the caller."""
        future = asyncio.ensure_future(self._in_thread(fn, *args))
        future.add_done_callback(lambda _: self._after(worker))
        return await asyncio.shield(future)

    def _after(self, worker: Worker) -> None:
        if self._closed:
            worker.close()
            self._all.discard(worker)
            return
        retire = (
            not worker.alive
            or worker.tainted
            or worker.checks >= self.config.recycle_after_checks
            or (self.config.recycle_rss_mb is not None and worker.rss_mb() > self.config.recycle_rss_mb)
        )
        if not retire:
            if worker.checks == self.config.recycle_after_checks - 1:
                self._ensure_spare()
            self._release(worker)
            return
        worker.close()
        self._all.discard(worker)
        self._fail_wanted(worker)
        self.retired += 1
        self._replace()

    def _ensure_spare(self) -> None:
        if self._spare is None and not self._closed:
            self._spare = asyncio.ensure_future(self._new_worker())
            self._spare.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    def _replace(self) -> None:
        """Put a worker in place of a retired one: the spare when there is one, else a new one."""
        if self._spare is not None:
            spare, self._spare = self._spare, None
        else:
            spare = asyncio.ensure_future(self._new_worker())

        def arrived(f: asyncio.Future[Worker]) -> None:
            if f.cancelled():
                return
            error = f.exception()
            if error is None:
                self._release(f.result())
            elif isinstance(error, LeanIndexError) and not self._all and not self._starting:
                # No worker left: tell the waiters now instead of letting them wait forever.
                self._fail_waiters(error)
            else:
                log.warning("replacing a %s worker failed: %s", self.config.profile, error)

        spare.add_done_callback(arrived)

    @property
    def idle(self) -> int:
        """Warm workers waiting for a check."""
        return len(self._idle)

    def process_ids(self) -> list[int]:
        """Process-group ids of every REPL this pool runs (for tests and diagnostics)."""
        return [w.server.pgid for w in list(self._all) if w.server is not None and w.server.pgid is not None]

    async def close(self) -> None:
        """Fail the waiters, kill every REPL process group, stop the threads."""
        self._closed = True
        self._fail_waiters(LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is closed", {}))
        if self._spare is not None:
            self._spare.cancel()
        for worker in list(self._all):
            worker.close()
        self._all.clear()
        self._idle.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def kill_now(self) -> None:
        """Synchronous last resort (atexit, signal handlers): kill every REPL process group."""
        self._closed = True
        for worker in list(self._all):
            worker.close()
