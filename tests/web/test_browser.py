"""The viewer in a real browser (Playwright driving Debian's chromium): the runs list, a run and
an episode's world view of every benchmark, model calls, a comparison, a 10,000-episode run,
hostile model output, and the static bundle opened from disk. Screenshots are kept as artifacts
(FORKINGPATHS_SCREENSHOTS, by default test-artifacts/screenshots)."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmarks.viewer_run import write_big_run
from tests.web.runs import run_key, viewer_process

from forkingpaths.core.chat import Message
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, RunSpec, StepRecord
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.web.bundle import write_bundle

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - CI installs it (the dev extra)
    sync_playwright = None  # type: ignore[assignment]

if os.environ.get("CI") and (CHROMIUM is None or sync_playwright is None):
    raise RuntimeError("CI runs the browser tests: install chromium (make chromium) and playwright")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs Debian's chromium and the playwright package (make chromium; the dev extra)",
)

SCREENSHOTS = Path(os.environ.get("FORKINGPATHS_SCREENSHOTS", "test-artifacts/screenshots"))
BIG_RUN = "big-run"
BIG_EPISODES = 10_000
HOSTILE_RUN = "hostile-run"
HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
    '<a href="javascript:window.__pwned=1">click</a>" onmouseover="window.__pwned=1" x="'
)
BENCHMARKS = ["griddag", "escape", "aut", "eeb", "turtlesoup", "creativebench"]


def _hostile_record(instance: str, trial: int) -> EpisodeRecord:
    call = ModelCallRecord(
        model=f"scripted/{HOSTILE}",
        purpose="act",
        messages=[
            Message(role="system", content=HOSTILE),
            Message(role="user", content="look: " + HOSTILE + "\n" + "A" * 200_000),
        ],
        response=HOSTILE,
        prompt_tokens=3,
        completion_tokens=2,
    )
    steps = [
        StepRecord(
            index=i,
            observation=HOSTILE,
            thought=HOSTILE + " javascript:alert(1)",
            action=action,
            feedback=HOSTILE + "B" * 100_000,
            valid=i != 1,
            info={"position": [0, 0], HOSTILE: HOSTILE},
            calls=[call],
        )
        for i, action in enumerate(["up", HOSTILE, "left"])
    ]
    record = EpisodeRecord(
        run_id=HOSTILE_RUN,
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=trial,
        seed=1,
        agent="react",
        model=f"scripted/{HOSTILE}",
        initial_observation=HOSTILE,
        steps=steps,
        outcome={"success": False, "note": HOSTILE},
        metrics={"success": False, HOSTILE: 1.5},
        status="error" if trial else "ok",
        error=f"ModelError: {HOSTILE}" if trial else None,
    )
    record.tally_calls()
    return record


def _write_hostile_run(path: Path) -> None:
    run = RunDirectory(path)
    run.open(RunSpec(benchmark="griddag-v1", split="main", agent="react", model="scripted/x"))
    run.append(_hostile_record("low-easy-s0", 0))
    run.append(_hostile_record(HOSTILE, 1))


@pytest.fixture(scope="session")
def browser_runs(quick_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick runs, a generated 10,000-episode run and a run of hostile model output."""
    root = tmp_path_factory.mktemp("browser-runs")
    for run in quick_runs.iterdir():
        shutil.copytree(run, root / run.name, symlinks=True)
    source = quick_runs / run_key(quick_runs, "griddag", "frontier")
    write_big_run(source, root / BIG_RUN, BIG_EPISODES)
    _write_hostile_run(root / HOSTILE_RUN)
    return root


@pytest.fixture(scope="session")
def base_url(browser_runs: Path) -> Iterator[str]:
    """`forkingpaths view` serving the runs, in its own process."""
    with viewer_process(browser_runs) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser(browser_runs: Path) -> Iterator[Browser]:
    # Playwright's sync API holds an event loop while it runs: the runs are played before it
    # starts, and it stops with this module so later tests can start loops of their own.
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.errors = errors  # type: ignore[attr-defined]
    yield opened
    context.close()
    assert errors == [], f"the page raised: {errors}"


def _shot(page: Page, name: str, *, full_page: bool = False) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def _quoted(key: str) -> str:
    return urllib.request.quote(key, safe="")


