"""The shell steps of the GitHub workflows, run here with stand-in `leanindex`, `git`, `lake` and
`pytest` commands on PATH.

Each step's `run` script is taken from the workflow file and executed the way GitHub runs it
(`bash --noprofile --norc -eo pipefail`), with the `GITHUB_*` files pointed into a temporary
folder, so what is asserted is the status and the outputs a real run would produce.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from leanindex.errors import OUTCOME_EXIT, Outcome

#: `catalog diff`'s status on drift, which the workflows branch on.
DRIFT = OUTCOME_EXIT[Outcome.DRIFTED]

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def _steps(workflow: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))
    (job,) = data["jobs"].values()
    return job["steps"]


def _step(workflow: str, name: str) -> dict[str, Any]:
    matches = [s for s in _steps(workflow) if s.get("name") == name]
    assert len(matches) == 1, f"{workflow}: expected one step named {name!r}"
    return matches[0]


def _stub(bin_dir: Path, name: str, body: str) -> None:
    """A stand-in command: a shell script `name` in `bin_dir`."""
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _run_step(step: dict[str, Any], cwd: Path, bin_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs the step's script as GitHub's default `bash` shell does, stand-ins first on PATH."""
    script = cwd / ".step.sh"
    script.write_text(step["run"], encoding="utf-8")
    full_env = {**os.environ, **env, **step.get("env", {}), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    return path


def _git_repo(path: Path, manifest: bool) -> Path:
    path.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    (path / "README").write_text("x\n")
    if manifest:
        (path / "manifests").mkdir()
        (path / "manifests" / "core.json").write_text("{}\n")
    subprocess.run([*git, "add", "-A"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=path, check=True)
    return path


def _fake_leanindex(bin_dir: Path, calls: Path) -> None:
    """`leanindex` that records its arguments, prints a report and exits with $FAKE_STATUS."""
    _stub(bin_dir, "leanindex", f'echo "$*" >> "{calls}"\necho "report of catalog diff"\nexit "$FAKE_STATUS"\n')


# lean.yml: the CORE drift check


def test_core_drift_fails_while_no_manifest_is_committed(tmp_path: Path, bin_dir: Path) -> None:
    repo = _git_repo(tmp_path / "repo", manifest=False)
    calls = tmp_path / "calls"
    _fake_leanindex(bin_dir, calls)
    summary = tmp_path / "summary"
    step = _step("lean.yml", "Check the core manifest for drift")
    result = _run_step(step, repo, bin_dir, {"FAKE_STATUS": "0", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1
    assert "::error title=CORE manifest not committed::" in result.stdout
    assert "commit" in (repo / "core-diff.txt").read_text()
    assert "manifests/core.json" in summary.read_text()
    assert not calls.exists(), "with nothing committed there is nothing to diff against"


@pytest.mark.parametrize("status", [0, DRIFT, 11])
def test_core_drift_status_is_catalog_diffs(tmp_path: Path, bin_dir: Path, status: int) -> None:
    repo = _git_repo(tmp_path / "repo", manifest=True)
    calls = tmp_path / "calls"
    _fake_leanindex(bin_dir, calls)
    summary = tmp_path / "summary"
    step = _step("lean.yml", "Check the core manifest for drift")
    result = _run_step(step, repo, bin_dir, {"FAKE_STATUS": str(status), "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == status
    assert calls.read_text().split("\n")[0] == "catalog diff --profile core"
    assert (repo / "core-diff.txt").read_text() == "report of catalog diff\n"
    assert ("::error title=CORE manifest drift::" in result.stdout) == (status != 0)


# lean.yml: the pinned REPL


def _repl_env(tmp_path: Path, bin_dir: Path, repl_toolchain: str) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "lean-toolchain", work / "lean-toolchain")
    log = tmp_path / "log"
    # `git clone --depth 1 --branch TAG URL DIR` writes DIR/lean-toolchain; `lake` logs where it ran.
    _stub(
        bin_dir,
        "git",
        f'echo "git $*" >> "{log}"\n'
        'for last; do :; done\nmkdir -p "$last"\n'
        'printf "%s\\n" "$FAKE_REPL_TOOLCHAIN" > "$last/lean-toolchain"\n',
    )
    _stub(bin_dir, "lake", f'echo "lake $* in $(pwd)" >> "{log}"\n')
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    env = {
        "FAKE_REPL_TOOLCHAIN": repl_toolchain,
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ENV": str(tmp_path / "github_env"),
    }
    return work, env


def test_repl_is_built_at_the_tag_of_the_pinned_toolchain(tmp_path: Path, bin_dir: Path) -> None:
    toolchain = (REPO / "lean-toolchain").read_text().strip()
    work, env = _repl_env(tmp_path, bin_dir, toolchain)
    result = _run_step(_step("lean.yml", "Build the pinned REPL"), work, bin_dir, env)
    assert result.returncode == 0, result.stderr
    repl = Path(env["RUNNER_TEMP"]) / "repl"
    log = (tmp_path / "log").read_text().splitlines()
    tag = toolchain.split(":", 1)[1]
    assert log == [
        f"git clone --depth 1 --branch {tag} https://github.com/leanprover-community/repl.git {repl}",
        f"lake build in {repl}",
    ]
    assert (tmp_path / "github_env").read_text() == f"LEANINDEX_REPL={repl}\n"


def test_repl_on_another_toolchain_is_refused(tmp_path: Path, bin_dir: Path) -> None:
    work, env = _repl_env(tmp_path, bin_dir, "leanprover/lean4:v4.34.0")
    result = _run_step(_step("lean.yml", "Build the pinned REPL"), work, bin_dir, env)
    assert result.returncode == 1
    assert "::error title=REPL toolchain mismatch::" in result.stdout
    assert not any(line.startswith("lake") for line in (tmp_path / "log").read_text().splitlines())
    assert not (tmp_path / "github_env").exists()


# lean.yml: no Lean test may skip

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2" skipped="{skipped}">
<testcase classname="tests.test_extractor_lean" name="test_header_and_footer" />
<testcase classname="tests.test_checker_lean" name="test_accepted">{skip}</testcase>
</testsuite></testsuites>
"""


@pytest.mark.parametrize("skipped", [False, True])
def test_lean_tests_step_fails_on_a_skipped_test(tmp_path: Path, bin_dir: Path, skipped: bool) -> None:
    skip = '<skipped type="pytest.skip" message="LEANINDEX_REPL does not point at a built REPL checkout" />'
    junit = JUNIT.format(skipped=int(skipped), skip=skip if skipped else "")
    (tmp_path / "junit.xml").write_text(junit)
    args, junit_file = tmp_path / "pytest-args", tmp_path / "junit.xml"
    _stub(bin_dir, "pytest", f'echo "$*" > "{args}"\ncp "{junit_file}" lean-tests.xml\n')
    (bin_dir / "python").symlink_to(sys.executable)
    work = tmp_path / "work"
    work.mkdir()
    result = _run_step(_step("lean.yml", "Lean-dependent tests (extractor and checker)"), work, bin_dir, {})
    assert args.read_text().split() == ["-n", "0", "-m", "lean", "-v", "-rs", "--junitxml=lean-tests.xml"]
    assert result.returncode == (1 if skipped else 0), result.stderr
    expected = "::error title=Lean test skipped::tests.test_checker_lean::test_accepted: LEANINDEX_REPL does not point"
    assert (expected in result.stdout) == skipped


def test_lean_tests_step_fails_when_pytest_fails(tmp_path: Path, bin_dir: Path) -> None:
    _stub(bin_dir, "pytest", "exit 1\n")
    (bin_dir / "python").symlink_to(sys.executable)
    work = tmp_path / "work"
    work.mkdir()
    result = _run_step(_step("lean.yml", "Lean-dependent tests (extractor and checker)"), work, bin_dir, {})
    assert result.returncode == 1


def test_lean_workflow_order() -> None:
    """The REPL exists before the tests run; the manifest is built and compared even after a
    failed test step, so every run leaves one in the artifact."""
    names = [s.get("name") for s in _steps("lean.yml")]
    order = [
        "Build the pinned REPL",
        "Lean-dependent tests (extractor and checker)",
        "Build the core catalog",
        "Check the core manifest for drift",
    ]
    assert [names.index(n) for n in order] == sorted(names.index(n) for n in order)
    for name in order[2:]:
        assert _step("lean.yml", name)["if"] == "${{ !cancelled() }}", name
    upload = _steps("lean.yml")[-1]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    assert "manifests/core.json" in upload["with"]["path"].split()


# manifest.yml: drift fails the job, the pull request still opens


@pytest.mark.parametrize("status", [0, DRIFT, 11])
def test_mathlib_diff_step_keeps_the_status(tmp_path: Path, bin_dir: Path, status: int) -> None:
    calls = tmp_path / "calls"
    _fake_leanindex(bin_dir, calls)
    work = tmp_path / "work"
    work.mkdir()
    output = tmp_path / "github_output"
    step = _step("manifest.yml", "Diff against the committed manifest")
    result = _run_step(step, work, bin_dir, {"FAKE_STATUS": str(status), "GITHUB_OUTPUT": str(output)})
    assert result.returncode == 0, "the status is acted on by later steps"
    assert output.read_text() == f"status={status}\n"
    assert (work / "diff.txt").read_text() == "report of catalog diff\n"
    assert calls.read_text() == "catalog diff --profile mathlib\n"


@pytest.mark.parametrize("status", [DRIFT, 11])
def test_mathlib_fail_step_exits_with_the_diff_status(tmp_path: Path, bin_dir: Path, status: int) -> None:
    step = _step("manifest.yml", "Fail on drift")
    env = {**step["env"], "DIFF_STATUS": str(status)}
    result = _run_step({**step, "env": env}, tmp_path, bin_dir, {})
    assert result.returncode == status
    assert "::error title=MATHLIB manifest drift::" in result.stdout


def test_mathlib_pull_request_opens_on_drift_before_the_job_fails() -> None:
    steps = _steps("manifest.yml")
    names = [s.get("name") for s in steps]
    pr = _step("manifest.yml", "Open a pull request with the new manifest")
    fail = _step("manifest.yml", "Fail on drift")
    assert pr["if"] == f"steps.diff.outputs.status == '{DRIFT}'"
    assert fail["if"] == "steps.diff.outputs.status != '0'"
    assert fail["env"] == {"DIFF_STATUS": "${{ steps.diff.outputs.status }}"}
    assert names.index("Diff against the committed manifest") < names.index(pr["name"]) < names.index(fail["name"])
    assert names[-1] == "Fail on drift"


def test_the_mathlib_pack_is_published_as_the_release_asset_pull_names(tmp_path: Path, bin_dir: Path) -> None:
    from leanindex.catalog.pack import release_url

    calls = tmp_path / "calls"
    _stub(bin_dir, "leanindex", f'echo "leanindex $*" >> "{calls}"\n')
    # No release yet: `gh release view` fails, so it is created first.
    _stub(bin_dir, "gh", f'echo "gh $*" >> "{calls}"\n[ "$2" = view ] && exit 1\nexit 0\n')
    step = _step("manifest.yml", "Publish the catalog pack as a release asset")
    result = _run_step(step, tmp_path, bin_dir, {})
    assert result.returncode == 0, result.stderr
    lines = calls.read_text().splitlines()
    assert lines[0] == "leanindex catalog pack --profile mathlib --output mathlib.leanindex.tar"
    assert lines[1] == "gh release view catalog-mathlib"
    assert lines[2].startswith("gh release create catalog-mathlib ")
    assert lines[3] == "gh release upload catalog-mathlib mathlib.leanindex.tar --clobber"
    # The tag and asset name are the ones `leanindex catalog pull` users are pointed at.
    assert release_url("o/r", "mathlib").endswith("/releases/download/catalog-mathlib/mathlib.leanindex.tar")
    names = [s.get("name") for s in _steps("manifest.yml")]
    assert names.index("Build the Mathlib catalog") < names.index(step["name"]) < names.index("Fail on drift")
