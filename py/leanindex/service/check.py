"""`lean.check` on the servers: the checker's tool description, its text rendering, and the
wait that gives up a queued check when the HTTP client goes away.

The checker (`leanindex.checker.Checker`) owns its limits (bounded queue answering `busy`,
per-check timeout, code size cap), so check calls do not pass through the query engine's
`CallGate`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..checker import Checker, CheckRequest, CheckResponse
from .tools import ToolSpec

T = TypeVar("T")

CHECK_DESCRIPTION = """\
Check a complete Lean 4 file against a pinned environment (a profile such as CORE or MATHLIB)
on a warm Lean REPL; the verdict is Lean's alone. `code` is the whole file: `import` lines that
the profile covers (e.g. `import Mathlib.Tactic` under MATHLIB), then declarations. `verdict`:
`accepted` (no error, no sorry, every new theorem uses only propext, Classical.choice and
Quot.sound), `incomplete` (sorry or open goals), `rejected` (errors, non-standard axioms, or a
command that could forge a verdict: `reasons` says which). `diagnostics` carries every message
with 1-based line and 0-based column (so #check/#print answers come back), `sorries` their goals,
`axioms` each theorem's axioms with the non-standard ones flagged. A tool failure (timeout, busy,
dead REPL) is an error result, never a verdict. Identical code on the same environment is
answered from a cache (`cached: true`)."""


def render_check(response: CheckResponse) -> str:
    """The verdict and environment first, then one line per reason, diagnostic, sorry and
    flagged axiom set (positions as `line:column`)."""
    cached = " (cached)" if response.cached else ""
    protected = "" if response.protected else " NOT PROTECTED"
    lines = [f"{response.verdict.value}{cached}{protected} ({response.environment}, {response.timings.total_ms:.0f} ms)"]
    for reason in response.reasons:
        where = f" {reason.start.line}:{reason.start.column}" if reason.start else ""
        lines.append(f"reason {reason.code.value}{where}: {reason.message}")
    lines.extend(f"{d.severity} {d.start.line}:{d.start.column}: {d.text}" for d in response.diagnostics)
    for s in response.sorries:
        where = f"{s.start.line}:{s.start.column}" if s.start else "?"
        lines.append(f"sorry {where}: {s.goal}")
    for entry in response.axioms:
        if entry.flagged:
            lines.append(f"axioms {entry.name}: flagged {', '.join(entry.flagged)} (all: {', '.join(entry.axioms)})")
    return "\n".join(lines)


def check_tool(checker: Checker) -> ToolSpec:
    """`lean.check` (alias `lean_check`) answered by `checker`."""
    return ToolSpec(
        name="lean.check",
        title="Check a Lean file",
        description=CHECK_DESCRIPTION,
        request_model=CheckRequest,
        response_model=CheckResponse,
        call=checker.check,
        render=render_check,
    )


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
