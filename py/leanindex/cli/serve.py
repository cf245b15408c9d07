"""`leanindex serve` (HTTP API + MCP over streamable HTTP) and `leanindex mcp` (MCP over stdio)."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..service.config import TOKEN_ENV, ServiceConfig
from . import main
from .batch import checker_backend, with_ray_options
from .lazy import Engine
from .output import handles_errors, root_option
from .shown import TOOL_NAMINGS

if TYPE_CHECKING:
    from ..checker.backend import CheckerBackend
    from ..tools import ToolNaming

log = logging.getLogger("leanindex.cli")
F = TypeVar("F", bound=Callable[..., Any])

# The settings' defaults, read off the dataclass: building one would load the tools for its checks.
_defaults = SimpleNamespace(**{f.name: f.default for f in dataclasses.fields(ServiceConfig) if f.default is not dataclasses.MISSING})
time_budget_option = click.option(
    "--time-budget", "time_budget_s", type=click.FloatRange(min=0, min_open=True), default=_defaults.time_budget_s,
    show_default=True, help="Seconds one engine call may take before the caller gets `timeout`.",
)
max_concurrent_option = click.option(
    "--max-concurrent", type=click.IntRange(min=1), default=_defaults.max_concurrent, show_default=True,
    help="Engine calls allowed at once; one more gets `busy` at once (never queued).",
)


tool_names_option = click.option(
    "--tool-names", type=click.Choice(TOOL_NAMINGS), default=_defaults.tool_names, show_default=True,
    help="List MCP tools under their dotted names (lean.check), underscore names (lean_check, for clients that refuse dots), or both (each tool twice).",
)
check_options = [
    click.option("--check", "check_profiles", multiple=True, metavar="PROFILE=PROJECT", help="Enable lean.check for PROFILE, its REPLs started in the Lake project PROJECT (repeatable)."),
    click.option("--check-repl", type=click.Path(file_okay=False), default=None, help="An already built REPL checkout (binary at .lake/build/bin/repl), needed with --check."),
    click.option("--check-lake", default="lake", show_default=True, help="The lake executable that launches the REPLs."),
    click.option("--check-workers", type=click.IntRange(1, 64), default=1, show_default=True, help="Warm REPLs per checked profile."),
    click.option("--allow-unsafe-commands", is_flag=True, help="Do not refuse verdict-forging commands (answers say they are not protected)."),
]


def with_check_options(command: F) -> F:
    """Add the checker options (and `--ray`, to back them by a cluster) to a server command."""
    for option in reversed(check_options):
        command = option(command)
    return with_ray_options(command)


def open_checker(
    engine: Engine, check_profiles: tuple[str, ...], check_repl: str | None, check_lake: str, check_workers: int, allow_unsafe_commands: bool,
    **ray: Any,
) -> CheckerBackend | None:
    """The checker for `--check PROFILE=PROJECT ...` (profiles under `engine.root`, whose
    catalogs answer its unknown-name suggestions), or None without any (checking off); with
    `--ray`, the Ray front over actors each running that checker (`batch.checker_backend`).

    Raises `click.UsageError` for a malformed `--check` or a missing `--check-repl`, and
    `LeanIndexError` from `CheckerConfig.for_profile` (e.g. `unknown_environment` for a profile
    with no manifest under ROOT)."""
    if not check_profiles:
        return None
    from ..checker import CheckerConfig

    if check_repl is None:
        raise click.UsageError("--check needs --check-repl DIR (an already built REPL checkout)")
    configs = []
    for item in check_profiles:
        profile, sep, project = item.partition("=")
        if not sep or not profile or not project:
            raise click.UsageError(f"--check expects PROFILE=PROJECT, got {item!r}")
        configs.append(
            CheckerConfig.for_profile(
                engine.root, profile, project_dir=project, repl_dir=check_repl, lake_path=check_lake,
                workers=check_workers, allow_unsafe_commands=allow_unsafe_commands,
            )
        )
    return checker_backend(configs, root=engine.root, close_names=engine.close_names, **ray)


def _token() -> str | None:
    """The bearer token from LEANINDEX_TOKEN; None when unset. Set but empty is refused rather
    than read as "no token", which would silently turn authentication off."""
    token = os.environ.get(TOKEN_ENV)
    if token is not None and not token.strip():
        raise click.UsageError(f"{TOKEN_ENV} is set but empty; unset it to serve without a token")
    return token


def _open_engine(root: str) -> Engine:
    from ..identity import display_profile  # pydantic models: not for `--help`

    engine = Engine(root)
    profiles = engine.profiles()
    if profiles:
        log.info("serving profiles %s from %s", ", ".join(display_profile(p) for p in profiles), engine.root)
    else:
        log.warning("no profile under %s (expected manifests/<profile>.json and catalog/<profile>/)", engine.root)
    return engine


@main.command()
@root_option
@click.option("--host", default=_defaults.host, show_default=True, help="Address to bind; loopback by default.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="TCP port (0: any free port).")
@click.option("--max-body-bytes", type=click.IntRange(min=0), default=_defaults.max_body_bytes, show_default=True, help="Largest request body accepted (bytes).")
@time_budget_option
@max_concurrent_option
@click.option("--cors-origin", "cors_origins", multiple=True, help="Origin allowed by CORS (repeatable); CORS is off without one.")
@click.option(
    "--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
    help="A host name (no port) clients may reach the server by, besides localhost and the --host address (repeatable); any other Host header gets 421.",
)
@click.option(
    "--request-read-timeout", "request_read_timeout_s", type=click.FloatRange(min=0, min_open=True), default=_defaults.request_read_timeout_s,
    show_default=True, help="Seconds a request may take to arrive in full; then its connection is closed.",
)
@click.option(
    "--keep-alive-timeout", "keep_alive_timeout_s", type=click.IntRange(min=1), default=_defaults.keep_alive_timeout_s,
    show_default=True, help="Seconds an idle connection is kept after its last answer.",
)
@click.option(
    "--max-connections", type=click.IntRange(min=1), default=_defaults.max_connections, show_default=True,
    help="Connections and requests in progress at once; past them a request gets 429 `busy`.",
)
@tool_names_option
@with_check_options
@handles_errors(json_flag=None)
def serve(
    root: str, host: str, port: int, max_body_bytes: int, time_budget_s: float, max_concurrent: int, cors_origins: tuple[str, ...],
    allowed_hosts: tuple[str, ...], request_read_timeout_s: float, keep_alive_timeout_s: int, max_connections: int, tool_names: ToolNaming,
    check_profiles: tuple[str, ...], check_repl: str | None, check_lake: str, check_workers: int, allow_unsafe_commands: bool,
    **ray: Any,
) -> None:
    """Serve the HTTP API and MCP (streamable HTTP, at /mcp) for every profile under ROOT.

    When the environment variable LEANINDEX_TOKEN is set, every route but /healthz requires
    `Authorization: Bearer <token>`. Every route answers only to localhost, the --host address
    and each --allowed-host name (the Host header; DNS-rebinding guard). Logs (JSON lines, one access line per request) go to stderr.
    Checking (`POST /v1/check`, `lean.check`) is off unless --check PROFILE=PROJECT is given;
    with --ray, checks run on a Ray cluster's checker actors.
    """

    from ..service.http import create_app
    from ..service.logs import configure_logging
    from ..service.serving import AnnouncedServer, server_config

    configure_logging()
    try:
        config = ServiceConfig(
            max_body_bytes=max_body_bytes,
            time_budget_s=time_budget_s,
            max_concurrent=max_concurrent,
            token=_token(),
            cors_origins=cors_origins,
            host=host,
            allowed_hosts=allowed_hosts,
            tool_names=tool_names,
            request_read_timeout_s=request_read_timeout_s,
            keep_alive_timeout_s=keep_alive_timeout_s,
            max_connections=max_connections,
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    engine = _open_engine(root)
    try:
        checker = open_checker(engine, check_profiles, check_repl, check_lake, check_workers, allow_unsafe_commands, **ray)
        app = create_app(engine, config, checker)
        server = AnnouncedServer(server_config(app, config, port), engine.root, token_required=config.token is not None)
        try:
            server.run()
        except KeyboardInterrupt:
            # uvicorn re-raises the Ctrl-C it already answered with a graceful shutdown.
            pass
        finally:
            server.withdraw()
    finally:
        engine.close()


@main.command()
@root_option
@time_budget_option
@max_concurrent_option
@tool_names_option
@with_check_options
@handles_errors(json_flag=None)
def mcp(
    root: str, time_budget_s: float, max_concurrent: int, tool_names: ToolNaming,
    check_profiles: tuple[str, ...], check_repl: str | None, check_lake: str, check_workers: int, allow_unsafe_commands: bool,
    **ray: Any,
) -> None:
    """Serve the MCP tools over stdio for every profile under ROOT.

    stdout carries protocol frames only; logs (JSON lines) go to stderr. With --check, `lean.check`
    is listed too; its REPLs start before the first frame is read and are all stopped when
    stdin closes.
    """
    import anyio

    from ..service.gate import CallGate
    from ..service.logs import configure_logging
    from ..service.mcp import build_mcp_server, serve_stdio
    from ..service.tools import server_tools

    configure_logging()
    engine = _open_engine(root)
    try:
        checker = open_checker(engine, check_profiles, check_repl, check_lake, check_workers, allow_unsafe_commands, **ray)
    except BaseException:
        engine.close()
        raise
    tools = server_tools(engine, CallGate(max_concurrent, time_budget_s), checker)

    async def run() -> None:
        if checker is not None:
            await checker.start()
        try:
            await serve_stdio(build_mcp_server(tools, tool_names))
        finally:
            if checker is not None:
                await checker.close()

    try:
        anyio.run(run)
    finally:
        engine.close()
