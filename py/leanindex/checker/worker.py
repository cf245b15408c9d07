"""One warm REPL: lean-interact's `LeanServer` launched inside a sandbox, with the profile's
header elaborated once; runs a check (submission, then the axiom probe) synchronously.

`IsolatedLeanServer` keeps lean-interact's protocol code (`run`, `_execute_cmd_in_repl`, the
response models) and replaces only how the process is started and stopped: `lake -d <project>
env <repl>` under `unshare`, with a scrubbed environment that pins the project's toolchain
(`ELAN_TOOLCHAIN`, see `isolation.make_sandbox`), a private working directory and HOME, resource
limits, stderr to a file, and its own process group, killed whole.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from lean_interact import Command, LeanREPLConfig, LeanServer, ProofStep
from lean_interact.interface import CommandResponse, LeanError, ProofStepResponse
from pydantic import ValidationError

from ..errors import ErrorCode, LeanIndexError
from ..lake.tools import LakeEnvironment
from .config import CheckerConfig
from .failures import timeout_details
from .fence import FencePlan, read_fence, synced
from .fence import probe_command as fence_probe_command
from .forbidden import ForbiddenUse, find_forbidden
from .isolation import Sandbox, make_sandbox
from .models import StatementFence
from .probe import ProbeResult, Survey, probe_command, read_probe, survey
from .replies import parse_command_response


class IsolatedLeanServer(LeanServer):
    """`LeanServer` whose REPL process runs in a `Sandbox` (see the module docstring)."""

    def __init__(self, repl_config: LeanREPLConfig, checker_config: CheckerConfig):
        self._checker_config = checker_config
        self.sandbox: Sandbox | None = None
        self.pgid: int | None = None
        super().__init__(repl_config)

    def start(self) -> None:
        """Spawn the REPL (replaces `LeanServer.start`); raises `ChildProcessError` when it dies at once."""
        config = self._checker_config
        self.sandbox = make_sandbox(config)
        argv = [
            *self.sandbox.prefix,
            str(config.lake_path),
            "-d",
            str(config.project_dir),
            "env",
            str(config.repl_binary),
        ]
        stderr = open(self.sandbox.workdir / "repl.stderr", "w")
        try:
            self._proc = subprocess.Popen(
                argv,
                cwd=self.sandbox.workdir,
                env=self.sandbox.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                encoding="utf-8",
                text=True,
                bufsize=1,
                start_new_session=True,
                preexec_fn=self.sandbox.preexec,
            )
        finally:
            stderr.close()
        self.pgid = self._proc.pid
        if not self.is_alive():
            self.kill()
            raise ChildProcessError("the REPL exited as soon as it started")

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last `limit` characters the REPL wrote to stderr."""
        if self.sandbox is None:
            return ""
        try:
            return (self.sandbox.workdir / "repl.stderr").read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the REPL's whole process group, reap it, and remove its directory."""
        proc = getattr(self, "_proc", None)
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for stream in (proc.stdin, proc.stdout):
                try:
                    if stream:
                        stream.close()
                except OSError:
                    pass
            self._proc = None
        sandbox = getattr(self, "sandbox", None)
        if sandbox is not None:
            sandbox.remove()


@dataclass(frozen=True)
class RawCheck:
    """What one check produced, before the verdict: the submission's response, its forbidden
    constructs and survey, the probe's answers, and the REPL time in ms."""

    response: CommandResponse
    forbidden: list[ForbiddenUse]
    found: Survey
    probe: ProbeResult
    has_infotree: bool
    check_ms: float
    #: The statement fence per referenced theorem (empty without a reference).
    fence: list[StatementFence] = field(default_factory=list)


@dataclass(frozen=True)
class Prepared:
    """An environment prepared for target checks: its REPL id, the prefix's response (None for
    the header environment itself), the prefix's forbidden commands, whether the REPL
    returned the prefix's info tree, and the reference elaborated before the prefix (its fresh
    names are the ones every candidate run in this environment is compared with)."""

    env: int
    response: CommandResponse | None
    forbidden: list[ForbiddenUse]
    has_infotree: bool
    fence: FencePlan | None = None


