"""A running `leanindex serve` announces itself in its root, so a CLI query on the same root is
answered by it (its catalogs already open and verified) instead of a fresh process opening them.

While it serves on a loopback address, `leanindex serve` keeps `ROOT/serving/<pid>.json`
(`announcement_path`): `{"url": "http://127.0.0.1:PORT", "pid": PID, "token_required": BOOL}`,
written once the socket is bound and removed at shutdown. `announced_server(root)` gives the URL of
a server announced in `root` whose process is alive and accepts a connection; an announcement of a process that is gone
(killed before it could withdraw it) is removed and skipped. An announcement is read as hostile
input: a small regular file (not followed through a link), a JSON object of that shape with an
`http://` URL on a loopback host and a positive pid; anything else is skipped (and logged).
"""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from ..small_files import read_small_json

log = logging.getLogger("leanindex.service")

#: The folder of a root holding the announcements of its running servers.
SERVING_FOLDER = "serving"
#: The largest announcement read (bytes); a real one is under 100 bytes.
MAX_ANNOUNCEMENT_BYTES = 4096
#: Hosts an announced URL may name: a server announced in a root answers this machine only.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
#: Seconds to wait for an announced server to accept a connection before opening the catalogs.
CONNECT_TIMEOUT_S = 0.2
#: Announcements tried at most, newest first: a folder of stale ones cannot slow a command down.
MAX_TRIED = 4
#: Above any process id a kernel gives (Linux's `pid_max` is at most 2**22).
_PID_LIMIT = 2**31


def announcement_path(root: Path, pid: int) -> Path:
    """`ROOT/serving/<pid>.json`, the announcement of the server process `pid`."""
    return root / SERVING_FOLDER / f"{pid}.json"


def announce(root: Path, host: str, port: int, token_required: bool) -> Path | None:
    """Write this process's announcement for a server bound to `host`:`port`; return its path,
    or None when `host` is not a loopback address (a server reachable from elsewhere is not
    offered to local commands) or the root cannot be written to (logged; commands then open the
    catalogs themselves, as without a server)."""
    if host not in LOOPBACK_HOSTS:
        return None
    shown = f"[{host}]" if ":" in host else host
    path = announcement_path(root, os.getpid())
    text = json.dumps({"url": f"http://{shown}:{port}", "pid": os.getpid(), "token_required": token_required})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as error:
        log.warning("cannot announce the server in %s (%s): local commands will open the catalogs themselves", root, error.strerror)
        return None
    return path


def withdraw(path: Path | None) -> None:
    """Remove an announcement written by `announce` (nothing when `path` is None or gone)."""
    if path is not None:
        path.unlink(missing_ok=True)


def announced_server(root: Path, token_available: bool) -> tuple[str, bool, str] | None:
    """(URL, whether it needs the token, the announcement's file name) of a live server announced in
    `root` that this caller can use (one that needs no token, or any when `token_available`), the
    most recently announced first, at most `MAX_TRIED` of them; None when there is none.
    Announcements of processes that are gone are removed."""
    folder = root / SERVING_FOLDER
    try:
        entries = sorted(folder.glob("*.json"), key=_modified, reverse=True)
    except OSError:
        return None
    for path in entries[:MAX_TRIED]:
        announced = _read(path)
        if announced is None:
            continue
        url, pid, token_required = announced
        if not _alive(pid):
            path.unlink(missing_ok=True)
            continue
        if token_required and not token_available:
            continue
        if not _accepts(url):
            continue  # stopping, or its port taken over: the catalogs are opened locally instead
        return url, token_required, path.name
    return None


def _accepts(url: str) -> bool:
    """Whether a TCP connection to `url`'s loopback host and port is accepted within
    `CONNECT_TIMEOUT_S` (a refused one fails at once on this machine)."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def _modified(path: Path) -> int:
    try:
        return path.lstat().st_mtime_ns
    except OSError:
        return 0


def _read(path: Path) -> tuple[str, int, bool] | None:
    """(url, pid, token_required) of one announcement, or None (logged) when it is not one."""
    try:
        data = read_small_json(path, MAX_ANNOUNCEMENT_BYTES)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        url, pid, token_required = data["url"], data["pid"], data["token_required"]
        if not isinstance(url, str):
            raise ValueError("its url is not text")
        parts = urlsplit(url)
        if (
            parts.scheme != "http"
            or parts.hostname not in LOOPBACK_HOSTS
            or parts.port is None
            or parts.path not in ("", "/")
            or parts.username is not None
            or type(pid) is not int
            or not 0 < pid < _PID_LIMIT
            or type(token_required) is not bool
        ):
            raise ValueError("not an announcement")
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("skipping %s: %s", path.name, error)
        return None
    return url, pid, token_required


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, though not ours to judge
    return True
