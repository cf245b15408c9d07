"""How a REPL process is confined: scrubbed environment, private working directory and HOME,
resource limits, and a new network (and PID) namespace through `unshare` where it works.

Nothing here is a sandbox against a determined local attacker (see docs/checker.md, "Threat
model"); it removes the easy ways elaboration-time code could reach the network, the caller's
files and secrets in environment variables, or the machine's memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import resource
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ErrorCode, LeanIndexError
from ..lake.project import read_toolchain
from .config import CheckerConfig
from .models import Isolation
from .scratch import server_scratch

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if os.uname().sysname == "Linux" else None

#: Variables passed through to the REPL unchanged when set (elan and lake need them to find
#: toolchains; nothing else of the caller's environment reaches Lean). `ELAN_TOOLCHAIN` is not
#: among them: the sandbox sets it to the project's pin (see `make_sandbox`).
PASSTHROUGH_ENV = ("ELAN_HOME", "LANG", "LC_ALL")


@functools.cache
def unshare_prefix() -> tuple[str, ...] | None:
    """The `unshare` arguments that give a new network and PID namespace on this machine, or
    None when none works (tried once per process: as is, then mapping the current user, then
    mapping root, which needs unprivileged user namespaces)."""
    binary = shutil.which("unshare")
    if binary is None:
        return None
    base = (binary, "--net", "--pid", "--fork", "--kill-child")
    for extra in ((), ("--map-current-user",), ("--map-root-user",)):
        argv = base + extra
        try:
            done = subprocess.run([*argv, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return argv + ("--",)
    return None


@dataclass
class Sandbox:
    """The confinement of one REPL process: argv prefix, environment, directory, rlimits."""

    prefix: tuple[str, ...]
    env: dict[str, str]
    workdir: Path
    rlimits: dict[str, int] = field(default_factory=dict)

    def preexec(self) -> None:
        """In the child between fork and exec: set the resource limits (inherited by `lake`,
        the REPL and anything they start) and ask Linux to SIGKILL the child when the thread
        that started it dies, so a checker killed without cleanup leaves no REPL behind
        (`unshare --kill-child` then takes the REPL with it)."""
        for name, value in self.rlimits.items():
            kind = getattr(resource, name)
            resource.setrlimit(kind, (value, value))
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    def describe(self) -> Isolation:
        """What applied, for the response."""
        return Isolation(
            scrubbed_environment=True,
            private_tmp_home=True,
            rlimits=dict(self.rlimits),
            network_namespace=bool(self.prefix),
            pid_namespace=bool(self.prefix),
        )

    def remove(self) -> None:
        """Delete the private working directory."""
        shutil.rmtree(self.workdir, ignore_errors=True)


def make_sandbox(config: CheckerConfig) -> Sandbox:
    """A fresh sandbox for one REPL process of `config`'s profile.

    The working directory (also HOME and TMPDIR) is made under this server's scratch folder
    (`scratch.server_scratch`), which the next start removes if this process is killed.
    RLIMIT_NPROC counts every process of the user, so its value is the user's current count
    plus `max_processes`; RLIMIT_CPU bounds the worker's whole life, the per-check wall-clock
    timeout bounds each check.

    `ELAN_TOOLCHAIN` is set to the project's `lean-toolchain` line. elan's proxy
    (`lake` installed by elan) picks the toolchain from `ELAN_TOOLCHAIN` first, and only without
    it from an `elan override` or a `lean-toolchain` file found walking up from the *working
    directory* (elan `src/elan/config.rs`, `Cfg::find_override`, commit b6cec7e1), never from
    `lake -d`; the REPL runs in this private directory, so without the variable elan would pick
    its default toolchain. A `lake` that is not elan's proxy ignores the variable.

    Raises `LeanIndexError(invalid_request)` when the project has no `lean-toolchain`.
    """
    toolchain = read_toolchain(config.project_dir)
    if toolchain is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"the project {config.project_dir} has no lean-toolchain, so the REPL's Lean version cannot be pinned",
            {"project": str(config.project_dir)},
        )
    workdir = Path(tempfile.mkdtemp(prefix=f"leanindex-repl-{config.profile}-", dir=server_scratch()))
    env = {
        "PATH": os.pathsep.join(dict.fromkeys([str(config.lake_path.parent), "/usr/local/bin", "/usr/bin", "/bin"])),
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "ELAN_TOOLCHAIN": toolchain,
    }
    for name in PASSTHROUGH_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    if "ELAN_HOME" not in env:
        elan_home = Path.home() / ".elan"
        if elan_home.is_dir():
            env["ELAN_HOME"] = str(elan_home)
    rlimits: dict[str, int] = {}
    if config.memory_limit_mb is not None:
        rlimits["RLIMIT_AS"] = config.memory_limit_mb * 1024 * 1024
    if config.cpu_limit_s is not None:
        rlimits["RLIMIT_CPU"] = config.cpu_limit_s
    if config.file_size_limit_mb is not None:
        rlimits["RLIMIT_FSIZE"] = config.file_size_limit_mb * 1024 * 1024
    if config.max_processes is not None:
        rlimits["RLIMIT_NPROC"] = _user_process_count() + config.max_processes
    prefix = (unshare_prefix() or ()) if config.network_isolation else ()
    return Sandbox(prefix=tuple(prefix), env=env, workdir=workdir, rlimits=rlimits)


def _user_process_count() -> int:
    """Processes and threads of the current user (what RLIMIT_NPROC counts)."""
    import psutil

    uid = os.getuid()
    total = 0
    for proc in psutil.process_iter(["uids", "num_threads"]):
        try:
            if proc.info["uids"] and proc.info["uids"].real == uid:
                total += proc.info["num_threads"] or 1
        except (psutil.Error, TypeError):
            continue
    return total
