"""The wait that gives up a queued check when the HTTP client goes away (`POST /v1/check`;
the `lean.check` tool itself is in `leanindex.service.tools`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

async def unless_disconnected(pending: Awaitable[T], disconnected: Callable[[], Awaitable[bool]], poll_s: float = 0.2) -> T:
    """Await `pending`, polling `disconnected()` every `poll_s` seconds; when the client has
    gone, cancel it (a queued check leaves the queue) and raise `asyncio.CancelledError`."""
    task = asyncio.ensure_future(pending)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=poll_s)
            if done:
                return task.result()
            if await disconnected():
                task.cancel()
                raise asyncio.CancelledError("the client disconnected")
    finally:
        if not task.done():
            task.cancel()
