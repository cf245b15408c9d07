"""Every `leanindex ...` line of README.md's shell blocks runs as written (issue 30) on the root
`leanindex demo` imported (the session's `embedded_demo`), as a newcomer with the virtual
environment active would type it. Lines that start a server, or that install leanindex, are
skipped with the reason shown by `pytest -rs`; `SKIPPED` lists them, so a new such line must be
named here."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from embedded_support import DemoRun, run_leanindex

README = Path(__file__).resolve().parents[1] / "README.md"

#: Lines not run, by their first words, and why.
SKIPPED = {
    "leanindex serve": "starts a long-running HTTP server (tests/test_service_cli.py runs it)",
    "leanindex mcp": "serves MCP over stdio until stdin closes (tests/test_mcp_stdio_lines.py runs it)",
}
INSTALL_REASON = "installs leanindex and runs `leanindex demo`: the session's embedded_demo fixture ran that demo on a fresh root"


def shell_lines(text: str) -> list[str]:
    """The lines of the README's ```sh blocks, trailing `# comments` removed."""
    lines = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command:
                lines.append(command)
    return lines


def readme_commands() -> list[str]:
    """Every shell line of the README that runs `leanindex`."""
    return [line for line in shell_lines(README.read_text()) if re.search(r"(^|[\s/])leanindex\s", line)]


def test_the_readme_has_commands_to_run() -> None:
    commands = readme_commands()
    assert sum(line.startswith("leanindex search") for line in commands) >= 6
    assert any(line.startswith("leanindex inspect") for line in commands)


@pytest.mark.parametrize("line", readme_commands())
def test_readme_command_runs_as_written(line: str, embedded_demo: DemoRun) -> None:
    if not line.startswith("leanindex "):
        assert ".venv/bin/leanindex demo" in line, line  # the one install line
        pytest.skip(INSTALL_REASON)
    for prefix, reason in SKIPPED.items():
        if line == prefix or line.startswith(prefix + " "):
            pytest.skip(reason)
    done = run_leanindex(embedded_demo.root, *shlex.split(line)[1:])
    assert done.returncode == 0, f"{line}\nexit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    if "--json" in line:
        answer = json.loads(done.stdout)
        assert answer.get("results"), line
    elif line.startswith("leanindex search"):
        assert "shown of" in done.stdout and " 0 shown of" not in done.stdout, done.stdout[:500]
