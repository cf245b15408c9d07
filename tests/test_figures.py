"""README's performance figures are generated from the committed `benchmarks/results/*.json`
(`benchmarks/figures.py`, issue 31): the table between the markers must be exactly what the
script renders, so a figure quoted by hand, or one the JSON no longer has, fails here. The
renderer's rules are tested on small synthetic JSON: an absent key reads "not measured", numbers
are rounded as stated, each row cites its file and run. No benchmark runs here."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load(name: str):
    """A module of benchmarks/ by file (benchmarks/ is no package); registered so that its
    dataclasses resolve their annotations."""
    spec = importlib.util.spec_from_file_location(f"leanindex_bench_{name}", REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


figures = _load("figures")
runinfo = _load("runinfo")


def _results(tmp_path: Path, **files: dict) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
    return folder


def _row(rows: list[str], what: str) -> str:
    [row] = [r for r in rows if r.startswith(f"| {what} |")]
    return row


def test_readme_table_is_what_the_json_renders() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = figures.differences(readme, figures.render_rows())
    assert not found, "README.md's figures differ from benchmarks/results/*.json (run `python benchmarks/figures.py --write`):\n" + "\n".join(found)


def test_a_figure_quoted_by_hand_fails_the_check() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = figures.render_rows()
    row = _row(rows, "inspect, synthetic catalog")
    edited = readme.replace(row, re.sub(r"p50 [0-9.]+ ms", "p50 0.30 ms", row, count=1))
    assert edited != readme
    [difference] = figures.differences(edited, rows)
    assert "p50 0.30 ms" in difference and row in difference


def test_an_absent_key_or_file_reads_not_measured(tmp_path: Path) -> None:
    results = _results(tmp_path, search={"synthetic": {"inspect": {"p50_ms": 0.5, "n": 10}}})
    rows = figures.render_rows(results)
    assert "| not measured |" in _row(rows, "inspect, synthetic catalog")  # no p99_ms
    assert "| not measured |" in _row(rows, "search, real Mathlib catalog (doc-gen4), every query class")
    assert _row(rows, "checker overhead on the instant stand-in REPL").endswith("| not measured | `benchmarks/results/check.json`: no such file |")


def test_a_part_missing_reads_not_measured_and_the_rest_is_kept(tmp_path: Path) -> None:
    results = _results(tmp_path, docgen={"core_import": {"wall_s": 36.25, "cpu_s": 18.7, "peak_rss_mib": 562.4}})
    row = _row(figures.render_rows(results), "doc-gen4 import, Lean core")
    assert "36.2 s wall, 18.7 s CPU" in row
    assert "largest single process 562 MiB, of the whole process tree (sampled every 50 ms, so a shorter peak is missed) not measured" in row


def test_numbers_are_rounded_as_stated(tmp_path: Path) -> None:
    assert figures.fixed(1234.567, 1) == "1,234.6"
    assert figures.fixed(0.5, 0) == "0"
    assert [figures.ms(v) for v in (0.97123, 9.994, 13.626, 1046.12)] == ["0.97", "9.99", "13.6", "1,046.1"]
    assert figures.span([3.0, 1.004, 2.0], figures.ms) == "1.00-3.00"
    assert figures.span([1.001, 1.004], figures.ms) == "1.00"
    results = _results(tmp_path, search={
        "build": {"count": 800000, "seconds": 116.82, "peak_rss_mb": 1576.73},
        "synthetic": {"inspect": {"p50_ms": 0.97123, "p99_ms": 2.3966, "n": 400}},
    })
    rows = figures.render_rows(results)
    assert "| p50 0.97 ms, p99 2.40 ms over 400 random names |" in _row(rows, "inspect, synthetic catalog")
    assert "800,000 records in 116.8 s = 6,848 records/s; builder process peak RSS 1,577 MiB" in _row(rows, "build, synthetic catalog piped from a generator")


def test_a_class_whose_median_query_finds_nothing_says_so(tmp_path: Path) -> None:
    results = _results(tmp_path, search={"mathlib_import": {"count": 306807}, "mathlib": {
        "instances_of": {"p50_ms": 0.3, "p99_ms": 0.5, "median_total_matches": 0},
        "name_rare": {"p50_ms": 1.5, "p99_ms": 2.5, "median_total_matches": 3},
    }})
    row = _row(figures.render_rows(results), "search, real Mathlib catalog (doc-gen4), every query class")
    assert "306,807 declarations; p50 / p99 ms: instances_of 0.30 / 0.50 (median query matches nothing), name_rare 1.50 / 2.50 |" in row


def test_each_row_cites_its_file_and_run(tmp_path: Path) -> None:
    run = {"date": "2026-12-05T06:33:39Z", "finished": "2026-12-05T06:40:00Z", "commit": "0be895c+dirty",
           "load_at_start": [1.37, 1.2, 1.1], "load_at_end": [1.2, 1.2, 1.1], "cpus": 2}
    results = _results(tmp_path, search={"synthetic": {"inspect": {"p50_ms": 1, "p99_ms": 2, "n": 3}}, "run": run},
                       nl={"run": {"date": "2026-12-05T06:33:39Z", "load_1min": 1.365}}, check={})
    rows = figures.render_rows(results)
    assert _row(rows, "inspect, synthetic catalog").endswith(
        "| `benchmarks/results/search.json`: 2026-12-05 06:33 UTC, commit 0be895c+dirty, load 1.37→1.20 on 2 CPUs |")
    assert _row(rows, "text search, real Mathlib catalog, hand-written questions in words, LaTeX and Lean syntax").endswith(
        "| `benchmarks/results/nl.json`: 2026-12-05 06:33 UTC, commit not recorded, load 1.36 (at the end) |")
    assert _row(rows, "checker throughput on the instant stand-in REPL").endswith("| `benchmarks/results/check.json`: run info not recorded |")


def test_check_lists_each_differing_row_and_write_makes_it_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(tmp_path, search={"synthetic": {"inspect": {"p50_ms": 1, "p99_ms": 2, "n": 3}}})
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\n\n{figures.BEGIN}\n| what | figure | source |\n| inspect, synthetic catalog | p50 0.1 ms | hand |\n{figures.END}\n\nafter\n")
    assert figures.main(["--check", "--readme", str(readme), "--results", str(results)]) == 1
    printed = capsys.readouterr().out
    assert "README: | inspect, synthetic catalog | p50 0.1 ms | hand |" in printed
    assert "JSON:   | inspect, synthetic catalog | p50 1.00 ms, p99 2.00 ms over 3 random names |" in printed
    assert figures.main(["--write", "--readme", str(readme), "--results", str(results)]) == 0
    assert figures.main(["--check", "--readme", str(readme), "--results", str(results)]) == 0
    text = readme.read_text()
    assert text.startswith("# t\n\n") and text.endswith(f"{figures.END}\n\nafter\n")


def test_runinfo_records_date_commit_load_and_cpus() -> None:
    run = runinfo.run_info()
    assert set(run) == {"date", "finished", "commit", "load_at_start", "load_at_end", "cpus"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", run["date"]) and run["date"] <= run["finished"]
    assert run["commit"] is None or re.fullmatch(r"[0-9a-f]{4,40}(\+dirty)?", run["commit"])
    assert len(run["load_at_start"]) == len(run["load_at_end"]) == 3
    assert run["cpus"] >= 1


def test_http_rows_read_the_pinned_shape_and_the_server_memory(tmp_path: Path) -> None:
    results = _results(tmp_path, service={
        "profile": "mathlib", "server_cores": [0], "load_generator_cores": [1], "load_generator": "wrk",
        "http_sequential": {"p50_ms": 2.5, "median_overhead_ms": 0.4},
        "http_throughput": [{"connections": 1, "throughput_rps": 400.4, "errors": 0}, {"connections": 8, "throughput_rps": 1012.6, "errors": 2}],
        "server_memory_mib": {"ready": {"rss": 197.2}, "steady": {"rss": 380.6, "anon": 120.1}, "peak_sampled_rss": 391.0},
    })
    rows = figures.render_rows(results)
    assert ("| catalog mathlib, mixed queries; one client: p50 2.50 ms, 0.40 ms over the engine in-process (median per request); "
            "1 / 8 connections: 400 / 1,013 req/s, 2 errors (load generator wrk on core 1, server on core 0) |") in _row(rows, "HTTP (`leanindex serve`)")
    assert ("| server RSS 197 MiB ready, 381 MiB after the throughput runs (120 MiB anonymous), peak sampled during them 391 MiB |"
            in _row(rows, "`leanindex serve`'s memory under the HTTP mix"))
