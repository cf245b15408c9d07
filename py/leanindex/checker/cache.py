"""A bounded LRU of verdicts keyed by (environment digest, protection, code digest, reference digest)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from .models import CheckResponse

#: What a verdict depends on: (environment digest, protected, sha256 of the code, reference
#: digest). The code digest is `Run.code_sha256`, None only for runs on an open proof state,
#: which are never cached.
VerdictKey = tuple[str, bool, str | None, str]


class VerdictCache:
    """Thread-safe LRU of `CheckResponse`s; `capacity` 0 stores nothing. Only Lean verdicts are
    stored, never tool failures (timeouts, dead REPLs, failed headers)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._entries: OrderedDict[VerdictKey, CheckResponse] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: VerdictKey) -> CheckResponse | None:
        """The cached response for `key` (a `VerdictKey`), or None;
        a hit becomes the most recently used entry."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: VerdictKey, response: CheckResponse) -> None:
        """Remember a verdict, dropping the least recently used entry beyond `capacity`
        (nothing is kept when `capacity` is 0)."""
        if self.capacity == 0:
            return
        with self._lock:
            self._entries[key] = response
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
