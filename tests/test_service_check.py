"""`lean.check` on the servers: `POST /v1/check` and the MCP tool (streamable HTTP and stdio),
answered by a real `Checker` driving the stand-in REPL (tests/standin/) through lean-interact,
plus the checking-off answers and the give-up-on-disconnect wait."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import anyio
import httpx
import jsonschema
import psutil
import pytest
from mcp import Client, StdioServerParameters
from service_support import live_server

from checker_support import STANDIN, make_layout, transcripts_dir
from leanindex.catalog.builder import build_catalog
from leanindex.checker import Checker, CheckerConfig, CheckResponse
from leanindex.engine import Engine
from leanindex.names import name_sort_key
from leanindex.sample import sample_stream_path
from leanindex.service.check import unless_disconnected
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem
SORRY = "def f : Nat := sorry"  # recorded: term_sorry
UNKNOWN = "theorem bar : 1 = 1 := byrfl"  # recorded: invalid_line_break ("Unknown identifier `byrfl`")


def build_test_profile(root: Path) -> None:
    """Profile TEST: the sample declarations under a header importing `Lean`, the header the
    stand-in knows from the recorded `import_lean` transcript, plus `Nat.byrfl` (a copy of
    `Eq.refl` renamed, so that the recorded unknown name `byrfl` has a close catalog name)."""
    lines = sample_stream_path().read_bytes().splitlines()
    header = json.loads(lines[0])
    header["imports"] = ["Lean"]
    records = [json.loads(line) for line in lines[1:]]
    extra = {**next(r for r in records if r.get("name") == "Eq.refl"), "name": "Nat.byrfl", "components": ["Nat", "byrfl"]}
    declarations = sorted([r for r in records if r["record"] == "declaration"] + [extra], key=lambda r: name_sort_key(r["components"]))
    footer = {"record": "footer", "count": len(declarations)}
    body = [json.dumps(r).encode() for r in [*declarations, footer]]
    build_catalog(iter([json.dumps(header).encode(), *body]), root, "test")


@pytest.fixture()
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(root with profile TEST, Lake project, REPL checkout) for the stand-in."""
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    return root, project, repl


def standin_processes() -> list[psutil.Process]:
    """Live (non-zombie) stand-in REPL processes of this checkout (another checkout's test run
    on the same machine has its own `tests/standin/repl.py`)."""
    script = str(STANDIN / "repl.py")
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if script in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def test_http_check_route_and_mcp_tool(layout: tuple[Path, Path, Path]) -> None:
    root, project, repl = layout
    config = CheckerConfig.for_profile(root, "TEST", project_dir=project, repl_dir=repl, lake_path=STANDIN / "lake")
    engine = Engine(root)
    with live_server(create_app(engine, ServiceConfig(tool_names="both"), Checker(config, close_names=engine.close_names))) as url:
        accepted = httpx.post(f"{url}/v1/check", json={"environment": "test", "code": SHOW_P}, timeout=60)
        assert accepted.status_code == 200, accepted.text
        body = CheckResponse.model_validate(accepted.json())
        assert body.verdict.value == "accepted" and body.environment == "TEST"
        assert body.environment_digest == engine.catalog("test").manifest.environment_digest

        incomplete = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": SORRY}, timeout=60).json()
        assert incomplete["verdict"] == "incomplete" and incomplete["sorries"]
        assert incomplete["failure_class"] == "sorry" and incomplete["hint"]

        # Unknown names are answered from TEST's catalog (the sample declarations).
        unknown_name = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": UNKNOWN}, timeout=60).json()
        assert unknown_name["verdict"] == "rejected" and unknown_name["failure_class"] == "unknown_identifier"
        assert unknown_name["reasons"][0]["failure_class"] == "unknown_identifier"
        assert unknown_name["diagnostics"][0]["suggestions"] == engine.close_names("TEST", ["byrfl"])[1][0]
        assert unknown_name["diagnostics"][0]["suggestions"][0] == "Nat.byrfl"

        outside = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": "import Mathlib\n" + SHOW_P}, timeout=60)
        assert outside.status_code == 400 and outside.json()["error"]["code"] == "header_mismatch"
        unknown = httpx.post(f"{url}/v1/check", json={"environment": "SAMPLE", "code": SHOW_P}, timeout=60)
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_environment"
        too_big = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": "-" * (300 * 1024)}, timeout=60)
        assert too_big.status_code == 413

        async def over_mcp() -> None:
            async with Client(f"{url}/mcp", cache=None) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                assert {"lean.check", "lean_check"} <= set(tools)
                assert tools["lean_check"].annotations.read_only_hint is True
                for name in ("lean.check", "lean_check"):
                    result = await client.call_tool(name, {"environment": "TEST", "code": SHOW_P})
                    assert not result.is_error
                    jsonschema.Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
                    assert result.structured_content["verdict"] == "accepted"
                    assert result.content[0].text.startswith("accepted")
                refused = await client.call_tool("lean_check", {"environment": "TEST", "code": "import Mathlib\n" + SHOW_P})
                assert refused.is_error and refused.structured_content["error"]["code"] == "header_mismatch"

        anyio.run(over_mcp)
    engine.close()
    assert standin_processes() == []  # the app's shutdown closed every REPL


