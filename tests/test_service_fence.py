"""The statement fence and `lean.audit` on every surface: `POST /v1/check` with `reference`,
`POST /v1/audit`, the MCP tools (the MCP SDK's client over streamable HTTP), `Client.check` and
`Client.audit`, answered by a real `Checker` driving the stand-in REPL through lean-interact.
The fence probe's answers and the audited file are scripted stand-in answers
(tests/standin/scripted.py); `show_p` is the recorded `infotree_theorem` transcript."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import httpx
import jsonschema
import pytest
from mcp import Client as McpClient
from service_support import live_server
from test_service_check import build_test_profile

from checker_support import STANDIN, make_layout, transcripts_dir
from leanindex import Client
from leanindex.checker import Checker, CheckerConfig
from leanindex.checker.models import AuditResponse, CheckResponse
from leanindex.engine import Engine
from leanindex.errors import LeanIndexError
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

sys.path.insert(0, str(STANDIN))
import scripted  # noqa: E402

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem
CHANGED = {"theorems": [{"name": "show_p", "statement": "(p q : Prop) (h : p) : p ∨ q"}]}


@pytest.fixture()
def served(tmp_path: Path):
    """A live server with a checker for profile TEST on the stand-in; yields its URL."""
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    config = CheckerConfig.for_profile(root, "TEST", project_dir=project, repl_dir=repl, lake_path=STANDIN / "lake")
    engine = Engine(root)
    with live_server(create_app(engine, ServiceConfig(), Checker(config, close_names=engine.close_names))) as url:
        yield url
    engine.close()


def test_http_and_client(served: str) -> None:
    changed = httpx.post(f"{served}/v1/check", json={"environment": "TEST", "code": SHOW_P, "reference": CHANGED}, timeout=60)
    assert changed.status_code == 200, changed.text
    answer = CheckResponse.model_validate(changed.json())
    assert answer.verdict.value == "rejected" and answer.fence[0].status.value == "changed"
    audit = httpx.post(f"{served}/v1/audit", json={"environment": "TEST", "code": scripted.AUDIT_FILE}, timeout=60)
    assert audit.status_code == 200, audit.text
    assert AuditResponse.model_validate(audit.json()).declarations_audited == 3
    with Client(served) as client:
        same = client.check("TEST", SHOW_P, reference={"theorems": [{"name": "show_p", "statement": "(p: Prop) (h : p) : p"}]})
        assert same.verdict.value == "accepted" and same.fence[0].status.value == "same"
        empty = client.audit("TEST", "#print List.cons")
        assert empty.verdict.value == "rejected" and [r.code.value for r in empty.reasons] == ["nothing_audited"]
        assert empty.failure_class.value == "nothing_audited" and empty.hint
        # recorded: invalid_line_break; `Nat.byrfl` is in TEST's catalog (build_test_profile)
        unknown = client.check("TEST", "theorem bar : 1 = 1 := byrfl")
        assert unknown.failure_class.value == "unknown_identifier" and unknown.diagnostics[0].suggestions == ["Nat.byrfl"]
        with pytest.raises(LeanIndexError) as invalid:
            client.check("TEST", SHOW_P, reference={})
        assert invalid.value.code.value == "invalid_request"
        with pytest.raises(LeanIndexError) as refused:
            client.check("TEST", SHOW_P, reference={"file": "def helper : Nat := 1"})
        assert refused.value.code.value == "invalid_request" and refused.value.details == {"line": 1}


def test_mcp_tools(served: str) -> None:
    async def over_mcp() -> None:
        async with McpClient(f"{served}/mcp", cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert "lean.audit" in tools
            result = await client.call_tool("lean.audit", {"environment": "TEST", "code": scripted.AUDIT_FILE})
            assert not result.is_error, result.content
            jsonschema.Draft202012Validator(tools["lean.audit"].output_schema).validate(result.structured_content)
            assert result.structured_content["verdict"] == "rejected"
            assert "3 of the 3" not in result.content[0].text and "3 of 3 declarations audited" in result.content[0].text
            fenced = await client.call_tool("lean.check", {"environment": "TEST", "code": SHOW_P, "reference": CHANGED})
            assert not fenced.is_error, fenced.content
            assert fenced.structured_content["reasons"][0]["code"] == "statement_changed"
            assert "first difference: (p: Prop)  vs  (p q : Prop)" in fenced.content[0].text

    anyio.run(over_mcp)
