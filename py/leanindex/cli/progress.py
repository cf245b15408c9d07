"""Progress on stderr (rich): of a catalog build (constants processed, rate, and an ETA when the
number of constants is known in advance, from the profile's previous manifest), and of a batch
check (requests answered, checks per second, ETA from the number of input lines)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

from .output import stderr

#: Redraw at most every this many lines; rich's own refresh is time-based.
UPDATE_EVERY_LINES = 512


class RateColumn(ProgressColumn):
    """`unit` per second, averaged since the start: of the task's `completed` count, or of its
    field `field` when given (a batch counts checks, not the lines it skipped)."""

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
    """Time left for a task with a known total, at the rate `rate` measures (default: the
    average rate of `completed` so far)."""

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


def _draws(force: bool | None) -> bool:
    """Whether to draw: `force` True always, False never, None on a terminal only."""
    return force is True or (force is None and stderr.is_terminal)


@contextmanager
def constant_progress(label: str, expected: int | None, force: bool | None) -> Iterator[Callable[[int], None] | None]:
    """A callback `on_line(n)` for `build_catalog` drawing progress on stderr, or None (quiet).

    `force`: True draws even when stderr is not a terminal (the final state is then printed
    once at the end), False never draws, None draws on a terminal only. `expected`: the
    number of constants expected (e.g. the previous manifest's count), which adds a bar and an
    ETA; None shows the count and rate only. Stream line n is constant n - 1 (line 1 is the
    header).
    """
    if not _draws(force):
        yield None
        return
    columns: list[ProgressColumn] = [TextColumn(label)]
    if expected:
        columns += [BarColumn(), TextColumn("{task.completed:,}/{task.total:,} constants")]
    else:
        columns.append(TextColumn("{task.completed:,} constants"))
    columns += [RateColumn(), TimeElapsedColumn()]
    if expected:
        columns.append(EtaColumn())
    with Progress(*columns, console=stderr, transient=stderr.is_terminal) as progress:
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
        # The stream ended with its footer line, which is not a constant.
        progress.update(task, completed=max(seen - 1, 0))


@contextmanager
def batch_progress(total: int | None, force: bool | None) -> Iterator[Callable[[bool], None] | None]:
    """A callback `advance(checked)` for each request of a batch (`checked`: False for one
    skipped because its result was already written) drawing a bar on stderr, or None (quiet;
    `force` as in `constant_progress`). `total`: the number of requests (input lines), which adds
    the bar and an ETA at the rate of the checks made in this run."""
    if not _draws(force):
        yield None
        return
    rate = RateColumn("checks", field="checked")
    columns: list[ProgressColumn] = [TextColumn("checking")]
    if total:
        columns += [BarColumn(), TextColumn("{task.completed:,}/{task.total:,} requests")]
    else:
        columns.append(TextColumn("{task.completed:,} requests"))
    columns += [rate, TimeElapsedColumn()]
    if total:
        columns.append(EtaColumn(rate))
    with Progress(*columns, console=stderr, transient=stderr.is_terminal) as progress:
        task = progress.add_task("checking", total=total, checked=0)
        checked = 0

        def advance(was_checked: bool) -> None:
            nonlocal checked
            checked += was_checked
            progress.update(task, advance=1, checked=checked)

        yield advance
