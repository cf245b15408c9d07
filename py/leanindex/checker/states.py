"""Open proof states: ids handed to callers for REPL proof states, per caller session, bounded
in number per worker and expiring when idle.

A REPL proof state lives in one REPL process; its id is honoured only while that process runs.
When the worker died (timeout, crash) or was recycled (check count, resident size), its states
are `unknown_proof_state`: they are never replayed against another environment. Ids are random
(128 bits), so they cannot be guessed from another session.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..errors import ErrorCode, LeanIndexError
from .worker import Worker


@dataclass
class OpenState:
    """One open state: the session it belongs to, its profile, the worker whose REPL holds
    it, the REPL's proof state number, and when it was last used (`time.monotonic()` seconds)."""

    state_id: str
    session: str
    profile: str
    worker: Worker
    repl_state: int
    last_used: float


class ProofStates:
    """Thread-safe table of open states. `ttl_s`: idle seconds before a state expires;
    `per_worker`: most states open on one worker (the least recently used is closed to make
    room; its id is then `unknown_proof_state`)."""

    def __init__(self, ttl_s: float, per_worker: int):
        self.ttl_s = ttl_s
        self.per_worker = per_worker
        self._states: OrderedDict[str, OpenState] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        for key in [k for k, s in self._states.items() if now - s.last_used > self.ttl_s or not s.worker.alive]:
            del self._states[key]

    def add(self, session: str, profile: str, worker: Worker, repl_state: int) -> OpenState:
        """Register a new state and return it."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            on_worker = [k for k, s in self._states.items() if s.worker is worker]
            for key in on_worker[: max(0, len(on_worker) - self.per_worker + 1)]:
                del self._states[key]
            state = OpenState(f"ps_{secrets.token_hex(16)}", session, profile, worker, repl_state, now)
            self._states[state.state_id] = state
            return state

    def get(self, session: str, profile: str, state_id: str) -> OpenState:
        """The open state `state_id` of `session` on `profile`, marked as used now.

        Raises `LeanIndexError(unknown_proof_state)` when there is none: never opened in this
        session or profile, closed, expired, evicted, or its worker's REPL is gone.
        """
        now = time.monotonic()
        with self._lock:
            state = self._states.get(state_id)
            if state is None or state.session != session or state.profile != profile:
                raise unknown_state(state_id, "no open proof state has this id in this session (closed, expired after "
                               f"{self.ttl_s:g} s idle, evicted, or never opened)")
            if not state.worker.alive:
                del self._states[state_id]
                raise unknown_state(state_id, "the REPL holding this proof state stopped (timeout, crash or recycling); "
                               "open the proof again with lean.proof.state")
            if now - state.last_used > self.ttl_s:
                del self._states[state_id]
                raise unknown_state(state_id, f"this proof state expired after {self.ttl_s:g} s idle")
            state.last_used = now
            self._states.move_to_end(state_id)
            return state

    def remove(self, session: str, profile: str, state_id: str) -> int:
        """Close `state_id` (raises as `get`); returns how many states stay open in `session`."""
        self.get(session, profile, state_id)
        with self._lock:
            self._states.pop(state_id, None)
            return sum(1 for s in self._states.values() if s.session == session)

    def __len__(self) -> int:
        return len(self._states)


def unknown_state(state_id: str, why: str) -> LeanIndexError:
    """The `unknown_proof_state` error for `state_id`, saying why."""
    return LeanIndexError(ErrorCode.UNKNOWN_PROOF_STATE, f"unknown proof state {state_id}: {why}", {"state_id": state_id})
