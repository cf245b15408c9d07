"""Progress on stderr of the long commands: a catalog build (constants processed, rate, and an ETA
when the number of constants is known in advance, from the profile's previous manifest), a
doc-gen4 import (input read, then lines built), a pack download (bytes) and a batch check
(requests answered, checks per second, ETA from the number of input lines).

On a terminal it is a rich bar, redrawn in place. Elsewhere (CI logs, notebooks, a pipe) a bar
would not redraw, so it is plain lines instead (`ProgressLines`): one at most every
`LINE_EVERY_S` seconds with the counts so far, and a last one at the end when any was printed
(always, when progress was asked for with `--progress`). `--no-progress` prints nothing.
rich's progress module is imported only when a bar is drawn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from .output import stderr

if TYPE_CHECKING:
    from rich.progress import ProgressColumn

#: Redraw a bar at most every this many stream lines; rich's own refresh is time-based.
UPDATE_EVERY_LINES = 512

#: Seconds between two progress lines when stderr is not a terminal.
LINE_EVERY_S = 5.0

Mode = Literal["bar", "lines"] | None


def progress_mode(force: bool | None) -> Mode:
    """How to show progress: `force` False never (None); otherwise a bar on a terminal and
    lines elsewhere (`force` None shows lines only once `LINE_EVERY_S` have passed; True also
    prints the last line of a short run)."""
    if force is False:
        return None
    return "bar" if stderr.is_terminal else "lines"


def _clock() -> float:
    return time.monotonic()


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def _count(n: float) -> str:
    return f"{n:,.0f}"


def _mebibytes(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


class ProgressLines:
    """Progress as plain lines on stderr, at most one every `every_s` seconds, e.g.
    `building core: 120,000/306,807 constants (39%), 6,012 constants/s, 0:00:20, ETA 0:00:31`.

    `unit`: what is counted; `total`: how many there will be (None: unknown, no percentage or
    ETA); `show`: how a count is written (`_count`, or `_mebibytes` for bytes); `rate_unit`:
    what the rate counts when it is not `unit` (a batch counts checks per second but requests
    done). `clock`: seconds, monotonic (a test gives its own).
    """

    def __init__(
        self,
        label: str,
        unit: str,
        total: int | None = None,
        *,
        show: Callable[[float], str] = _count,
        rate_unit: str | None = None,
        every_s: float | None = None,
        clock: Callable[[], float] | None = None,
    ):
        self.label, self.unit, self.total, self.show = label, unit, total, show
        self.rate_unit = rate_unit or unit
        self.every_s = LINE_EVERY_S if every_s is None else every_s
        self.clock = clock or _clock
        self.started = self.last = self.clock()
        self.done = 0
        self.rated = 0
        self.printed = 0

    def update(self, done: int, total: int | None = None, rated: int | None = None) -> None:
        """Record `done` so far (and the `total`, once known; `rated`: the count the rate is of,
        when not `done`); print a line when `every_s` passed since the last one."""
        self.done = done
        self.rated = done if rated is None else rated
        if total is not None:
            self.total = total
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self._print(now)

    def finish(self, always: bool) -> None:
        """The last line: printed when any line was, or `always`."""
        if self.printed or always:
            self._print(self.clock())

    def _print(self, now: float) -> None:
        elapsed = now - self.started
        rate = self.rated / elapsed if elapsed > 0 else 0.0
        unit, rate_unit = (f" {name}" if name else "" for name in (self.unit, self.rate_unit))
        if self.total:
            shown = f"{self.show(self.done)}/{self.show(self.total)}{unit} ({100 * self.done // self.total}%)"
        else:
            shown = f"{self.show(self.done)}{unit}"
        text = f"{self.label}: {shown}, {self.show(rate)}{rate_unit}/s, {_duration(elapsed)}"
        if self.total:
            text += f", ETA {_duration(max(self.total - self.done, 0) / rate)}" if rate > 0 else ", ETA --"
        stderr.file.write(text + "\n")
        stderr.file.flush()
        self.printed += 1


def _rate_columns() -> tuple[Any, Any]:
    """The rate and ETA columns of a bar (defined here so that rich loads only for a bar)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """`unit` per second, averaged since the start: of the task's `completed` count, or of
        its field `field` when given (a batch counts checks, not the lines it skipped)."""

        def __init__(self, unit: str = "constants", field: str | None = None):
            super().__init__()
            self.unit = unit
            self.field = field

        def rate(self, task: Task) -> float:
            elapsed = task.elapsed or 0.0
            done = task.fields.get(self.field, 0) if self.field else task.completed
            return done / elapsed if elapsed > 0 else 0.0

        def render(self, task: Task) -> Text:
            return Text(f"{self.rate(task):,.0f} {self.unit}/s")

    class EtaColumn(ProgressColumn):
        """Time left for a task with a known total, at the rate `rate` measures."""

        def __init__(self, rate: RateColumn | None = None):
            super().__init__()
            self.rate = rate or RateColumn()

        def render(self, task: Task) -> Text:
            rate = self.rate.rate(task)
            if not task.total or task.completed <= 0 or rate <= 0:
                return Text("ETA --")
            left = max(task.total - task.completed, 0) / rate
            minutes, seconds = divmod(int(left), 60)
            return Text(f"ETA {minutes}:{seconds:02d}")

    return RateColumn, EtaColumn