@dataclass(frozen=True)
class RawTarget:
    """What a target check produced: the prepared environment, whether it was reused, the REPL
    time spent preparing it (ms, 0 when reused), and each candidate's `RawCheck`."""

    prepared: Prepared
    reused: bool
    prepare_ms: float
    checks: list[RawCheck]


class Worker:
    """A REPL with the profile's header environment; not thread-safe (one check at a time)."""

    def __init__(self, config: CheckerConfig, repl_config: LeanREPLConfig):
        self.config = config
        self._repl_config = repl_config
        self.server: IsolatedLeanServer | None = None
        self.header_env: int | None = None
        #: Where this REPL finds `.olean` files (set by `start`).
        self.search_path: list[Path] = []
        self.checks = 0
        self.tainted = False
        self._lock = threading.Lock()
        self._prepared: OrderedDict[str, Prepared] = OrderedDict()

    def start(self) -> None:
        """Start the REPL, elaborate the header (`import` of each profile import) and read the
        REPL's search path (`repl_search_path`).

        Raises `LeanIndexError(backend_error)` with `details.stage = "header"` when the REPL
        cannot start or the header does not elaborate, `"start"` when the REPL has no search path
        (the worker is then dead and never used).
        """
        try:
            self.server = IsolatedLeanServer(self._repl_config, self.config)
        except (ChildProcessError, OSError) as error:
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, f"cannot start the REPL: {error}", {"stage": "start"}) from None
        header = "\n".join(f"import {module}" for module in self.config.imports)
        try:
            response = self.server.run(Command(cmd=header), timeout=self.config.header_timeout_s)
        except Exception as error:  # every failure of the header is a failed start
            tail = self._stderr_tail()
            self.close()
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR,
                f"the header {header!r} did not elaborate: {type(error).__name__}: {error}",
                {"stage": "header", "stderr": tail},
            ) from None
        errors = [m.data for m in getattr(response, "messages", []) if m.severity == "error"]
        if isinstance(response, LeanError) or errors:
            self.close()
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR,
                f"the header {header!r} did not elaborate",
                {"stage": "header", "errors": errors or [getattr(response, "message", "")]},
            )
        self.header_env = response.env
        try:
            self.search_path = repl_search_path(self.server.pgid)
        except LeanIndexError:
            self.close()
            raise

    @property
    def alive(self) -> bool:
        """Whether the REPL process is running."""
        return self.server is not None and self.server.is_alive()

    def rss_mb(self) -> float:
        """Resident size of the REPL's process tree in MiB (lean-interact's `get_memory_usage`)."""
        return self.server.get_memory_usage() if self.server is not None else 0.0

    def check(self, body: str, timeout_s: float, fence: FencePlan | None = None) -> RawCheck:
        """Run `body` in the header environment, then the axiom probe, within `timeout_s` overall.
        With `fence`, the reference command runs first (the submission runs in its environment)
        and the fence probe last (`leanindex.checker.fence`).

        Raises `LeanIndexError`: `timeout` (the process group was killed), `backend_error` (the
        REPL died, answered garbage, refused the command, or a probe's answer was out of
        sync); after either the worker is dead and must be replaced. With `fence`, also
        `invalid_request` (the reference does not elaborate) and `forbidden_command` (it holds a
        command that can forge a verdict; the worker is retired).
        """
        assert self.server is not None and self.header_env is not None
        with self._lock:
            self.checks += 1
            started = time.perf_counter()
            deadline = started + timeout_s
            env = self._reference_env(fence, deadline, timeout_s) if fence is not None else self.header_env
            return self._check_in(body, env, deadline, timeout_s, fence)

    def _reference_env(self, fence: FencePlan, deadline: float, budget: float) -> int:
        """Elaborate the reference command in the header environment; its environment's id."""
        assert self.header_env is not None
        response = self._run(Command(cmd=fence.text, env=self.header_env, infotree="full"), deadline, budget)
        forbidden = find_forbidden(response.infotree or [])
        if forbidden:
            # Elaboration-time code already ran in this process: never reuse it.
            self.tainted = True
            if not self.config.allow_unsafe_commands:
                raise LeanIndexError(
                    ErrorCode.FORBIDDEN_COMMAND,
                    f"the reference uses {', '.join(f.command for f in forbidden)}, which can change how proofs are checked",
                    {"commands": [{"command": f.command, "line": f.line, "column": f.column} for f in forbidden], "stage": "reference"},
                )
        errors = [
            {"line": m.start_pos.line, "column": m.start_pos.column, "text": m.data} for m in response.messages if m.severity == "error"
        ]
        if errors:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"the reference does not elaborate: {errors[0]['text']}", {"errors": errors, "stage": "reference"})
        return response.env

    def check_target(
        self, key: str, prefix: str, candidates: list[str], timeout_s: float, fence: FencePlan | None = None, namespace: tuple[str, ...] = ()
    ) -> RawTarget:
        """Run each candidate (then its axiom probe) in the environment `prefix` leaves, within
        `timeout_s` overall. The prefix runs once in the header environment (after the
        reference command, with `fence`) and its environment is kept under `key` among this
        worker's `prepared_entries` most recently used ones; an empty prefix is the header (or
        reference) environment itself. A prepared environment keeps the fence plan it was made
        with; `namespace` is the namespaces open at the target. Raises as `check`."""
        assert self.server is not None and self.header_env is not None
        with self._lock:
            self.checks += len(candidates)
            started = time.perf_counter()
            deadline = started + timeout_s
            prepared = self._prepared.get(key)
            reused = prepared is not None
            if prepared is None:
                prepared = self._prepare(prefix, deadline, timeout_s, fence)
                self._remember(key, prepared)
            else:
                self._prepared.move_to_end(key)
            prepare_ms = (time.perf_counter() - started) * 1000
            raws = [self._check_in(candidate, prepared.env, deadline, timeout_s, prepared.fence, namespace) for candidate in candidates]
            return RawTarget(prepared=prepared, reused=reused, prepare_ms=0.0 if reused else prepare_ms, checks=raws)

    def check_sequence(self, commands: list[str], timeout_s: float, accepts: Callable[[RawCheck], bool]) -> list[RawCheck]:
        """Run `commands` in order from the header environment, each followed by its axiom probe;
        the environment moves on past a command only when `accepts` (the verdict) says so. Raises
        as `check`, and whatever `accepts` raises."""
        assert self.server is not None and self.header_env is not None
        with self._lock:
            self.checks += len(commands)
            deadline = time.perf_counter() + timeout_s
            env, raws = self.header_env, []
            for command in commands:
                raw = self._check_in(command, env, deadline, timeout_s)
                raws.append(raw)
                if accepts(raw):
                    env = raw.response.env
            return raws

    def _prepare(self, prefix: str, deadline: float, budget: float, fence: FencePlan | None = None) -> Prepared:
        assert self.header_env is not None
        start = self._reference_env(fence, deadline, budget) if fence is not None else self.header_env
        if not prefix.strip():
            return Prepared(env=start, response=None, forbidden=[], has_infotree=True, fence=fence)
        response = self._run(Command(cmd=prefix, env=start, infotree="full"), deadline, budget)
        forbidden = find_forbidden(response.infotree or [])
        if forbidden:
            # Elaboration-time code already ran in this process: never reuse it.
            self.tainted = True
        return Prepared(env=response.env, response=response, forbidden=forbidden, has_infotree=response.infotree is not None, fence=fence)

    def _remember(self, key: str, prepared: Prepared) -> None:
        if self.config.prepared_entries == 0:
            return
        self._prepared[key] = prepared
        # The REPL itself never frees an environment; the bound keeps this index small, and the
        # pool's resident-size recycling bounds the process.
        while len(self._prepared) > self.config.prepared_entries:
            self._prepared.popitem(last=False)

    def holds(self, key: str) -> bool:
        """Whether this worker has the environment `key` prepared."""
        return key in self._prepared

    def _check_in(
        self, body: str, env: int, deadline: float, budget: float, fence: FencePlan | None = None, namespace: tuple[str, ...] = ()
    ) -> RawCheck:
        started = time.perf_counter()
        response = self._run(Command(cmd=body, env=env, infotree="full"), deadline, budget)
        trees = response.infotree or []
        forbidden = find_forbidden(trees)
        if forbidden:
            # Elaboration-time code already ran in this process: never reuse it.
            self.tainted = True
        found = survey(trees)
        nonce = secrets.randbelow(10**12) + 10**12
        text, by_line = probe_command(found, nonce)
        probe_response = self._run(Command(cmd=text, env=response.env), deadline, budget)
        probe = read_probe(probe_response, nonce, by_line)
        if not probe.synced:
            self.close()
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR,
                "the REPL's answer to the axiom probe is out of sync; the worker was discarded",
                {"stage": "probe"},
            )
        fenced: list[StatementFence] = []
        if fence is not None:
            fence_nonce = secrets.randbelow(10**12) + 10**12
            fence_text, lines = fence_probe_command(fence.theorems, found, fence_nonce)
            fence_response = self._run(Command(cmd=fence_text, env=response.env), deadline, budget)
            if not synced(fence_response, fence_nonce):
                self.close()
                raise LeanIndexError(
                    ErrorCode.BACKEND_ERROR,
                    "the REPL's answer to the statement fence probe is out of sync; the worker was discarded",
                    {"stage": "fence"},
                )
            fenced = read_fence(fence_response, lines, fence.theorems, found, namespace)
        return RawCheck(
            response=response,
            forbidden=forbidden,
            found=found,
            probe=probe,
            has_infotree=response.infotree is not None,
            check_ms=(time.perf_counter() - started) * 1000,
            fence=fenced,
        )

    def _run(self, command: Command, deadline: float, budget: float) -> CommandResponse:
        response = self._exchange(command, deadline, budget)
        if isinstance(response, LeanError):
            self.close()
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, f"the REPL refused the command: {response.message}", {})
        assert isinstance(response, CommandResponse)
        return response

    def _exchange(self, request: Command | ProofStep, deadline: float, budget: float) -> CommandResponse | ProofStepResponse | LeanError:
        """Send one request within what is left of `budget` and read the answer. Raises
        `LeanIndexError`: `timeout` (the process group was killed) or `backend_error` (dead REPL,
        garbage); the worker is then closed."""
        assert self.server is not None
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            self.close()
            raise LeanIndexError(ErrorCode.TIMEOUT, f"the check did not finish within {budget:g} s", timeout_details(budget))
        try:
            if isinstance(request, ProofStep):
                raw = self.server.run_dict(request.model_dump(exclude_none=True, by_alias=True), timeout=remaining)
                response: CommandResponse | ProofStepResponse | LeanError = (
                    LeanError.model_validate(raw) if set(raw) == {"message"} else ProofStepResponse.model_validate(raw)
                )
            else:
                response = self._run_lenient(request, remaining)
        except TimeoutError:
            self.close()
            raise LeanIndexError(
                ErrorCode.TIMEOUT, f"the check did not finish within {budget:g} s; its REPL was killed", timeout_details(budget)
            ) from None
        except (json.JSONDecodeError, ValidationError) as error:
            tail = self._stderr_tail()
            self.close()
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, f"the REPL answered something that is not a REPL response: {_short(error)}", {"stderr": tail}
            ) from None
        except Exception as error:  # a dead or closed REPL surfaces as several exception types
            tail = self._stderr_tail()
            self.close()
            raise LeanIndexError(ErrorCode.BACKEND_ERROR, f"the REPL stopped: {_short(error)}", {"stderr": tail}) from None
        return response

    def _run_lenient(self, command: Command, timeout: float) -> CommandResponse | LeanError:
        """`LeanServer.run` for a `Command`, except that the answer is read by
        `replies.parse_command_response`, which accepts the info-tree nodes lean-interact's
        models refuse (unlisted kinds, holes, anonymous elaborators)."""
        assert self.server is not None
        request = self.server._augment_request(command)
        raw = self.server.run_dict(request.model_dump(exclude_none=True, by_alias=True), timeout=timeout)
        return parse_command_response(raw)

    def open_proof(self, body: str, timeout_s: float, all_tactics: bool = False) -> tuple[CommandResponse, list[ForbiddenUse]]:
        """Run `body` in the header environment (info tree included; with `all_tactics`, the
        REPL's per-tactic list with used constants too) for its proof states and tactics;
        returns the response and the forbidden commands found (the worker is then tainted).
        Raises as `check`."""
        assert self.server is not None and self.header_env is not None
        with self._lock:
            self.checks += 1
            deadline = time.perf_counter() + timeout_s
            command = Command(cmd=body, env=self.header_env, infotree="full", all_tactics=all_tactics or None)
            response = self._run(command, deadline, timeout_s)
            forbidden = find_forbidden(response.infotree or [])
            if forbidden:
                # Elaboration-time code already ran in this process: never reuse it.
                self.tainted = True
            return response, forbidden

    def step(self, repl_state: int, tactic: str, timeout_s: float) -> ProofStepResponse | LeanError:
        """Run `tactic` on REPL proof state `repl_state`; a `LeanError` is the REPL's refusal
        (Lean's parse error, or an unknown state). Raises `timeout`/`backend_error` as `check`."""
        assert self.server is not None
        with self._lock:
            self.checks += 1
            deadline = time.perf_counter() + timeout_s
            answer = self._exchange(ProofStep(proof_state=repl_state, tactic=tactic), deadline, timeout_s)
            assert not isinstance(answer, CommandResponse)
            return answer

    def _stderr_tail(self) -> str:
        server = self.server
        return server.stderr_tail() if server is not None else ""

    def close(self) -> None:
        """Kill the REPL's process group (idempotent)."""
        server, self.server = self.server, None
        if server is not None:
            server.kill()


