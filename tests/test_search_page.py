"""The search page in a real browser: the distribution's Chromium, headless, JavaScript off,
driven by Playwright against `leanindex serve` on the embedded Lean core catalog.

Screenshots of every step are written to `build/screenshots/` (desktop and phone widths) for
people to look at. Without Playwright or Chromium the tests skip, printing why.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from embedded_support import DemoRun, leanindex_command

SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
CHROMIUM = os.environ.get("LEANINDEX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PHONE = {"width": 390, "height": 844}


def _skip(reason: str) -> None:
    print(f"SKIP: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server(embedded_demo: DemoRun) -> Iterator[str]:
    """`leanindex serve` (a real process) on the embedded core catalog; its base URL."""
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "LEANINDEX_ROOT": str(embedded_demo.root)}
    process = subprocess.Popen([*leanindex_command(), "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.3)
        else:
            pytest.fail("leanindex serve did not become ready in 120 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip("Playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        _skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium; .ci/run installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                                              args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    try:
        yield context.new_page()
    finally:
        context.close()


def shoot(page: object, name: str) -> None:
    """Screenshots at desktop and phone widths; on the phone nothing may need sideways scrolling."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]
    size = page.viewport_size  # type: ignore[attr-defined]
    page.set_viewport_size(PHONE)  # type: ignore[attr-defined]
    page.screenshot(path=str(SHOTS / f"{name}-phone.png"), full_page=True)  # type: ignore[attr-defined]
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")  # type: ignore[attr-defined]
    assert overflow <= 0, f"{name}: the phone page scrolls sideways by {overflow} px"
    page.set_viewport_size(size)  # type: ignore[attr-defined]


def test_search_with_the_short_syntax(page: object, server: str) -> None:
    page.goto(server + "/")  # type: ignore[attr-defined]
    assert page.locator("select[name=env] option").all_inner_texts() == ["CORE-DOCGEN"]  # type: ignore[attr-defined]
    page.fill("input[name=q]", "add_comm ns:Nat kind:theorem")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    names = page.locator("ol.results a.name").all_inner_texts()  # type: ignore[attr-defined]
    assert "Nat.add_comm" in names and all(name.startswith("Nat.") and "add_comm" in name for name in names)
    assert re.fullmatch(rf"1–{len(names)} of {len(names)} · complete", page.inner_text("#completeness"))  # type: ignore[attr-defined]
    item = page.locator("ol.results li", has=page.locator("a.name", has_text=re.compile(r"^Nat\.add_comm$")))  # type: ignore[attr-defined]
    assert item.locator(".type").inner_text() == "(n m : Nat) : n + m = m + n"
    assert item.locator(".module").inner_text() == "Init.Data.Nat.Basic"
    assert item.locator(".meta a").all_inner_texts() == ["Eq", "HAdd.hAdd"]  # the constants behind = and +
    # The links are doc-gen4's: the source lines in lean4 and the page on the default doc site.
    source, docs = item.locator(".links a").all()
    assert re.fullmatch(r"https://github\.com/leanprover/lean4/blob/[0-9a-f]{40}/src/Init/Data/Nat/Basic\.lean#L\d+-L\d+",
                        source.get_attribute("href"))
    assert docs.get_attribute("href") == "https://leanprover-community.github.io/mathlib4_docs/Init/Data/Nat/Basic.html#Nat.add_comm"
    shoot(page, "search")


def test_follow_a_constant_link(page: object, server: str) -> None:
    page.goto(server + "/?env=CORE-DOCGEN&q=length_append+ns:List")  # type: ignore[attr-defined]
    item = page.locator("ol.results li", has=page.locator("a.name", has_text=re.compile(r"^List\.length_append$")))  # type: ignore[attr-defined]
    item.locator(".type a", has_text=re.compile(r"^length$")).first.click()
    assert page.url.startswith(server + "/d/List.length?")  # type: ignore[attr-defined]
    assert page.inner_text("h2") .startswith("List.length")  # type: ignore[attr-defined]
    facts = page.inner_text("dl.facts")  # type: ignore[attr-defined]
    assert "Init.Prelude" in facts and "CORE-DOCGEN · Lean 4.33.0" in facts
    assert page.locator("dl.facts a.doc-link").get_attribute("href").endswith("/Init/Prelude.html#List.length")  # type: ignore[attr-defined]
    shoot(page, "declaration")
    page.click("text=Declarations whose type mentions List.length")  # type: ignore[attr-defined]
    assert re.search(r" of [\d,]+ · (more|complete)$", page.inner_text("#completeness"))  # type: ignore[attr-defined]


def test_pages_follow_the_cursor(page: object, server: str) -> None:
    page.goto(server + "/?env=CORE-DOCGEN&q=succ_le+ns:Nat&limit=10")  # type: ignore[attr-defined]
    first = page.inner_text("#completeness")  # type: ignore[attr-defined]
    total = re.fullmatch(r"1–10 of ([\d,]+) · more", first)
    assert total is not None, first
    first_names = page.locator("ol.results a.name").all_inner_texts()  # type: ignore[attr-defined]
    page.click("a[rel=next]")  # type: ignore[attr-defined]
    second = page.inner_text("#completeness")  # type: ignore[attr-defined]
    assert re.fullmatch(rf"11–\d+ of {total.group(1)} · (more|complete)", second), second
    second_names = page.locator("ol.results a.name").all_inner_texts()  # type: ignore[attr-defined]
    assert not set(first_names) & set(second_names)
    assert page.input_value("input[name=q]") == "succ_le ns:Nat"  # type: ignore[attr-defined]
    shoot(page, "cursor")


def test_unknown_environment(page: object, server: str) -> None:
    response = page.goto(server + "/?env=NOPE&q=add_comm")  # type: ignore[attr-defined]
    assert response.status == 404
    alert = page.inner_text("[role=alert]")  # type: ignore[attr-defined]
    assert alert.startswith("unknown_environment") and "CORE-DOCGEN" in alert
    shoot(page, "unknown-environment")


def test_empty_result(page: object, server: str) -> None:
    page.goto(server + "/?env=CORE-DOCGEN&q=zzqqxx_no_such_name")  # type: ignore[attr-defined]
    assert page.inner_text("#completeness") == "0 of 0 · complete"  # type: ignore[attr-defined]
    assert "No declaration matches every filter." in page.inner_text("main")  # type: ignore[attr-defined]
    shoot(page, "empty")


def test_words_find_the_lemma_first_and_say_why(page: object, server: str) -> None:
    page.goto(server + "/")  # type: ignore[attr-defined]
    page.fill("input[name=text]", "commutativity addition natural")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    names = page.locator("ol.results a.name").all_inner_texts()  # type: ignore[attr-defined]
    assert "Nat.add_comm" in names[:5], names
    assert page.locator("ol.results li .why").first.inner_text().startswith("why here: bm25=")  # type: ignore[attr-defined]
    assert page.input_value("input[name=text]") == "commutativity addition natural"  # type: ignore[attr-defined]
    shoot(page, "words")
    # Relevance order on a name fragment: the exact last-component hit comes before longer names.
    page.fill("input[name=text]", "")  # type: ignore[attr-defined]
    page.fill("input[name=q]", "add_comm ns:Nat")  # type: ignore[attr-defined]
    page.click("summary")  # type: ignore[attr-defined]
    page.select_option("select[name=order]", "relevance")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    assert page.locator("ol.results a.name").first.inner_text() == "Nat.add_comm"  # type: ignore[attr-defined]
    assert "name_hit=last_component" in page.locator("ol.results li .why").first.inner_text()  # type: ignore[attr-defined]
