"""The long-running servers over the library: HTTP API (`http`), MCP tools (`mcp`, `tools`),
with their shared limits (`gate`, `config`), metrics, access logs and bearer-token check."""
