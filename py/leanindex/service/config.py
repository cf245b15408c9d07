"""Settings of the long-running servers (`leanindex serve`, `leanindex mcp`)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from ..tool_naming import DEFAULT_TOOL_NAMING, TOOL_NAMINGS, ToolNaming

#: Environment variable holding the optional bearer token of `leanindex serve`.
TOKEN_ENV = "LEANINDEX_TOKEN"

#: Host names every server answers to: the loopback names (a DNS-rebinding page cannot take them).
LOCAL_HOST_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")

_HOST_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_-]{1,63})*$")


def normalize_host_name(name: str) -> str:
    """A host name as the allow-list compares it: lower case, without a trailing `.` or IPv6
    brackets (`[::1]` -> `::1`). Raises `ValueError` for anything that is not a DNS name or an
    IP address (a port, a scheme, a path, `*`, spaces)."""
    value = name.strip().lower().rstrip(".")
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    if not _HOST_NAME.match(value):
        raise ValueError(f"allowed host {name!r} is not a host name or an IP address (give it without port or scheme)")
    return value


@dataclass(frozen=True)
class ServiceConfig:
    """Limits and access settings shared by the HTTP API and the MCP tools.

    - `max_body_bytes`: largest request body accepted by the HTTP server (bytes); larger ones get
      413 `payload_too_large` before they are parsed.
    - `time_budget_s`: wall-clock budget of one engine call (seconds); past it the caller gets
      `timeout` (HTTP 504).
    - `max_concurrent`: engine calls allowed to run at once; one more is refused at once with
      `busy` (HTTP 429), never queued. 0 refuses every call.
    - `token`: when set, every HTTP route but `/healthz` (and `/mcp`) requires
      `Authorization: Bearer <token>`.
    - `cors_origins`: origins allowed by CORS; empty means no CORS headers at all.
    - `host`: the address served.
    - `allowed_hosts`: host names (no port) the server answers to besides `LOCAL_HOST_NAMES` and
      `host`; a request whose `Host` header names another gets 421 `host_not_allowed` on every
      route (DNS-rebinding guard; `host_names()` is the whole list).
    - `tool_names`: the names MCP lists tools under: `dotted` (default, `DEFAULT_TOOL_NAMING`),
      `underscore` or `both` (every tool twice).

    Connection limits of `leanindex serve` (`service.serving`; uvicorn's own settings where
    it has them):

    - `request_read_timeout_s` (default 10 s): a request's head and body must arrive in full
      within this many seconds of its first byte (of the connection's opening, for the first
      request); else the connection is closed. uvicorn 0.54 has no such timeout: without it, a
      connection that never sends a request is held forever.
    - `keep_alive_timeout_s` (default 5 s, uvicorn's `timeout_keep_alive`): an idle connection is
      closed this long after its last answer.
    - `max_header_bytes` (default 16384): a request head (request line and header lines) larger
      than this is refused with 400 `invalid_request`.
    - `max_connections` (default 512, uvicorn's `limit_concurrency`): past this many open
      connections or requests in progress, a request is refused at once with 429 `busy`.
    """

    max_body_bytes: int = 1_048_576
    time_budget_s: float = 10.0
    max_concurrent: int = 32
    token: str | None = None
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    host: str = "127.0.0.1"
    allowed_hosts: tuple[str, ...] = field(default_factory=tuple)
    tool_names: ToolNaming = DEFAULT_TOOL_NAMING
    request_read_timeout_s: float = 10.0
    keep_alive_timeout_s: int = 5
    max_header_bytes: int = 16_384
    max_connections: int = 512

    def __post_init__(self) -> None:
        if self.max_body_bytes < 0:
            raise ValueError("max_body_bytes must be >= 0")
        if not self.time_budget_s > 0:
            raise ValueError("time_budget_s must be > 0")
        if self.max_concurrent < 0:
            raise ValueError("max_concurrent must be >= 0")
        if self.tool_names not in TOOL_NAMINGS:
            raise ValueError("tool_names must be dotted, underscore or both")
        if self.token is not None and not self.token:
            raise ValueError("token must be non-empty when given")
        for name in self.allowed_hosts:
            normalize_host_name(name)
        if not self.request_read_timeout_s > 0:
            raise ValueError("request_read_timeout_s must be > 0")
        if self.keep_alive_timeout_s < 1:
            raise ValueError("keep_alive_timeout_s must be >= 1")
        if self.max_header_bytes < 1024:
            raise ValueError("max_header_bytes must be >= 1024")
        if self.max_connections < 1:
            raise ValueError("max_connections must be >= 1")

    def host_names(self) -> frozenset[str]:
        """Every host name a request's `Host` header may name (normalised by
        `normalize_host_name`): `LOCAL_HOST_NAMES`, the bound address and `allowed_hosts`. The
        one list of the HTTP app and of the MCP transport's DNS-rebinding guard."""
        names = {normalize_host_name(name) for name in (*LOCAL_HOST_NAMES, *self.allowed_hosts)}
        try:
            names.add(normalize_host_name(self.host))
        except ValueError:
            pass  # a bind address that is no host name (e.g. empty) names no Host
        return frozenset(names)
