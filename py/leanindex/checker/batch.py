"""Batch checking: many check requests, each with the caller's id, answered as they complete
with a bound on the requests in flight, so memory stays flat however long the input is.

The driver (`run_batch`) is shared by the local `Checker` and the Ray front
(`leanindex.checker.cluster.RayChecker`) through `BatchChecking`: a class supplies `answer`
(one item to one `BatchResult`, never raising for a refusal or tool failure), `batch_width`,
`start` and `close`, and gets

- `check_stream(items)`: an async iterator of `BatchResult` in completion order;
- `check_batch(BatchCheckRequest)`: the bounded batch of `lean.check.batch`, results in the
  items' order;
- `check_many(items)`: the same for synchronous code, yielding `(id, CheckResponse or
  LeanIndexError)` on a private event loop, starting and closing the checker itself.

The input is read lazily, one item when a slot frees up; it is never materialised. Ids are the
caller's: the driver neither checks nor remembers them (`leanindex check-batch` does).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator
from typing import TypeAlias

from ..errors import ErrorCode, LeanIndexError
from .models import BatchCheckRequest, BatchCheckResponse, BatchItem, BatchResult, CheckRequest, CheckResponse

log = logging.getLogger(__name__)

#: What `check_many` accepts per item: a `BatchItem`, or an `(id, CheckRequest)` pair.
ItemLike: TypeAlias = BatchItem | tuple[str, CheckRequest]


def as_item(value: ItemLike) -> BatchItem:
    """`value` as a `BatchItem`; raises `LeanIndexError(invalid_request)` for anything else."""
    if isinstance(value, BatchItem):
        return value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], CheckRequest):
        return BatchItem(id=value[0], **value[1].model_dump(exclude_none=True))
    raise LeanIndexError(
        ErrorCode.INVALID_REQUEST, f"a batch item is a BatchItem or an (id, CheckRequest) pair, not {type(value).__name__}", {}
    )


def result_of(item_id: str, outcome: CheckResponse | LeanIndexError, attempts: int = 1) -> BatchResult:
    """The `BatchResult` of one item from its response or error."""
    if isinstance(outcome, LeanIndexError):
        return BatchResult(id=item_id, error=outcome.body(), attempts=attempts)
    return BatchResult(id=item_id, response=outcome, attempts=attempts)


def outcome_of(result: BatchResult) -> CheckResponse | LeanIndexError:
    """The response, or the error as a `LeanIndexError`, of one result."""
    if result.response is not None:
        return result.response
    assert result.error is not None
    return LeanIndexError(ErrorCode(result.error.code), result.error.message, result.error.details)


async def answer_with(check: Callable[[CheckRequest], Awaitable[CheckResponse]], item: BatchItem) -> BatchResult:
    """`check(item)` as a result: a `LeanIndexError` becomes the result's error; an unexpected
    exception becomes `internal_error` (logged with its traceback) so that no item goes
    unanswered."""
    try:
        return result_of(item.id, await check(item.request()))
    except LeanIndexError as error:
        return result_of(item.id, error)
    except Exception as error:  # noqa: BLE001  (a bug must still answer its item, loudly)
        log.exception("checking batch item %r failed", item.id)
        return result_of(item.id, LeanIndexError(ErrorCode.INTERNAL_ERROR, f"checking failed unexpectedly: {error!r}", {}))


async def run_batch(
    answer: Callable[[BatchItem], Awaitable[BatchResult]], items: Iterable[ItemLike | BatchResult], max_in_flight: int
) -> AsyncGenerator[BatchResult, None]:
    """Answer every item of `items` with `answer`, at most `max_in_flight` at once, yielding the
    results as they complete.

    `items` is read one item at a time, only when a slot is free; an item that is already a
    `BatchResult` (answered without a check, e.g. an input line refused as invalid) is passed
    through. When reading it raises, no
    new item starts, the items in flight are answered and yielded, and then the error is
    raised (so a caller that writes results loses none). Closing the iterator early cancels
    the items in flight.
    """
    if max_in_flight < 1:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"max_in_flight must be at least 1, not {max_in_flight}", {})
    source = iter(items)
    running: set[asyncio.Task[BatchResult]] = set()
    failure: BaseException | None = None
    exhausted = False
    try:
        while True:
            while not exhausted and len(running) < max_in_flight:
                try:
                    value = next(source)
                    if isinstance(value, BatchResult):
                        yield value
                        continue
                    item = as_item(value)
                except StopIteration:
                    exhausted = True
                except Exception as error:  # noqa: BLE001  (re-raised once the items in flight are answered)
                    failure, exhausted = error, True
                else:
                    running.add(asyncio.ensure_future(answer(item)))
            if not running:
                break
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                yield task.result()
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    if failure is not None:
        raise failure


def ending(result: BatchResult) -> str:
    """How a result ended: its verdict (`accepted`, `incomplete`, `rejected`) or `error`."""
    return result.response.verdict.value if result.response is not None else "error"


def count_results(results: Iterable[BatchResult]) -> dict[str, int]:
    """How many results ended each way (`ending`), every way listed."""
    counts = Counter({"accepted": 0, "incomplete": 0, "rejected": 0, "error": 0})
    counts.update(ending(result) for result in results)
    return dict(counts)


class BatchChecking:
    """Batch checking on top of `answer` (see the module docstring); mixed into `Checker` and
    `RayChecker`."""

    async def start(self) -> None:
        """Start the backend (REPLs, or actors); raises its first failure as `LeanIndexError`."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop the backend; checks still waiting get `backend_error`."""
        raise NotImplementedError

    async def answer(self, item: BatchItem) -> BatchResult:
        """One item's result; a refusal or tool failure is the result's error, never raised."""
        raise NotImplementedError

    def batch_width(self) -> int:
        """Items of one batch in flight at once when the caller does not say."""
        raise NotImplementedError

    def check_stream(self, items: Iterable[ItemLike | BatchResult], max_in_flight: int | None = None) -> AsyncGenerator[BatchResult, None]:
        """Every item's `BatchResult`, in completion order, at most `max_in_flight` (default
        `batch_width()`) at once; the checker must be started. Raises `invalid_request` for an
        item that is not a `BatchItem` or `(id, CheckRequest)` pair (after the items in flight
        were yielded) and whatever reading `items` raises, likewise."""
        return run_batch(self.answer, items, max_in_flight or self.batch_width())

    async def check_batch(self, request: BatchCheckRequest) -> BatchCheckResponse:
        """`lean.check.batch`: every item of a bounded batch checked concurrently (at most
        `batch_width()` at once); one result per item, in the items' order, with counts. Item
        failures are results, never raised."""
        by_id = {result.id: result async for result in self.check_stream(request.items)}
        results = [by_id[item.id] for item in request.items]
        return BatchCheckResponse(results=results, counts=count_results(results))

    def check_many(
        self, items: Iterable[ItemLike], max_in_flight: int | None = None
    ) -> Iterator[tuple[str, CheckResponse | LeanIndexError]]:
        """For synchronous code: start the checker on a private event loop, yield `(id,
        response or error)` for every item as checks complete (at most `max_in_flight` in
        flight, `items` read lazily), and close the checker when the iteration ends or the
        generator is closed. Raises as `check_stream`, and the start's failure."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.start())
            stream = self.check_stream(items, max_in_flight)
            try:
                while True:
                    try:
                        result = loop.run_until_complete(anext(stream))
                    except StopAsyncIteration:
                        return
                    yield result.id, outcome_of(result)
            finally:
                loop.run_until_complete(stream.aclose())
        finally:
            try:
                loop.run_until_complete(self.close())
            finally:
                loop.close()
