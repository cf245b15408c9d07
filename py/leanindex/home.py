"""The default root: the folder holding `manifests/` and `catalog/` when none is given.

`LEANINDEX_ROOT` when set (and not empty), else the platform's user data folder for the
application `leanindex` (`platformdirs.user_data_dir`: `~/.local/share/leanindex` on Linux,
honouring `XDG_DATA_HOME`; `~/Library/Application Support/leanindex` on macOS;
`%LOCALAPPDATA%\\leanindex` on Windows). Every command, `leanindex serve`, `leanindex mcp` and
`Client.local()` resolve a missing root here, so `--root` is needed only to override it.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ROOT_ENV = "LEANINDEX_ROOT"
APP_NAME = "leanindex"


def default_root() -> Path:
    """`$LEANINDEX_ROOT`, else the user data folder (see the module docstring); not created here."""
    configured = os.environ.get(ROOT_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def resolve_root(root: str | Path | None) -> Path:
    """`root` when given, else `default_root()`."""
    return Path(root).expanduser() if root is not None else default_root()
