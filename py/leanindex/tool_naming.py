"""How MCP tools are named (`--tool-names`), in a module of its own so that the servers' settings
and `--help` read it without loading the tools' models (`leanindex.tools` re-exports it)."""

from __future__ import annotations

from typing import Literal, get_args

#: How tools are named over MCP: the dotted name (`lean.check`), its underscore alias
#: (`lean_check`, for clients that refuse dots), or both.
ToolNaming = Literal["dotted", "underscore", "both"]
TOOL_NAMINGS: tuple[str, ...] = get_args(ToolNaming)

#: The naming of every server and of `api/mcp-tools.json` unless asked otherwise: each tool once,
#: under its dotted name (the design's names); `underscore` for clients that refuse dots; `both`
#: only on request (it lists every tool twice).
DEFAULT_TOOL_NAMING: ToolNaming = "dotted"
