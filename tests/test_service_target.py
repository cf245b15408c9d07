"""`lean.check.target` on every surface: `POST /v1/check/target`, the MCP tool and its alias
(the MCP SDK's client over streamable HTTP), `Client.check_target`, and `leanindex
check-target`, answered by a real `Checker` driving the stand-in REPL through lean-interact.
The prefix and the `sorry` candidate are scripted stand-in answers (tests/standin/scripted.py)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import jsonschema
import pytest
from click.testing import CliRunner
from mcp import Client as McpClient
from service_support import live_server
from test_service_check import build_test_profile, standin_processes

from checker_support import STANDIN, make_layout, transcripts_dir
from leanindex import Client
from leanindex.checker import Checker, CheckerConfig
from leanindex.checker.models import TargetCheckResponse
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import LeanIndexError
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem
SORRY = "theorem show_p (p: Prop) (h : p) : p := sorry"  # scripted
FILE = f"import Lean\n\ndef f : Nat := 1\n\n{SHOW_P}\n"


@pytest.fixture()
def served(tmp_path: Path):
    """A live server with a checker for profile TEST on the stand-in; yields its URL."""
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    config = CheckerConfig.for_profile(root, "TEST", project_dir=project, repl_dir=repl, lake_path=STANDIN / "lake")
    engine = Engine(root)
    with live_server(create_app(engine, ServiceConfig(tool_names="both"), Checker(config))) as url:
        yield url
    engine.close()
    assert standin_processes() == []


def test_http_route_and_client(served: str) -> None:
    body = {"environment": "TEST", "code": FILE, "target": "show_p", "candidates": [SHOW_P, SORRY]}
    first = httpx.post(f"{served}/v1/check/target", json=body, timeout=60)
    assert first.status_code == 200, first.text
    answer = TargetCheckResponse.model_validate(first.json())
    assert [r.verdict.value for r in answer.results] == ["accepted", "incomplete"] and not answer.reused
    with Client(served) as client:
        again = client.check_target("TEST", FILE, "show_p", [SHOW_P])
        assert again.reused and again.results[0].verdict.value == "accepted"
        with pytest.raises(LeanIndexError) as missing:
            client.check_target("TEST", FILE, "nope", [SHOW_P])
        assert missing.value.code.value == "not_found" and missing.value.details["declared"] == ["f", "show_p"]
        with pytest.raises(LeanIndexError) as invalid:
            client.check_target("TEST", FILE, "show_p", [])
        assert invalid.value.code.value == "invalid_request"
    bad = httpx.post(f"{served}/v1/check/target", json={**body, "candidates": []}, timeout=60)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"


def test_mcp_tool_and_alias(served: str) -> None:
    async def over_mcp() -> None:
        async with McpClient(f"{served}/mcp", cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"lean.check.target", "lean_check_target"} <= set(tools)
            for name in ("lean.check.target", "lean_check_target"):
                result = await client.call_tool(name, {"environment": "TEST", "code": FILE, "target": "show_p", "candidates": [SORRY]})
                assert not result.is_error, result.content
                jsonschema.Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
                assert result.structured_content["results"][0]["verdict"] == "incomplete"
                assert result.content[0].text.startswith("target show_p")
            sequential = await client.call_tool("lean_check_target", {"environment": "TEST", "code": FILE, "mode": "sequential"})
            assert [r["extended"] for r in sequential.structured_content["results"]] == [True, True]
            refused = await client.call_tool("lean_check_target", {"environment": "TEST", "code": FILE, "target": "nope", "candidates": [SHOW_P]})
            assert refused.is_error and refused.structured_content["error"]["code"] == "not_found"

    anyio.run(over_mcp)


def test_checker_tools_are_off_without_a_checker(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_test_profile(root)
    engine = Engine(root)
    with live_server(create_app(engine)) as url:
        body = {"environment": "TEST", "code": FILE, "target": "show_p", "candidates": [SHOW_P]}
        response = httpx.post(f"{url}/v1/check/target", json=body, timeout=30)
        assert response.status_code == 404 and response.json()["error"]["code"] == "check_disabled"
    engine.close()
    with Client.local(root) as client, pytest.raises(LeanIndexError) as local:
        client.check_target("TEST", FILE, "show_p", [SHOW_P])
    assert local.value.code.value == "check_disabled"


def test_cli_exit_status_and_json(tmp_path: Path) -> None:
    project, repl, _ = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    source = tmp_path / "file.lean"
    source.write_text(FILE)
    good, partial = tmp_path / "good.lean", tmp_path / "partial.lean"
    good.write_text(SHOW_P)
    partial.write_text(SORRY)
    base = ["check-target", str(source), "-e", "TEST", "--root", str(tmp_path), "--project", str(project), "--repl", str(repl), "--lake", str(STANDIN / "lake"), "--import", "Lean"]
    runner = CliRunner()
    both = runner.invoke(main, [*base, "-t", "show_p", "-c", str(partial), "-c", str(good), "--json"])
    assert both.exit_code == 0, both.output  # the best candidate is accepted
    assert [r.verdict.value for r in TargetCheckResponse.model_validate_json(both.output).results] == ["incomplete", "accepted"]
    only_partial = runner.invoke(main, [*base, "-t", "show_p", "-c", str(partial)])
    assert only_partial.exit_code == 12 and "candidate 0: incomplete" in only_partial.output
    assert runner.invoke(main, [*base, "--sequential"]).exit_code == 0
    missing = runner.invoke(main, [*base, "-t", "nope", "-c", str(good), "--json"])
    assert missing.exit_code == 5 and json.loads(missing.output)["error"]["code"] == "not_found"
    usage = runner.invoke(main, [*base, "-t", "show_p", "--json"])
    assert usage.exit_code == 3 and json.loads(usage.output)["error"]["code"] == "invalid_request"


DEF_F = "def f : Nat := by sorry"  # recorded: proof_step


def test_proof_tools_over_mcp_http_and_client(served: str) -> None:
    async def over_mcp() -> None:
        async with McpClient(f"{served}/mcp", cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"lean.proof.state", "lean_proof_state", "lean.proof.step", "lean_proof_step", "lean.proof.close", "lean_proof_close"} <= set(tools)

            async def call(name: str, arguments: dict) -> dict:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                jsonschema.Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
                return result.structured_content

            opened = await call("lean_proof_state", {"environment": "TEST", "code": DEF_F, "session": "mcp"})
            assert [g["text"] for g in opened["goals"]] == ["⊢ Nat"]
            stepped = await call("lean.proof.step", {"environment": "TEST", "state_id": opened["state_id"], "tactic": "have t : Nat := 42", "session": "mcp"})
            assert stepped["status"] == "open" and [g["hypotheses"] for g in stepped["goals"]] == [["t : Nat"]]
            done = await call("lean_proof_step", {"environment": "TEST", "state_id": stepped["state_id"], "tactic": "exact t", "session": "mcp"})
            assert done["status"] == "completed"
            closed = await call("lean_proof_close", {"environment": "TEST", "state_id": opened["state_id"], "session": "mcp"})
            assert closed["state_id"] == opened["state_id"]
            gone = await client.call_tool("lean_proof_step", {"environment": "TEST", "state_id": opened["state_id"], "tactic": "exact 1", "session": "mcp"})
            assert gone.is_error and gone.structured_content["error"]["code"] == "unknown_proof_state"

    anyio.run(over_mcp)
    with Client(served) as client:
        opened = client.proof_state("TEST", DEF_F)
        refused = client.proof_step("TEST", opened.state_id, "exat 42")  # recorded: unknown_tactic
        assert refused.status.value == "error" and refused.state_id is None
        assert client.proof_step("TEST", opened.state_id, "apply Int.natAbs").goals[0].target == "Int"
        assert client.proof_close("TEST", opened.state_id).open_states >= 1  # the step's new state stays open
        with pytest.raises(LeanIndexError) as forbidden:
            client.proof_step("TEST", opened.state_id, "run_tac pure ()")
        assert forbidden.value.code.value == "forbidden_command"
    unknown = httpx.post(f"{served}/v1/proof/step", json={"environment": "TEST", "state_id": "ps_0", "tactic": "rfl"}, timeout=30)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_proof_state"


# Scripted info tree, recorded goal texts (`proof_branching`): see tests/standin/scripted.py.
BRANCHING_PROOF = (
    "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by\n"
    "  apply And.intro\n  · exact h1.left\n  · apply h2\n    exact h1.right"
)


def test_proof_steps_and_tree_over_mcp_and_client(served: str) -> None:
    async def over_mcp() -> None:
        async with McpClient(f"{served}/mcp", cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            for name in ("lean.proof.steps", "lean_proof_steps", "lean.proof.tree", "lean_proof_tree"):
                result = await client.call_tool(name, {"environment": "TEST", "code": BRANCHING_PROOF, "include_theorems": True})
                assert not result.is_error, result.content
                jsonschema.Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
                # Profile TEST's catalog (the core sample) holds And.intro only: the others are said, not dropped.
                assert result.structured_content["used_theorems"] == ["constructor And.intro : ∀ {a b : Prop}, a → b → a ∧ b"]
                assert result.structured_content["not_in_catalog"] == ["And.left", "And.right"]
            steps = await client.call_tool("lean_proof_steps", {"environment": "TEST", "code": BRANCHING_PROOF})
            assert len(steps.structured_content["steps"]) == 6 and steps.structured_content["tree"] is None
            tree = await client.call_tool("lean_proof_tree", {"environment": "TEST", "code": BRANCHING_PROOF})
            assert tree.structured_content["tree"]["tactics"][0]["outcome"] == "split"

    anyio.run(over_mcp)
    with Client(served) as client:
        assert client.proof_steps("TEST", BRANCHING_PROOF).steps[0].tactic == "apply And.intro"
        assert client.proof_steps("TEST", BRANCHING_PROOF, tree=True).tree.goal.target == "p ∧ r"


def test_cli_proof_steps(tmp_path: Path) -> None:
    project, repl, _ = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    source = tmp_path / "proof.lean"
    source.write_text(BRANCHING_PROOF)
    base = ["proof-steps", str(source), "-e", "TEST", "--root", str(tmp_path), "--project", str(project), "--repl", str(repl), "--lake", str(STANDIN / "lake"), "--import", "Lean"]
    runner = CliRunner()
    flat = runner.invoke(main, base)
    assert flat.exit_code == 0, flat.output
    assert "2:2 apply And.intro" in flat.output and "after: p | r" in flat.output
    tree = runner.invoke(main, [*base, "--tree", "--json"])
    assert tree.exit_code == 0 and json.loads(tree.output)["tree"]["tactics"][0]["outcome"] == "split"
    missing = runner.invoke(main, [*base, "-t", "nope", "--json"])
    assert missing.exit_code == 5 and json.loads(missing.output)["error"]["code"] == "not_found"
