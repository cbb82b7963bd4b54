"""A human study end to end in a real browser (Playwright driving Debian's chromium) against
`forkingpaths study` in its own process: the first admin from the printed link, people and
assignments made on the admin page, a player playing griddag, an eeb maze level, an escape
attempt to a checkpoint and then its finish action, and three TurtleSoup questions; the episodes
are ordinary records of agent `human`; a second player reads none of the first one's work."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.doubles import free_port

from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import load_records

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - CI installs it (the dev extra)
    sync_playwright = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs Debian's chromium and the playwright package (make chromium; the dev extra)",
)

SCREENSHOTS = Path(os.environ.get("FORKINGPATHS_SCREENSHOTS", "test-artifacts/screenshots"))
PASSWORD = "correct horse battery"
ESCAPE = "house_heist"
MAZE = "maze-l1-000"
SOUP = "clever_logic-01-en"
GRID = "low-easy-s0"


def _reference_actions(benchmark: str, agent: str, instance: str, tmp: Path) -> list[str]:
    """The actions a reference agent plays on an instance (what the test's person types); of an
    escape scenario, its first attempt only (through the checkpoints to the finish action)."""
    spec = RunSpec(benchmark=benchmark, split=_split(benchmark), instances=[instance], agent=agent)
    result = asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=tmp))
    (record,) = load_records(result.run_dir.path, transcripts=False)
    return [step.action for step in record.steps if step.info.get("attempt", 0) == 0]


def _split(benchmark: str) -> str:
    return {"escape-v1": "mutate", "eeb-v1": "maze", "griddag-v1": "main"}[benchmark]


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("reference-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp / "cache"))
        return {
            "escape": _reference_actions("escape-v1", "oracle", ESCAPE, tmp),
            "eeb": _reference_actions("eeb-v1", "reference", MAZE, tmp),
            "griddag": _reference_actions("griddag-v1", "frontier", GRID, tmp),
        }


@pytest.fixture(scope="module")
def study(plans: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """`forkingpaths study RUNS --port P` in its own process: its address and admin link."""
    runs = tmp_path_factory.mktemp("study-runs")
    port = free_port()
    env = {**os.environ, "FORKINGPATHS_CACHE_DIR": str(runs.parent / "study-cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "forkingpaths.cli", "study", str(runs), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        second = proc.stdout.readline() if proc.stdout else ""
        assert first.startswith("forkingpaths study: http://127.0.0.1:"), first + second
        setup = re.search(r"(http://\S+#/setup\?token=\S+)", second)
        assert setup, f"the first start prints the admin's link: {second!r}"
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.2)
        yield {"url": url, "setup": setup.group(1), "runs": runs}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(study: dict) -> Iterator[Browser]:
    # Started after the fixtures that run event loops of their own (see test_browser.py).
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        yield launched
        launched.close()


def _page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))  # type: ignore[attr-defined]
    return page


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def _sign_in(page: Page, url: str, name: str) -> None:
    page.goto(f"{url}#/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("text=My queue")


def _api(page: Page, method: str, path: str, body: dict | None = None) -> dict:
    """A request from inside the signed-in page (its cookie; the CSRF token from /me)."""
    return page.evaluate(
        """async ([method, path, body]) => {
          const me = await (await fetch("api/study/auth/me")).json();
          const response = await fetch(path, {
            method, headers: {"Content-Type": "application/json", "X-CSRF-Token": me.csrf || ""},
            body: body === null ? undefined : JSON.stringify(body)});
          return {status: response.status, body: await response.json().catch(() => null)};
        }""",
        [method, path, body],
    )


def _ready(page: Page) -> None:
    """Wait until the page takes the next action (polled: the app's Content-Security-Policy
    refuses wait_for_function's eval)."""
    script = (
        "() => { const b = document.querySelector('details button[type=submit]'); "
        "return (Boolean(b) && !b.disabled) || "
        "document.body.innerText.includes('Your episode is recorded'); }"
    )
    deadline = time.monotonic() + 60
    while not page.evaluate(script):
        assert time.monotonic() < deadline, "the page never took the next action"
        page.wait_for_timeout(50)


def _type_actions(page: Page, actions: list[str]) -> None:
    """Send actions through the agents' own channel: the typed action, as a model replies."""
    for action in actions:
        _ready(page)
        summary = page.locator("details > summary", has_text=re.compile(r"^Type an action$"))
        details = summary.first.locator("xpath=..")
        if not details.evaluate("(d) => d.open"):
            details.locator("summary").click()
        details.locator("textarea").first.fill(action)
        details.locator("button[type=submit]").click()
    _ready(page)


def _enabled(page: Page, selector: str) -> None:
    found = f"document.querySelector({selector!r})"
    script = f"() => {{ const e = {found}; return Boolean(e) && !e.disabled; }}"
    deadline = time.monotonic() + 60
    while not page.evaluate(script):
        assert time.monotonic() < deadline, f"{selector} never took input"
        page.wait_for_timeout(50)


def _enter_each(page: Page, selector: str, texts: list[str]) -> None:
    """Type each text into the benchmark's own box and press Enter, one step at a time."""
    for text in texts:
        _enabled(page, selector)
        page.fill(selector, text)
        page.press(selector, "Enter")
        page.wait_for_timeout(30)
    _enabled(page, selector)


def test_a_study_from_the_first_admin_to_played_episodes(
    browser: Browser, study: dict, plans: dict[str, list[str]]
) -> None:
    url = study["url"]
    admin = _page(browser)
    admin.goto(study["setup"])
    admin.fill("input[name=name]", "ada")
    admin.fill("input[name=password]", PASSWORD)
    admin.click("button[type=submit]")
    admin.wait_for_selector("text=People and assignments")
    for name, role in (("ana", "player"), ("ben", "player"), ("cat", "annotator")):
        form = admin.locator("form", has=admin.locator("select[name=role]"))
        form.locator("input[name=name]").fill(name)
        form.locator("input[name=password]").fill(PASSWORD)
        form.locator("select[name=role]").select_option(role)
        form.locator("button[type=submit]").click()
        admin.wait_for_selector(f"td:text-is('{name}')")
    for benchmark, instance in (
        ("griddag", GRID),
        ("eeb", MAZE),
        ("escape", ESCAPE),
        ("turtlesoup", SOUP),
    ):
        form = admin.locator("form", has=admin.locator("textarea[name=items]"))
        form.locator("select[name=user]").select_option("ana")
        form.locator("select[name=kind]").select_option("play")
        form.locator("input[name=benchmark]").fill(benchmark)
        form.locator("textarea[name=items]").fill(instance)
        form.locator("button[type=submit]").click()
        admin.wait_for_selector(f"td >> text={instance}")
    _shot(admin, "study-admin")
    assert admin.errors == []  # type: ignore[attr-defined]

    ana = _page(browser)
    _sign_in(ana, url, "ana")
    assert ana.locator("a.button", has_text="play").count() == 4
    _shot(ana, "study-queue")

    # griddag: the frontier agent's moves, sent with the arrow keys' action strings.
    ana.goto(f"{url}#/play/griddag/{GRID}")
    ana.wait_for_selector(".play-controls .griddag-play-grid")
    _type_actions(ana, plans["griddag"])
    ana.wait_for_selector("text=Your episode is recorded")
    _shot(ana, "study-play-griddag")

    # eeb: a maze level played to its end, the first move by its button.
    ana.goto(f"{url}#/play/eeb/{MAZE}")
    ana.wait_for_selector(".play-controls .eeb-play-actions [data-action]")
    first = plans["eeb"][0]
    buttons = ana.locator(f".play-controls [data-action='{first}']")
    if buttons.count():
        buttons.first.click()
        ana.wait_for_function(
            "() => !document.querySelector('details button[type=submit]')?.disabled"
        )
        rest = plans["eeb"][1:]
    else:
        rest = plans["eeb"]
    _shot(ana, "study-play-eeb")
    _type_actions(ana, rest)
    ana.wait_for_selector("text=Your episode is recorded")

    # escape: the oracle's first attempt, through its checkpoints to the finish action; the
    # next attempt starts with that finish forbidden.
    ana.goto(f"{url}#/play/escape/{ESCAPE}")
    ana.wait_for_selector(".play-controls .escape-play")
    _enter_each(ana, "[aria-label='free-text action']", plans["escape"])
    _shot(ana, "study-play-escape")
    text = ana.locator("main").inner_text()
    assert "attempt 2" in text.lower(), "the finish action ended the first attempt"

    # turtlesoup: three questions answered by the scripted responder.
    ana.goto(f"{url}#/play/turtlesoup/{SOUP}")
    ana.wait_for_selector(".play-controls .turtlesoup-play")
    asked = ("Did someone die?", "Was it an accident?", "Is the weather important?")
    _enter_each(ana, "[aria-label='Ask one yes/no question, then press Enter']", list(asked))
    for question in asked:
        assert ana.locator(f"text={question}").count() >= 1
    _shot(ana, "study-play-turtlesoup")
    assert ana.errors == []  # type: ignore[attr-defined]

    # The finished episodes are records of agent `human`, scored by the benchmarks' metrics.
    runs = study["runs"]
    for benchmark, instance in (("griddag", GRID), ("eeb", MAZE)):
        (record,) = load_records(runs / f"human-{benchmark}-ana", transcripts=False)
        assert record.agent == "human" and record.instance_id == instance
        assert record.metrics and len(record.steps) >= 1
    (grid,) = load_records(runs / "human-griddag-ana", transcripts=False)
    assert grid.metrics["success"] is True

    # A second player sees none of it: no session, no run, no queue item of ana's.
    ben = _page(browser)
    _sign_in(ben, url, "ben")
    assert ben.locator("a.button", has_text="play").count() == 0
    state = _api(ana, "POST", "api/study/play/start", {"benchmark": "escape", "instance": ESCAPE})
    session = state["body"]["session"]
    assert _api(ben, "GET", f"api/study/play/state?session={session}", None)["status"] == 404
    assert (
        _api(ben, "POST", "api/study/play/act", {"session": session, "action": "click(x)"})[
            "status"
        ]
        == 404
    )
    assert _api(ben, "GET", "api/runs", None)["status"] == 403
    assert _api(ben, "GET", "api/study/admin/assignments", None)["status"] == 403
    assert (
        _api(ben, "POST", "api/study/play/start", {"benchmark": "escape", "instance": ESCAPE})[
            "status"
        ]
        == 403
    )
    assert "gold" not in str(state["body"]["observation"]["data"]).lower()
    assert ben.errors == []  # type: ignore[attr-defined]
