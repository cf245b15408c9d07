"""The engine for the commands, loaded when a command first opens one: importing a command
module (for `leanindex COMMAND --help`, or `leanindex --help`) must not load the engine,
pyarrow, NumPy or DuckDB (tests/test_startup.py checks it).

`Engine(root)` here is `leanindex.engine.Engine(root)`; type checkers see that class itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine import Engine
else:

    def Engine(root: str | Path | None = None):  # noqa: N802 -- stands in for the class of the same name
        """`leanindex.engine.Engine(root)`, its module imported on this first call."""
        from ..engine import Engine as loaded

        return loaded(root)


__all__ = ["Engine"]