def test_checking_is_off_unless_configured(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_test_profile(root)
    engine = Engine(root)
    with live_server(create_app(engine)) as url:
        response = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": SHOW_P}, timeout=30)
        assert response.status_code == 404 and response.json()["error"]["code"] == "check_disabled"

        async def tool_names() -> set[str]:
            async with Client(f"{url}/mcp", cache=None) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        assert not {"lean.check", "lean_check"} & anyio.run(tool_names)
    engine.close()


def test_stdio_server_checks_and_stops_its_repls_when_stdin_closes(layout: tuple[Path, Path, Path]) -> None:
    root, project, repl = layout
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "leanindex", "mcp", "--root", str(root), "--check", f"test={project}", "--check-repl", str(repl), "--check-lake", str(STANDIN / "lake")],
        env={**os.environ},
    )

    async def main() -> list[int]:
        async with Client(params, cache=None) as client:
            result = await client.call_tool("lean.check", {"environment": "TEST", "code": SHOW_P})
            assert not result.is_error and result.structured_content["verdict"] == "accepted"
            assert result.structured_content["failure_class"] is None
            unknown = await client.call_tool("lean.check", {"environment": "TEST", "code": UNKNOWN})
            assert unknown.structured_content["failure_class"] == "unknown_identifier"
            assert unknown.structured_content["diagnostics"][0]["suggestions"] == ["Nat.byrfl"]
            assert "failure unknown_identifier: " in unknown.content[0].text and "did you mean: " in unknown.content[0].text
            return [p.pid for p in standin_processes()]

    running = anyio.run(main)
    assert running, "the warm REPL should have been running while the server was"
    _gone, alive = psutil.wait_procs([p for p in map(_process, running) if p], timeout=15)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def test_a_disconnected_client_gives_up_its_check() -> None:
    async def scenario() -> bool:
        started, cancelled = asyncio.Event(), asyncio.Event()

        async def queued_check() -> str:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "verdict"

        polls = 0

        async def disconnected() -> bool:
            nonlocal polls
            polls += 1
            return started.is_set() and polls >= 2

        with pytest.raises(asyncio.CancelledError):
            await unless_disconnected(queued_check(), disconnected, poll_s=0.01)
        await asyncio.wait_for(cancelled.wait(), timeout=5)
        return cancelled.is_set()

    assert asyncio.run(scenario())


def test_a_connected_client_gets_the_answer() -> None:
    async def scenario() -> str:
        async def quick() -> str:
            await asyncio.sleep(0.05)
            return "verdict"

        async def never() -> bool:
            return False

        return await unless_disconnected(quick(), never, poll_s=0.01)

    assert asyncio.run(scenario()) == "verdict"
