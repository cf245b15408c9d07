"""`leanindex serve` and `leanindex api export` as users run them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from service_support import free_port, sample_root, wait_until_serving  # noqa: F401  (fixture)




def test_serve_reads_the_token_and_serves_http_and_mcp(sample_root: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(sample_root), "--port", str(port)],
        env={**os.environ, "LEANINDEX_TOKEN": "from-env"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, url)
        assert httpx.get(f"{url}/v1/environments").status_code == 401
        listed = httpx.get(f"{url}/v1/environments", headers={"Authorization": "Bearer from-env"}).json()
        assert [e["environment"] for e in listed["environments"]] == ["SAMPLE"]

        async def tools() -> list[str]:
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer from-env"}, timeout=30) as http:
                async with Client(streamable_http_client(f"{url}/mcp", http_client=http), cache=None) as client:
                    return [t.name for t in (await client.list_tools()).tools]

        assert "lean.declaration.search" in anyio.run(tools)
    finally:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert stdout == b""
    access = [json.loads(line) for line in stderr.decode().splitlines() if '"request_id"' in line]
    seen = {(a["path"], a["route"], a["status"]) for a in access}
    assert seen >= {("/v1/environments", "-", 401), ("/v1/environments", "/v1/environments", 200), ("/mcp", "/mcp", 200)}


def test_every_search_request_field_is_a_search_option() -> None:
    """The command line builds its search options from the request model: a field without an
    option would be a filter the CLI cannot give."""
    from leanindex.cli.query import search
    from leanindex.models import SearchRequest

    assert {p.name for p in search.params} >= set(SearchRequest.model_fields)
