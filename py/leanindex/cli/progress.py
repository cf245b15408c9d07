"""Progress of a catalog build on stderr (rich): constants processed, rate, and an ETA when the
number of constants is known in advance (from the profile's previous manifest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

from .output import stderr

#: Redraw at most every this many lines; rich's own refresh is time-based.
UPDATE_EVERY_LINES = 512


class RateColumn(ProgressColumn):
    """Constants per second, averaged since the start."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:,.0f} constants/s")


class EtaColumn(ProgressColumn):
    """Time left at the average rate so far, for a task with a known total."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        if not task.total or task.completed <= 0 or elapsed <= 0:
            return Text("ETA --")
        left = max(task.total - task.completed, 0) * elapsed / task.completed
        minutes, seconds = divmod(int(left), 60)
        return Text(f"ETA {minutes}:{seconds:02d}")


@contextmanager
def constant_progress(label: str, expected: int | None, force: bool | None) -> Iterator[Callable[[int], None] | None]:
    """A callback `on_line(n)` for `build_catalog` drawing progress on stderr, or None (quiet).

    `force`: True draws even when stderr is not a terminal (the final state is then printed
    once at the end), False never draws, None draws on a terminal only. `expected`: the
    number of constants expected (e.g. the previous manifest's count), which adds a bar and an
    ETA; None shows the count and rate only. Stream line n is constant n - 1 (line 1 is the
    header).
    """
    if force is False or (force is None and not stderr.is_terminal):
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
