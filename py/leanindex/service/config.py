"""Settings of the long-running servers (`leanindex serve`, `leanindex mcp`)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Environment variable holding the optional bearer token of `leanindex serve`.
TOKEN_ENV = "LEANINDEX_TOKEN"


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
    - `host`: the address served, which also decides the MCP transport's DNS-rebinding guard
      (on for loopback addresses).
    - `tool_names`: the names MCP lists tools under: `dotted`, `underscore` or `both`.
    """

    max_body_bytes: int = 1_048_576
    time_budget_s: float = 10.0
    max_concurrent: int = 32
    token: str | None = None
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    host: str = "127.0.0.1"
    tool_names: str = "both"

    def __post_init__(self) -> None:
        if self.max_body_bytes < 0:
            raise ValueError("max_body_bytes must be >= 0")
        if not self.time_budget_s > 0:
            raise ValueError("time_budget_s must be > 0")
        if self.max_concurrent < 0:
            raise ValueError("max_concurrent must be >= 0")
        if self.tool_names not in ("dotted", "underscore", "both"):
            raise ValueError("tool_names must be dotted, underscore or both")
        if self.token is not None and not self.token:
            raise ValueError("token must be non-empty when given")
