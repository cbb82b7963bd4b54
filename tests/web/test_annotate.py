"""Annotation in the study: Metric 2 items blind to the judge, ratings of two annotators that
`escape agreement` reads, validity labels the construction filter reads, the TurtleSoup human
baseline file Table 2 reads, and routes that show each person only their own work."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from tests.doubles import free_port

from forkingpaths import api
from forkingpaths.benchmarks.creativebench.construction.validity import (
    keep_valid,
    load_validity,
    validity_rate,
)
from forkingpaths.benchmarks.creativebench.tasks import COMBO_FILE, load_combo
from forkingpaths.benchmarks.escape import agreement
from forkingpaths.benchmarks.escape.judge import (
    CRITERIA,
    JudgeItem,
    judge_item_from_step,
    render_judge_messages,
)
from forkingpaths.benchmarks.turtlesoup.human_baseline import load_human_baseline
from forkingpaths.runner.rundir import load_records
from forkingpaths.web import admin_routes, annotate
from forkingpaths.web.accounts import CSRF_HEADER, SESSION_COOKIE, STORE, StudyStore, User
from forkingpaths.web.data import Viewer
from forkingpaths.web.server import STATIC_DIR, make_app

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - CI installs it (the dev extra)
    sync_playwright = None  # type: ignore[assignment]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = Path(os.environ.get("FORKINGPATHS_SCREENSHOTS", "test-artifacts/screenshots"))

SCORES = [
    {"originality": 2, "elaboration": 3, "groundedness": 4},
    {"originality": 4, "elaboration": 2, "groundedness": 5},
    {"originality": 1, "elaboration": 1, "groundedness": 3},
    {"originality": 5, "elaboration": 4, "groundedness": 2},
    {"originality": 3, "elaboration": 5, "groundedness": 1},
]


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs folder with one escape run judged by the scripted judge, one built Combo file
    and two people's TurtleSoup runs."""
    root = tmp_path_factory.mktemp("study-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORKINGPATHS_CACHE_DIR", str(root.parent / "study-cache"))
        api.run(
            "escape",
            agent="redna",
            model="scripted/escape-explorer",
            roles={"judge": "scripted/escape-judge"},
            instances=["house_heist"],
            runs_dir=root,
            run_id="escape-judged",
        )
        for player, puzzles in (
            ("ann", ["crime_thriller-01-zh", "clever_logic-01-zh"]),
            ("bo", ["crime_thriller-01-zh"]),
        ):
            api.run(
                "turtlesoup",
                agent="mosaic",
                model="scripted/turtlesoup-questioner",
                instances=puzzles,
                runs_dir=root,
                run_id=f"human-turtlesoup-{player}",
            )
    build = root / "build"
    build.mkdir()
    lines = COMBO_FILE.read_text(encoding="utf-8").splitlines()[:3]
    (build / "combo.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    study = StudyStore(tmp_path / "study.sqlite")
    annotate.migrate(study)
    return study


def _people(store: StudyStore) -> tuple[User, User]:
    return store.add_user("ann", "a long password 1", "annotator"), store.add_user(
        "bo", "a long password 2", "annotator"
    )


def test_every_judged_step_is_an_item_and_its_payload_is_the_judges_context_only(
    runs_dir: Path,
) -> None:
    viewer = Viewer(runs_dir)
    items = annotate.metric2_items(viewer, "escape-judged")
    (record,) = load_records(runs_dir / "escape-judged", transcripts=False)
    judged = [s for s in record.steps if "judge" in s.info and "missing" not in s.info["judge"]]
    assert len(items) == len(judged) > 5
    assert items[0] == f"escape-judged|house_heist|0|{judged[0].info['attempt']}|" + str(
        judged[0].info["t"]
    )
    for item, step in zip(items[:8], judged[:8], strict=True):
        shown = annotate.metric2_payload(viewer, item)
        assert set(shown) == {"kind", "item", "context", "rubric"}
        context = shown["context"]
        assert set(context) == {
            "objective",
            "scene",
            "bag",
            "history",
            "thought",
            "action",
            "response",
        }
        assert all(set(h) == {"step", "action", "response"} for h in context["history"])
        text = json.dumps(context)
        assert "judge" not in text and not any(c in text for c in CRITERIA)
        # The same request the judge got, rebuilt from what the annotator sees.
        seen = JudgeItem(
            objective=context["objective"],
            scene_context=context["scene"],
            bag=context["bag"],
            history=context["history"],
            thought=context["thought"],
            action=context["action"],
            response=context["response"],
        )
        objective = record.initial_info["objective"]
        judge_saw = judge_item_from_step(step, objective)
        assert render_judge_messages(seen) == render_judge_messages(judge_saw)
    rubric = {r["criterion"]: r for r in annotate.rubric()}
    assert list(rubric) == list(CRITERIA)
    assert all(set(r["anchors"]) == {"1", "2", "3", "4", "5"} for r in rubric.values())


def test_two_annotators_rate_five_steps_and_agreement_reads_the_export(
    runs_dir: Path, store: StudyStore, tmp_path: Path
) -> None:
    ann, bo = _people(store)
    items = annotate.metric2_items(Viewer(runs_dir), "escape-judged")[:5]
    for user in (ann, bo):
        store.assign(user.name, "metric2", "escape", items)
    for i, item in enumerate(items):
        annotate.rate(store, ann, "metric2", item, SCORES[i])
        annotate.rate(store, bo, "metric2", item, SCORES[(i + 1) % 5])
    # Rating again replaces one's own rating.
    annotate.rate(store, ann, "metric2", items[0], SCORES[4])
    rows = annotate.export_metric2(store)
    assert len(rows) == 10
    assert {r["annotator"] for r in rows} == {"ann", "bo"}
    first = [
        r
        for r in rows
        if r["annotator"] == "ann" and r["step"] == annotate.StepKey.parse(items[0]).t
    ]
    assert {k: first[0][k] for k in CRITERIA} == SCORES[4]
    path = tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    human = agreement.load_human_scores(path)
    assert len(human) == 5 and all(h.n_ratings == 2 for h in human)
    table, unmatched = agreement.agreement_rows(path, runs_dir / "escape-judged")
    assert not unmatched
    assert [r["Criterion"] for r in table] == [
        "Overall",
        "Originality",
        "Elaboration",
        "Groundedness",
    ]
    assert [r["n"] for r in table] == [15, 5, 5, 5]
    assert set(table[0]) == set(agreement.TABLE_COLUMNS)
    # Every assignment is done, and nothing is left to rate.
    assert all(a.done for a in store.assignments("ann", "metric2"))
    assert annotate.next_item(Viewer(runs_dir), store, ann, "metric2")["item"] is None


def test_ratings_are_refused_outside_ones_queue_and_out_of_range(
    runs_dir: Path, store: StudyStore
) -> None:
    ann, bo = _people(store)
    items = annotate.metric2_items(Viewer(runs_dir), "escape-judged")[:2]
    store.assign("ann", "metric2", "escape", items)
    with pytest.raises(annotate.NotAssigned):
        annotate.rate(store, bo, "metric2", items[0], SCORES[0])
    for bad, field in (
        ({"originality": 6, "elaboration": 1, "groundedness": 1}, "value.originality"),
        ({"originality": 3, "elaboration": True, "groundedness": 1}, "value.elaboration"),
        ({"originality": 3, "elaboration": 2}, "value.groundedness"),
        ("3,3,3", "value"),
    ):
        with pytest.raises(annotate.BadRating, match=re.escape(field)):
            annotate.rate(store, ann, "metric2", items[0], bad)
    with pytest.raises(annotate.BadRating, match="kind"):
        annotate.rate(store, ann, "play", items[0], SCORES[0])


def test_an_annotator_sees_only_their_own_ratings(runs_dir: Path, store: StudyStore) -> None:
    ann, bo = _people(store)
    viewer = Viewer(runs_dir)
    items = annotate.metric2_items(viewer, "escape-judged")[:3]
    for user in (ann, bo):
        store.assign(user.name, "metric2", "escape", items)
    annotate.rate(store, ann, "metric2", items[0], SCORES[0])
    assert annotate.my_ratings(store, bo, "metric2") == {}
    assert annotate.item_for(viewer, store, bo, "metric2", items[0])["mine"] is None
    assert annotate.item_for(viewer, store, ann, "metric2", items[0])["mine"] == SCORES[0]
    # bo's queue still starts at the item ann rated; ann's moves on.
    assert annotate.next_item(viewer, store, bo, "metric2")["item"] == items[0]
    assert annotate.next_item(viewer, store, ann, "metric2")["item"] == items[1]
    assert annotate.progress(store, bo)["metric2"]["rated"] == 0
    assert annotate.progress(store, ann)["metric2"]["rated"] == 1


def test_validity_labels_feed_the_construction_filter(
    runs_dir: Path, store: StudyStore, tmp_path: Path
) -> None:
    ann, bo = _people(store)
    items = annotate.validity_items(runs_dir, "build/combo.jsonl")
    assert len(items) == 3 and all(i.startswith("build/combo.jsonl#") for i in items)
    shown = annotate.validity_payload(runs_dir, items[0])
    assert {"question", "tests", "reference_solution"} <= set(shown["instance"])
    for user in (ann, bo):
        store.assign(user.name, "validity", "creativebench", items)
    with pytest.raises(annotate.BadRating, match=r"value\.reason"):
        annotate.rate(store, ann, "validity", items[1], {"valid": False, "reason": " "})
    for user in (ann, bo):
        annotate.rate(store, user, "validity", items[0], {"valid": True, "reason": ""})
        annotate.rate(store, user, "validity", items[1], {"valid": False, "reason": "wrong test"})
    annotate.rate(store, ann, "validity", items[2], {"valid": True, "reason": "fine"})
    annotate.rate(store, bo, "validity", items[2], {"valid": False, "reason": "vague"})
    path = tmp_path / "validity.jsonl"
    rows = annotate.export_validity(store)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labels = load_validity(path)
    assert len(labels) == 6
    tasks, errors = load_combo(runs_dir / "build" / "combo.jsonl")
    assert not errors
    kept, dropped = keep_valid(tasks, labels, "build/combo.jsonl")
    assert [t.id for t in kept] == [tasks[0].id]
    assert [t.id for t in dropped] == [tasks[1].id, tasks[2].id]  # a tie is not valid
    assert validity_rate(labels) == pytest.approx(1 / 3)
    # A file outside the runs folder is never read.
    for outside in ("../combo.jsonl", str(COMBO_FILE)):
        with pytest.raises((annotate.BadRating, annotate.NotFound)):
            annotate.validity_items(runs_dir, outside)


def test_validity_file_defects_are_named(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    good = {"file": "f.jsonl", "id": "x", "valid": True, "reason": "", "annotator": "a"}
    path.write_text(json.dumps({**good, "valid": "yes"}) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"labels.jsonl:1: field 'valid'"):
        load_validity(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r":2: annotator 'a' already labelled"):
        load_validity(path)


def test_turtlesoup_export_is_the_human_baseline_file(runs_dir: Path, tmp_path: Path) -> None:
    baseline = annotate.export_turtlesoup_baseline(runs_dir)
    puzzles = baseline["puzzles"]
    assert set(puzzles) == {"crime_thriller-01-zh", "clever_logic-01-zh"}
    assert isinstance(puzzles["crime_thriller-01-zh"], list)  # two players
    assert isinstance(puzzles["clever_logic-01-zh"], float)  # one player
    path = tmp_path / "human.yaml"
    path.write_text(yaml.safe_dump(baseline), encoding="utf-8")
    read = load_human_baseline(path)
    assert set(read.categories) == {"crime_thriller", "clever_logic"}
    assert read.puzzles == {"crime_thriller": 1, "clever_logic": 1}
    json_path = tmp_path / "human.json"
    json_path.write_text(json.dumps(baseline), encoding="utf-8")
    assert load_human_baseline(json_path).categories == read.categories


# ---- routes ----


@pytest.fixture
async def study(runs_dir: Path, tmp_path: Path) -> AsyncIterator[tuple[TestClient, StudyStore]]:
    study_store = StudyStore(tmp_path / "study.sqlite")
    app = make_app(Viewer(runs_dir))
    app[STORE] = study_store
    annotate.add_routes(app)
    async with TestClient(TestServer(app)) as client:
        yield client, study_store


def _login(store: StudyStore, user: User) -> dict[str, str]:
    token, csrf = store.open_session(user)
    return {"Cookie": f"{SESSION_COOKIE}={token}", CSRF_HEADER: csrf}


async def test_routes_give_each_annotator_their_queue_and_nothing_else(
    study: tuple[TestClient, StudyStore], runs_dir: Path
) -> None:
    client, store = study
    ann, bo = _people(store)
    player = store.add_user("pia", "a long password 3", "player")
    admin = store.add_user("root", "a long password 4", "admin")
    items = annotate.metric2_items(Viewer(runs_dir), "escape-judged")[:2]
    store.assign("ann", "metric2", "escape", items)
    store.assign("bo", "metric2", "escape", items[1:])
    a, b = _login(store, ann), _login(store, bo)

    assert (await client.get("/api/study/annotate/next?kind=metric2")).status == 401
    shut = await client.get("/api/study/annotate/next?kind=metric2", headers=_login(store, player))
    assert shut.status == 403
    response = await client.get("/api/study/annotate/next?kind=metric2", headers=a)
    data = await response.json()
    assert data["item"] == items[0] and data["progress"] == {"assigned": 2, "rated": 0}
    assert "judge" not in json.dumps(data["context"])

    body = {"kind": "metric2", "item": items[0], "value": SCORES[0]}
    no_csrf = {"Cookie": a["Cookie"]}
    assert (await client.post("/api/study/annotate/rate", json=body, headers=no_csrf)).status == 403
    assert (await client.post("/api/study/annotate/rate", json=body, headers=b)).status == 403
    rated = await client.post("/api/study/annotate/rate", json=body, headers=a)
    assert rated.status == 200, await rated.text()
    assert (await rated.json())["progress"]["rated"] == 1
    bad = await client.post(
        "/api/study/annotate/rate", json={**body, "value": {"originality": 0}}, headers=a
    )
    assert bad.status == 400 and "value." in (await bad.json())["error"]

    # bo may not open ann's item, and sees none of ann's ratings on a shared one.
    other = await client.get(
        "/api/study/annotate/item", params={"kind": "metric2", "item": items[0]}, headers=b
    )
    assert other.status == 403
    await client.post("/api/study/annotate/rate", json={**body, "item": items[1]}, headers=a)
    shared = await client.get(
        "/api/study/annotate/item", params={"kind": "metric2", "item": items[1]}, headers=b
    )
    assert (await shared.json())["mine"] is None
    progress = await (await client.get("/api/study/annotate/progress", headers=b)).json()
    assert progress["metric2"]["rated"] == 0

    for headers in (a, b):
        refused = await client.get("/api/study/annotate/export?kind=metric2", headers=headers)
        assert refused.status == 403
    boss = _login(store, admin)
    exported = await client.get("/api/study/annotate/export?kind=metric2", headers=boss)
    assert [r["annotator"] for r in (await exported.json())["rows"]] == ["ann", "ann"]
    jsonl = await client.get("/api/study/annotate/export?kind=metric2&format=jsonl", headers=boss)
    assert len((await jsonl.text()).splitlines()) == 2
    listed = await client.get(
        "/api/study/annotate/items?kind=metric2&run=escape-judged", headers=boss
    )
    assert (await listed.json())["items"][:2] == items
    baseline = await client.get("/api/study/annotate/export?kind=turtlesoup", headers=boss)
    assert "puzzles" in await baseline.json()


# ---- in a real browser ----


@contextlib.contextmanager
def _serving(app: web.Application) -> Iterator[str]:
    """The app on a loopback port, its loop in a thread of its own (Playwright's sync API holds
    the test's thread)."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    port = free_port()
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.run_until_complete(runner.cleanup())
        loop.close()


@pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs Debian's chromium and the playwright package (make chromium; the dev extra)",
)
def test_two_annotators_rate_five_steps_in_the_browser_and_the_export_gives_table_10(
    runs_dir: Path, tmp_path: Path
) -> None:
    store = StudyStore(tmp_path / "study.sqlite")
    annotate.migrate(store)
    ann, bo = _people(store)
    admin = store.add_user("root", "a long password 4", "admin")
    items = annotate.metric2_items(Viewer(runs_dir), "escape-judged")[:5]
    checks = annotate.validity_items(runs_dir, "build/combo.jsonl")[:1]
    for user in (ann, bo):
        store.assign(user.name, "metric2", "escape", items)
    store.assign("ann", "validity", "creativebench", checks)
    app = make_app(Viewer(runs_dir))
    app[STORE] = store
    admin_routes.add_routes(app)
    annotate.add_routes(app)
    seen: list[str] = []
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with _serving(app) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        for n, user in enumerate((ann, bo)):
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            token, _ = store.open_session(user)
            context.add_cookies([{"name": SESSION_COOKIE, "value": token, "url": base}])
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            page.on(
                "response",
                lambda r: seen.append(r.text()) if "/api/study/annotate/" in r.url else None,
            )
            page.goto(base + "#/annotate/metric2")
            for i in range(5):
                page.wait_for_selector(f"[data-testid=annotate-progress]:text-is('{i} of 5 rated')")
                page.wait_for_selector("[data-testid=annotate-context]")
                if n == 0 and i == 0:
                    _shot(page, "annotate-metric2")
                for criterion, score in SCORES[(i + n) % 5].items():
                    page.check(f"fieldset[data-criterion={criterion}] input[value='{score}']")
                page.click("form.annotate-form button[type=submit]")
            page.wait_for_selector("[data-testid=annotate-done]")
            assert page.text_content("[data-testid=annotate-progress]") == "5 of 5 rated"
            if n == 0:
                page.goto(base + "#/annotate/validity")
                page.wait_for_selector("[data-testid=annotate-instance]")
                page.check("input[name=valid][value=no]")
                page.click("form.annotate-form button[type=submit]")
                page.wait_for_selector("form.annotate-form p.error:has-text('Write a reason')")
                page.fill("textarea[name=reason]", "the last assertion contradicts the statement")
                _shot(page, "annotate-validity", full_page=True)
                page.click("form.annotate-form button[type=submit]")
                page.wait_for_selector("[data-testid=annotate-done]")
            assert errors == []
            context.close()
        browser.close()
        token, _ = store.open_session(admin)
        request = urllib.request.Request(
            base + "api/study/annotate/export?kind=metric2&format=jsonl",
            headers={"Cookie": f"{SESSION_COOKIE}={token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            exported = response.read().decode()
    # Blind: no answer the browser got holds the judge's verdict.
    assert seen and not any('"judge"' in body for body in seen)
    path = tmp_path / "human.jsonl"
    path.write_text(exported, encoding="utf-8")
    table, unmatched = agreement.agreement_rows(path, runs_dir / "escape-judged")
    assert not unmatched
    assert [r["n"] for r in table] == [15, 5, 5, 5]
    assert {h.annotators for h in agreement.load_human_scores(path)} == {("ann", "bo")}
    (label,) = annotate.export_validity(store)
    assert label["valid"] is False and label["annotator"] == "ann"


def _shot(page: Page, name: str, *, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the page's helpers")
def test_the_page_reads_a_rating_only_when_complete() -> None:
    source = (STATIC_DIR / "annotate.js").read_text(encoding="utf-8")
    assert "innerHTML" not in source and "insertAdjacentHTML" not in source
    cases = [
        ["metric2", {"originality": "3", "elaboration": "5", "groundedness": "1"}],
        ["metric2", {"originality": "3", "elaboration": "6", "groundedness": "1"}],
        ["metric2", {"originality": "3"}],
        ["validity", {"valid": "yes"}],
        ["validity", {"valid": "no", "reason": "  "}],
        ["validity", {"valid": "no", "reason": " wrong test "}],
        ["validity", {}],
    ]
    program = (
        source.replace("export ", "")
        + f"\nconst out = {json.dumps(cases)}.map(([k, v]) => readRating(k, v));"
        + "\nout.push(historyLine({step: 3, action: 'click(x)', response: 'ok'}));"
        + "\nprocess.stdout.write(JSON.stringify(out));"
    )
    done = subprocess.run(
        [shutil.which("node") or "node", "--input-type=commonjs", "-e", program],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [
        {"value": {"originality": 3, "elaboration": 5, "groundedness": 1}},
        {"missing": "elaboration"},
        {"missing": "elaboration"},
        {"value": {"valid": True, "reason": ""}},
        {"missing": "reason"},
        {"value": {"valid": False, "reason": "wrong test"}},
        {"missing": "valid"},
        "[Step 3] click(x) -> ok",
    ]