def test_the_runs_list_shows_every_run_and_filters(
    page: Page, base_url: str, browser_runs: Path
) -> None:
    page.goto(base_url)
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    runs = [p for p in browser_runs.iterdir() if (p / "spec.json").exists()]
    assert page.locator("table.fp-table tbody tr").count() == len(runs)
    assert page.locator("text=finished").count() >= len(runs) - 2
    _shot(page, "runs-list", full_page=True)
    page.fill("input[type=search]", "griddag-main")
    griddag = [r for r in runs if r.name.startswith("griddag-main")]
    assert page.locator("table.fp-table tbody tr").count() == len(griddag)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_a_run_and_an_episode_world_view_of_each_benchmark(
    page: Page, base_url: str, browser_runs: Path, benchmark: str
) -> None:
    key = run_key(browser_runs, benchmark, None if benchmark == "aut" else _model_agent(benchmark))
    page.goto(f"{base_url}#/run/{_quoted(key)}")
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    assert page.locator("h2", has_text="Episodes").count() == 1
    _shot(page, f"run-{benchmark}", full_page=True)
    page.locator("table.fp-table tbody tr.clickable").first.click()
    page.wait_for_selector(".timeline .step")
    steps = page.locator(".timeline .step").count() - 1
    middle = max(1, steps // 2)
    page.goto(f"{base_url}#/run/{_quoted(key)}/episode/0?pos={middle}")
    page.reload()
    page.wait_for_selector(".world-view > div > *")
    world = page.locator(".world-view")
    text = world.inner_text().lower()
    assert "world view failed" not in text and "no world view" not in text
    assert world.locator("svg, table, pre, .badge").count() > 0
    assert page.locator(".timeline .step.selected").count() == 1
    page.evaluate("window.scrollTo(0, 0)")
    _shot(page, f"episode-{benchmark}")


def _model_agent(benchmark: str) -> str:
    """The quick suite's agent that plays with a model (its episodes have calls)."""
    return {
        "griddag": "react",
        "escape": "redna",
        "eeb": "base",
        "turtlesoup": "mosaic",
        "creativebench": "vanilla",
    }[benchmark]


def test_a_steps_model_calls_show_the_messages_sent_and_the_reply(
    page: Page, base_url: str, browser_runs: Path
) -> None:
    key = run_key(browser_runs, "griddag", "react")
    page.goto(f"{base_url}#/run/{_quoted(key)}/episode/0?pos=1")
    page.wait_for_selector(".step.selected .call-head")
    head = page.locator(".step.selected .call-head").first
    assert "act" in head.inner_text() and "tok" in head.inner_text()
    head.click()
    page.wait_for_selector(".step.selected .message .role")
    roles = page.locator(".step.selected .message .role").all_inner_texts()
    assert roles[0].lower() == "system" and roles[-1].lower().startswith("reply")
    _shot(page, "episode-model-call")
    # The arrow keys move along the timeline, the address follows.
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash").endswith("pos=2")


def test_two_runs_compare_per_instance_and_side_by_side(
    page: Page, base_url: str, browser_runs: Path
) -> None:
    page.goto(base_url)
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    keys = [run_key(browser_runs, "griddag", "frontier"), run_key(browser_runs, "griddag", "react")]
    for key in keys:
        page.check(f"input[aria-label='select {key}']")
    page.click("text=Compare selected (2)")
    page.wait_for_selector("text=Per instance")
    rows = page.locator("table.fp-table").last.locator("tbody tr")
    assert rows.count() >= 2
    _shot(page, "compare-table", full_page=True)
    rows.first.locator("a").first.click()
    page.wait_for_selector(".compare-col .world-view > *")
    assert page.locator(".compare-col").count() == 2
    page.fill("input[aria-label=position]", "3")
    page.dispatch_event("input[aria-label=position]", "input")
    assert page.locator(".compare-col .mini-timeline li.selected").count() == 2
    _shot(page, "compare-side-by-side")


def test_a_run_of_ten_thousand_episodes_lists_sorts_and_opens(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}#/run/{BIG_RUN}")
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    assert page.locator("text=10,000 of 10,000 episodes").count() == 1
    page.fill("input.wide-input", "trial>4990")
    assert page.locator("text=18 of 10,000 episodes").count() == 1
    page.fill("input.wide-input", "")
    page.locator("th", has_text="#").click()  # numbers sort largest first
    first = page.locator("table.fp-table tbody tr.clickable").first.locator("td").first
    assert first.inner_text() == str(BIG_EPISODES - 1)
    _shot(page, "big-run")
    first.locator("a").click()
    page.wait_for_selector(".timeline .step")
    assert page.locator(f"text={BIG_EPISODES} of {BIG_EPISODES}").count() == 1
    _shot(page, "big-run-episode")


def _injected(page: Page) -> dict[str, Any]:
    return page.evaluate(
        """() => ({
          pwned: window.__pwned === 1,
          handlers: document.querySelectorAll('[onerror],[onmouseover],[onclick]').length,
          inlineScripts: document.querySelectorAll('script:not([src])').length,
          scripts: [...document.querySelectorAll('script[src]')].map((s) => s.getAttribute('src')),
          jsLinks: document.querySelectorAll('a[href^="javascript:"]').length,
          images: document.querySelectorAll('main img[src="x"]').length,
          overflow: document.documentElement.scrollWidth - window.innerWidth,
        })"""
    )


def _assert_inert(page: Page) -> None:
    found = _injected(page)
    assert not found["pwned"]
    assert found["handlers"] == found["inlineScripts"] == found["jsLinks"] == found["images"] == 0
    assert all(src.startswith("static/") for src in found["scripts"]), found["scripts"]
    assert found["overflow"] <= 20, "a huge line widened the page"


def test_hostile_model_output_is_shown_as_text_and_never_runs(page: Page, base_url: str) -> None:
    page.goto(base_url)
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    _assert_inert(page)
    page.goto(f"{base_url}#/run/{HOSTILE_RUN}")
    # The runs list's table is on screen until the run page replaces it: wait for the run's.
    page.wait_for_selector("h2:text-is('Episodes')")
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    _assert_inert(page)
    assert HOSTILE in page.locator("main").inner_text()
    for number in (0, 1):
        page.goto(f"{base_url}#/run/{HOSTILE_RUN}/episode/{number}?pos=2")
        page.reload()
        page.wait_for_selector(".step.selected .call-head")
        page.locator(".step.selected .call-head").first.click()
        page.wait_for_selector(".step.selected .message")
        page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
        _assert_inert(page)
        assert HOSTILE in page.locator(".step.selected").inner_text()
    _shot(page, "hostile-episode")


def test_the_bundle_opens_from_disk(page: Page, browser_runs: Path, tmp_path: Path) -> None:
    keys = [
        run_key(browser_runs, "griddag", "frontier"),
        run_key(browser_runs, "eeb", "base"),
        run_key(browser_runs, "griddag", "react"),
    ]
    index = write_bundle(tmp_path / "bundle", [browser_runs / k for k in keys])
    manifest = (tmp_path / "bundle" / "data" / "manifest.js").read_text()
    assert json.loads(manifest.split("=", 1)[1].rstrip().rstrip(";"))["files"]
    page.goto(index.as_uri())
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    assert page.locator("table.fp-table tbody tr").count() == 3
    _shot(page, "bundle-runs")
    page.goto(f"{index.as_uri()}#/run/{_quoted(keys[1])}/episode/0?pos=5")
    page.reload()
    page.wait_for_selector(".world-view > div > *")
    assert "world view failed" not in page.locator(".world-view").inner_text()
    page.locator(".step.selected .call-head").first.click()
    page.wait_for_selector(".step.selected .message")
    _shot(page, "bundle-episode")
    # Two runs of one benchmark compare in the bundle as on the server.
    page.goto(f"{index.as_uri()}#/")
    page.wait_for_selector("table.fp-table tbody tr.clickable")
    for key in (keys[0], keys[2]):
        page.check(f"input[aria-label='select {key}']")
    page.click("text=Compare selected (2)")
    page.wait_for_selector("text=Per instance")
    page.locator("table.fp-table").last.locator("tbody tr a").first.click()
    page.wait_for_selector(".compare-col .world-view > *")