@contextmanager
def constant_progress(label: str, expected: int | None, force: bool | None) -> Iterator[Callable[[int], None] | None]:
    """A callback `on_line(n)` for `build_catalog` showing progress on stderr (`progress_mode`),
    or None (quiet). `expected`: the number of constants expected (e.g. the previous manifest's
    count), which adds a bar (or percentage) and an ETA; None shows the count and rate only.
    Stream line n is constant n - 1 (line 1 is the header)."""
    mode = progress_mode(force)
    if mode is None:
        yield None
        return
    if mode == "lines":
        lines = ProgressLines(label, "constants", expected)
        counted = 0

        def on_line_text(line: int) -> None:
            nonlocal counted
            counted = max(line - 1, 0)
            if line % UPDATE_EVERY_LINES == 0:
                lines.update(counted)

        yield on_line_text
        # The stream ended with its footer line, which is not a constant.
        lines.done = lines.rated = max(counted - 1, 0)
        lines.finish(always=force is True)
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    rate_column, eta_column = _rate_columns()
    columns: list[ProgressColumn] = [TextColumn(label)]
    if expected:
        columns += [BarColumn(), TextColumn("{task.completed:,}/{task.total:,} constants")]
    else:
        columns.append(TextColumn("{task.completed:,} constants"))
    columns += [rate_column(), TimeElapsedColumn()]
    if expected:
        columns.append(eta_column())
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task(label, total=expected)
        seen = 0

        def on_line(line: int) -> None:
            nonlocal seen
            seen = max(line - 1, 0)
            if line % UPDATE_EVERY_LINES == 0:
                progress.update(task, completed=seen)

        try:
            yield on_line
        except BaseException:
            progress.update(task, completed=seen)
            raise
        progress.update(task, completed=max(seen - 1, 0))


@contextmanager
def batch_progress(total: int | None, force: bool | None) -> Iterator[Callable[[bool], None] | None]:
    """A callback `advance(checked)` for each request of a batch (`checked`: False for one
    skipped because its result was already written) showing progress on stderr
    (`progress_mode`), or None (quiet). `total`: the number of requests (input lines), which
    adds the bar (or percentage) and an ETA at the rate of the checks made in this run."""
    mode = progress_mode(force)
    if mode is None:
        yield None
        return
    if mode == "lines":
        lines = ProgressLines("checking", "requests", total, rate_unit="checks")

        def advance_text(was_checked: bool) -> None:
            lines.update(lines.done + 1, rated=lines.rated + was_checked)

        yield advance_text
        lines.finish(always=force is True)
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    rate_column, eta_column = _rate_columns()
    rate = rate_column("checks", field="checked")
    columns: list[ProgressColumn] = [TextColumn("checking")]
    if total:
        columns += [BarColumn(), TextColumn("{task.completed:,}/{task.total:,} requests")]
    else:
        columns.append(TextColumn("{task.completed:,} requests"))
    columns += [rate, TimeElapsedColumn()]
    if total:
        columns.append(eta_column(rate))
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task("checking", total=total, checked=0)
        checked = 0

        def advance(was_checked: bool) -> None:
            nonlocal checked
            checked += was_checked
            progress.update(task, advance=1, checked=checked)

        yield advance


ReadCallback = Callable[[int, int], None]
CountCallback = Callable[[int], None]


@contextmanager
def import_progress(label: str, force: bool | None = None) -> Iterator[tuple[ReadCallback | None, CountCallback | None, CountCallback | None]]:
    """Callbacks `(on_read, on_build, on_line)` for `import_docgen` showing its two stages on
    stderr (`progress_mode`): reading the input (files, or compressed bytes of an archive),
    then building (stream lines); all None (quiet)."""
    mode = progress_mode(force)
    if mode is None:
        yield None, None, None
        return
    if mode == "lines":
        # Reading counts files of a folder or compressed bytes of an archive: counts without a unit.
        stages = {"reading": ProgressLines(f"reading {label}", ""), "building": ProgressLines(f"building {label}", "lines")}
        built = 0

        def read_text(done: int, total: int) -> None:
            stages["reading"].update(done, total)

        def build_text(lines_total: int) -> None:
            stages["reading"].finish(always=force is True)
            stages["building"] = ProgressLines(f"building {label}", "lines", lines_total)

        def line_text(line: int) -> None:
            nonlocal built
            built = line
            if line % UPDATE_EVERY_LINES == 0:
                stages["building"].update(line)

        yield read_text, build_text, line_text
        stages["building"].done = stages["building"].rated = built
        stages["building"].finish(always=force is True)
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TextColumn("{task.fields[note]}"), TimeElapsedColumn()]
    with Progress(*columns, console=stderr, transient=True) as progress:
        reading = progress.add_task(f"reading {label}", total=None, note="")
        building = progress.add_task(f"building {label}", total=None, note="", visible=False)

        def on_read(done: int, total: int) -> None:
            progress.update(reading, completed=done, total=total)

        def on_build(lines: int) -> None:
            progress.update(reading, completed=1, total=1)
            progress.update(building, total=lines, visible=True)

        def on_line(line: int) -> None:
            if line % 2048 == 0:
                progress.update(building, completed=line, note=f"{line:,} lines")

        yield on_read, on_build, on_line


@contextmanager
def transfer_progress(label: str, force: bool | None = None) -> Iterator[Callable[[int, int | None], None] | None]:
    """`on_progress(done, total)` (bytes; total None when unknown) showing a download on stderr
    (`progress_mode`), or None (quiet)."""
    mode = progress_mode(force)
    if mode is None:
        yield None
        return
    if mode == "lines":
        lines = ProgressLines(label, "", show=_mebibytes, rate_unit="")

        def on_bytes(done: int, total: int | None) -> None:
            lines.update(done, total)

        yield on_bytes
        lines.finish(always=force is True)
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn, TransferSpeedColumn

    columns = [TextColumn(label), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task(label, total=None)

        def on_progress(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        yield on_progress
