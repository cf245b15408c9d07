"""Users of a loaded catalog, so that a swap never closes it under a request in flight.

A request leases the catalog it starts on and gives the lease back when it finishes, however
it finishes. When a newer catalog replaces it (a rebuild under the same root), the old one is
retired: new requests go to the newer one, and the old one closes when its last lease ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Leases:
    """A count of current users of a resource and its `close` (thread-safe).

    `acquire()` is refused (returns False) once the resource is retired; `retire()` closes it
    at once when no lease is held, else the `release()` of the last lease closes it. `close`
    runs exactly once, outside any request.
    """

    def __init__(self, close: Callable[[], None]):
        self._close = close
        self._lock = threading.Lock()
        self._users = 0
        self._retired = False

    @property
    def users(self) -> int:
        """Leases held now."""
        with self._lock:
            return self._users

    @property
    def closed(self) -> bool:
        """True once the resource has been closed."""
        with self._lock:
            return self._retired and self._users == 0

    def acquire(self) -> bool:
        """Take a lease; False when the resource is retired (the caller must not use it)."""
        with self._lock:
            if self._retired:
                return False
            self._users += 1
            return True

    def release(self) -> None:
        """Give a lease back; closes the resource when it was the last one of a retired one."""
        with self._lock:
            self._users -= 1
            last = self._retired and self._users == 0
        if last:
            self._close()

    def retire(self) -> None:
        """Refuse new leases; close now if none is held, else when the last one is released.
        Retiring twice closes once."""
        with self._lock:
            if self._retired:
                return
            self._retired = True
            idle = self._users == 0
        if idle:
            self._close()
