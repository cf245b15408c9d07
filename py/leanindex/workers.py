"""Worker processes for the long builds (the doc-gen4 conversion, the text index): how they
start and how they end when their parent is gone. One home, so every pool starts alike."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

#: How often a worker checks that the process that started it is still alive (seconds).
PARENT_POLL_S = 0.5


def exit_with_parent(parent: int) -> None:
    """A worker's start: a daemon thread ends the worker once process `parent` is gone. A
    worker waits on its task queue, and a forked sibling holds that pipe open too, so a worker
    whose build was killed (SIGKILL) would otherwise wait forever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="leanindex-parent-watch", daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` processes that end with this one. `fork` starts a worker in
    milliseconds and runs no module again, but copies other threads' locks in whatever state
    they are: with other Python threads alive (a progress bar, a server), `spawn`, which starts
    a fresh interpreter (and needs a script's `__main__` guard)."""
    method = "fork" if threading.active_count() == 1 else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method), initializer=exit_with_parent, initargs=(os.getpid(),))
