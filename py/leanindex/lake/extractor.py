"""Running the extractor as a child process and reading its stdout as a line stream.

`ExtractorRun` starts the command in a new process group (so `lake env` and the extractor it
spawns are stopped together), keeps the last lines of its stderr, enforces an optional
wall-clock limit, and on every way out (success, error, Ctrl-C) kills what is left of the group
and reaps the child. POSIX only (process groups), like Lean's own tooling on Linux and macOS.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from ..catalog.stream import iter_lines
from ..errors import ErrorCode, LeanIndexError
from .tools import STDERR_TAIL_LINES


class ExtractorRun:
    """A running extractor: `with ExtractorRun(cmd, cwd, timeout_s) as run: consume(run.lines())`.

    `lines()` yields stdout lines (bytes, without newline); once stdout ends it waits for the
    process and raises `LeanIndexError`: `timeout` when `timeout_s` (seconds, wall clock from
    the start) ran out and the group was killed, `backend_error` when the process exited with a
    non-zero status or was killed by a signal. Both carry the stderr tail in the message and in
    `details.stderr_tail`. Leaving the `with` block kills the process group if it still runs and
    always reaps the child.
    """

    def __init__(self, command: list[str], cwd: Path, timeout_s: float | None = None):
        self.command = command
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.timed_out = False
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    def __enter__(self) -> ExtractorRun:
        try:
            self._process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, f"cannot start {self.command[0]}: {error}", {"command": self.command}
            ) from None
        self._reader = threading.Thread(target=self._read_stderr, name="extractor-stderr", daemon=True)
        self._reader.start()
        if self.timeout_s is not None:
            self._timer = threading.Timer(self.timeout_s, self._expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """Process id of the direct child (`lake`), once started."""
        return self._process.pid if self._process else None

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for raw in self._process.stderr:
            self._stderr.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    def _kill_group(self) -> None:
        assert self._process is not None
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is already gone

    def _expire(self) -> None:
        assert self._process is not None
        if self._process.poll() is None:
            self.timed_out = True
            self._kill_group()

    def stderr_tail(self) -> str:
        """The last lines the process wrote to stderr (complete once it has been stopped)."""
        return "\n".join(self._stderr).rstrip()

    def stop(self) -> None:
        """Kill the process group if the child still runs, reap it, and drain stderr. Idempotent."""
        if self._process is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        if self._process.poll() is None:
            self._kill_group()
        self._process.wait()
        if self._reader is not None:
            self._reader.join()
        if self._process.stdout is not None:
            self._process.stdout.close()
        if self._process.stderr is not None:
            self._process.stderr.close()

    def lines(self) -> Iterator[bytes]:
        """Stdout lines; raises as the class docstring says once stdout is exhausted."""
        assert self._process is not None and self._process.stdout is not None
        # Hold back the last line until the exit status is known: a process killed mid-write
        # leaves a partial line, and its failure, not that line, is the error to report.
        held: bytes | None = None
        for line in iter_lines(self._process.stdout):
            if held is not None:
                yield held
            held = line
        status = self._process.wait()
        if self._timer is not None:
            self._timer.cancel()
        if self._reader is not None:
            self._reader.join()
        if self.timed_out:
            raise self._failure(ErrorCode.TIMEOUT, f"the extractor did not finish within {self.timeout_s:g} s and was killed", status)
        if status < 0:
            raise self._failure(ErrorCode.BACKEND_ERROR, f"the extractor was killed by {signal.Signals(-status).name}", status)
        if status != 0:
            raise self._failure(ErrorCode.BACKEND_ERROR, f"the extractor exited with status {status}", status)
        if held is not None:
            yield held

    def _failure(self, code: ErrorCode, message: str, status: int) -> LeanIndexError:
        error = LeanIndexError(code, message, {"command": self.command, "exit_status": status})
        return self.with_stderr(error)

    def with_stderr(self, error: LeanIndexError) -> LeanIndexError:
        """`error` with the stderr tail appended to its message and put in `details.stderr_tail`
        (unchanged when stderr was empty or the tail is already there)."""
        stderr_tail = self.stderr_tail()
        if stderr_tail and "stderr_tail" not in error.details:
            error.details["stderr_tail"] = stderr_tail
            error.message = f"{error.message}; the extractor's stderr ends with:\n{stderr_tail}"
            error.args = (error.message,)
        return error
