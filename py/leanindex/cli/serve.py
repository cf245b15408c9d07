"""`leanindex serve` (HTTP API + MCP over streamable HTTP) and `leanindex mcp` (MCP over stdio)."""

from __future__ import annotations

import logging
import os

import anyio
import click

from ..engine import Engine
from ..service.config import TOKEN_ENV, ServiceConfig
from ..service.gate import CallGate
from ..service.logs import configure_logging
from ..service.mcp import build_mcp_server, serve_stdio
from ..service.tools import query_tools
from . import main
from .output import root_option

log = logging.getLogger("leanindex.cli")

_defaults = ServiceConfig()
time_budget_option = click.option(
    "--time-budget", "time_budget_s", type=click.FloatRange(min=0, min_open=True), default=_defaults.time_budget_s,
    show_default=True, help="Seconds one engine call may take before the caller gets `timeout`.",
)
max_concurrent_option = click.option(
    "--max-concurrent", type=click.IntRange(min=0), default=_defaults.max_concurrent, show_default=True,
    help="Engine calls allowed at once; one more gets `busy` at once (never queued).",
)


def _open_engine(root: str) -> Engine:
    engine = Engine(root)
    profiles = engine.profiles()
    if profiles:
        log.info("serving profiles %s from %s", ", ".join(p.upper() for p in profiles), engine.root)
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
def serve(root: str, host: str, port: int, max_body_bytes: int, time_budget_s: float, max_concurrent: int, cors_origins: tuple[str, ...]) -> None:
    """Serve the HTTP API and MCP (streamable HTTP, at /mcp) for every profile under ROOT.

    When the environment variable LEANINDEX_TOKEN is set, every route but /healthz requires
    `Authorization: Bearer <token>`. Logs (JSON lines, one access line per request) go to stderr.
    """
    import uvicorn

    from ..service.http import create_app

    configure_logging()
    config = ServiceConfig(
        max_body_bytes=max_body_bytes,
        time_budget_s=time_budget_s,
        max_concurrent=max_concurrent,
        token=os.environ.get(TOKEN_ENV) or None,
        cors_origins=cors_origins,
        host=host,
    )
    engine = _open_engine(root)
    try:
        app = create_app(engine, config)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_config=None,
                access_log=False,
                # Open MCP streams would otherwise hold shutdown forever.
                timeout_graceful_shutdown=5,
            )
        )
        try:
            server.run()
        except KeyboardInterrupt:
            # uvicorn re-raises the Ctrl-C it already answered with a graceful shutdown.
            pass
    finally:
        engine.close()


@main.command()
@root_option
@time_budget_option
@max_concurrent_option
def mcp(root: str, time_budget_s: float, max_concurrent: int) -> None:
    """Serve the MCP tools over stdio for every profile under ROOT.

    stdout carries protocol frames only; logs (JSON lines) go to stderr.
    """
    configure_logging()
    engine = _open_engine(root)
    try:
        server = build_mcp_server(query_tools(engine, CallGate(max_concurrent, time_budget_s)))
        anyio.run(serve_stdio, server)
    finally:
        engine.close()