def repl_search_path(root_pid: int | None) -> list[Path]:
    """Where the REPL started as process `root_pid` looks for `.olean` files.

    `lake env` starts the REPL with `LEAN_PATH` and `LEAN_SYSROOT` set; the first process of the
    tree (`root_pid`, then its descendants, oldest first) whose environment has either is the
    REPL, and its search path is `LEAN_PATH`'s entries then `<LEAN_SYSROOT>/lib/lean`
    (`lake.tools.LakeEnvironment.search_path`, Lean's `initSearchPath`), relative entries taken
    from its working directory as Lean does. Raises `LeanIndexError(backend_error)` (stage
    `start`) when no process of the tree has them, so imports could not be resolved.
    """
    processes: list[psutil.Process] = []
    if root_pid is not None:
        try:
            root = psutil.Process(root_pid)
            processes = [root, *sorted(root.children(recursive=True), key=lambda p: p.create_time())]
        except psutil.Error:
            processes = []
    for process in processes:
        try:
            environ, cwd = process.environ(), Path(process.cwd())
        except psutil.Error:
            continue
        if "LEAN_PATH" in environ or "LEAN_SYSROOT" in environ:
            entries = [cwd / entry for entry in environ.get("LEAN_PATH", "").split(os.pathsep) if entry]
            sysroot = environ.get("LEAN_SYSROOT") or None
            return LakeEnvironment(lean_path=entries, sysroot=cwd / sysroot if sysroot else None).search_path()
    raise LeanIndexError(
        ErrorCode.BACKEND_ERROR,
        "no process of the REPL has LEAN_PATH or LEAN_SYSROOT, so its imports cannot be resolved (is the lake a Lake?)",
        {"stage": "start"},
    )


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:limit]
