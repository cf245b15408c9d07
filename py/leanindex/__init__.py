"""leanindex: declaration index, bounded search and proof checking for Lean 4 environments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

__all__ = ["Client", "__version__"]

if TYPE_CHECKING:
    from .client import Client


def __getattr__(name: str) -> Any:
    # `Client` pulls in the engine (DuckDB, NumPy); load it on first use so that importing the
    # package for its version or its CLI stays cheap.
    if name == "Client":
        from .client import Client

        return Client
    raise AttributeError(f"module 'leanindex' has no attribute {name!r}")
