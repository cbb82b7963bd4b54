"""Human play in the browser: episodes played through the PlayManager and the play routes are
ordinary records of agent `human`, survive a restart by their journal, stay their player's, and
never show a player the gold."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.web import admin_routes, play
from forkingpaths.web.accounts import STORE, StudyStore
from forkingpaths.web.play import PlayError, PlayManager, PlayNotFound

GRIDDAG = "low-easy-s0"
PASSWORD = "player-secret-456"


async def reference_actions(benchmark: str, instance_id: str, agent: str) -> list[str]:
    """The actions a reference agent takes in trial 0 of an instance: a person's scripted moves."""
    bench = make_benchmark(benchmark)
    instance = bench.instance(instance_id)
    seed = bench.episode_seed(instance, 0, 0)
    player = bench.make_agent(agent, None, {})
    player.reset(instance, seed)
    record = EpisodeRecord(
        run_id="reference",
        benchmark=bench.id,
        split=instance.split,
        instance_id=instance.id,
        seed=seed,
        agent=agent,
    )
    await bench.run_episode(instance, player, record)
    return [step.action for step in record.steps]


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    return StudyStore(tmp_path / "study.sqlite")


@pytest.fixture
async def manager(tmp_path: Path, store: StudyStore) -> AsyncIterator[PlayManager]:
    plays = PlayManager(tmp_path, store)
    yield plays
    await plays.aclose()


async def test_a_griddag_instance_played_to_the_goal_is_a_record_of_agent_human(
    tmp_path: Path, manager: PlayManager
) -> None:
    moves = await reference_actions("griddag", GRIDDAG, "frontier")
    session = await manager.start("ann", "griddag", GRIDDAG)
    first = session.state()
    assert first["waiting"] and not first["done"] and first["step"] == 0
    assert first["observation"]["text"].startswith("OBSERVATION: You are at")
    for n, move in enumerate(moves, 1):
        state = (await manager.act(session.id, "ann", move, thought=f"move {n}")).state()
        assert state["step"] == n
        assert state["history"][-1]["action"] == move
    assert state["done"] and state["status"] == "done" and not state["waiting"]
    assert "Task complete!" in state["observation"]["text"]
    with pytest.raises(PlayError):
        await manager.act(session.id, "ann", "up")

    run = RunDirectory(tmp_path / "human-griddag-ann")
    assert run.read_header().spec.agent == "human"
    assert run.read_header().spec.model is None
    [record] = run.latest_records().values()
    bench = make_benchmark("griddag")
    assert (record.agent, record.model, record.status) == ("human", None, "ok")
    assert record.instance_id == GRIDDAG and record.trial == 0
    assert record.seed == bench.episode_seed(bench.instance(GRIDDAG), 0, 0)
    assert [s.action for s in record.steps] == moves
    assert record.steps[0].thought == "move 1"
    assert record.outcome["success"] is True
    assert record.metrics == bench.episode_metrics(record)
    assert state["metrics"]["success"] is True
    metrics = json.loads(run.metrics_path.read_text())
    assert metrics["agent"] == "human" and metrics["episodes"]["ok"] == 1
    assert metrics["metrics"]["success_rate"] == 1.0

    # Played again: a new session on the next trial, into the same run directory.
    again = await manager.start("ann", "griddag", GRIDDAG)
    assert again.id != session.id and again.trial == 1 and again.state()["step"] == 0


async def test_an_eeb_maze_level_is_played_with_its_action_codes(
    tmp_path: Path, manager: PlayManager
) -> None:
    bench = make_benchmark("eeb")
    maze = bench.instances("maze")[0].id
    moves = await reference_actions("eeb", maze, "reference")
    session = await manager.start("ann", "eeb", maze)
    observation = session.state()["observation"]
    assert observation["data"]["map"] and observation["data"]["max_steps"] == 100
    assert "Available actions" in observation["text"]
    for move in moves:
        state = (await manager.act(session.id, "ann", move)).state()
    assert state["done"]
    [record] = RunDirectory(tmp_path / "human-eeb-ann").latest_records().values()
    assert record.agent == "human" and [s.action for s in record.steps] == moves
    assert record.metrics == bench.episode_metrics(record)
    assert state["metrics"]["game"] == "maze"

    # A maze action as the buttons send it, and a match-2 click as the board sends it.
    other = bench.instances("maze")[1].id
    button = await manager.act((await manager.start("ann", "eeb", other)).id, "ann", "Action: 9")
    assert button.state()["history"][0]["valid"] is True
    match2 = bench.instances("match2")[0].id
    board = (await manager.start("ann", "eeb", match2)).state()["observation"]["data"]["board"]
    click = json.dumps({"action": {"type": "hammer", "pos": [0, 0]}})
    clicked = await manager.act((await manager.start("ann", "eeb", match2)).id, "ann", click)
    assert clicked.state()["history"][0]["valid"] is False  # a hammer costs points: none yet
    assert clicked.state()["observation"]["data"]["board"] == board


async def test_a_restarted_server_resumes_a_session_from_its_journal(
    tmp_path: Path, store: StudyStore
) -> None:
    moves = await reference_actions("griddag", GRIDDAG, "frontier")
    first = PlayManager(tmp_path, store)
    session = await first.start("ann", "griddag", GRIDDAG)
    for move in moves[:3]:
        await first.act(session.id, "ann", move)
    before = session.state()
    await first.aclose()  # the server is killed: nothing but the study file and the runs stay

    second = PlayManager(tmp_path, store)
    resumed = await second.get(session.id, "ann")
    assert resumed.state() == before
    assert (await second.start("ann", "griddag", GRIDDAG)).id == session.id
    # An action journaled just before a crash (the env never answered it) is played on resume.
    second._journal(session.id, 3, moves[3], "")
    await second.aclose()
    third = PlayManager(tmp_path, store)
    state = (await third.get(session.id, "ann")).state()
    assert state["step"] == 4 and state["history"][-1]["action"] == moves[3]
    for move in moves[4:]:
        state = (await third.act(session.id, "ann", move)).state()
    assert state["done"]
    [record] = RunDirectory(tmp_path / "human-griddag-ann").latest_records().values()
    assert [s.action for s in record.steps] == moves and record.outcome["success"] is True
    await third.aclose()
    # Finished: a fresh server shows the recorded episode and its metrics.
    fourth = PlayManager(tmp_path, store)
    done = (await fourth.get(session.id, "ann")).state()
    assert done["done"] and done["metrics"]["success"] is True and done["step"] == len(moves)
    await fourth.aclose()


async def test_a_person_cannot_read_or_act_on_another_persons_session(
    manager: PlayManager,
) -> None:
    session = await manager.start("ann", "griddag", GRIDDAG)
    with pytest.raises(PlayNotFound):
        await manager.get(session.id, "bob")
    with pytest.raises(PlayNotFound):
        await manager.act(session.id, "bob", "up")
    with pytest.raises(PlayNotFound):
        await manager.get("0" * 32, "ann")
    assert session.state()["step"] == 0


async def test_a_player_never_receives_the_gold(manager: PlayManager) -> None:
    bench = make_benchmark("griddag")
    world = bench.make_env(bench.instance(GRIDDAG)).world  # type: ignore[attr-defined]
    state = (await manager.start("ann", "griddag", GRIDDAG)).state()
    text = json.dumps(state)
    assert set(state["observation"]["data"]) <= play.OBSERVATION_FIELDS["griddag"]
    assert "budget" not in text and "outcome" not in text
    hidden = [n for n in world.nodes if n not in state["observation"]["text"]]
    assert hidden and not any(f'"{name}"' in text for name in hidden)

    match2 = make_benchmark("eeb").instances("match2")[0].id
    data = (await manager.start("ann", "eeb", match2)).state()["observation"]["data"]
    assert "groups" not in data and data["board"]

    escape = make_benchmark("escape")
    scenario = escape.instances(escape.default_split)[0]
    state = (await manager.start("ann", "escape", scenario.id)).state()
    text = json.dumps(state)
    assert "outcome" not in text and "paths_total" not in text
    env = escape.make_env(scenario)
    paths = [p.id for p in env.unwrapped.meta.paths]  # type: ignore[attr-defined]
    assert paths and not any(f'"{path}"' in text for path in paths)

    soup = make_benchmark("turtlesoup")
    puzzle = soup.instances(soup.default_split)[0]
    state = (await manager.start("ann", "turtlesoup", puzzle.id)).state()
    bottom = soup.make_env(puzzle).puzzle.bottom  # type: ignore[attr-defined]
    assert bottom and bottom not in json.dumps(state, ensure_ascii=False)
    assert "initial_info" not in state["observation"]["data"]


# ---- the routes ----


@pytest.fixture
async def server(tmp_path: Path, store: StudyStore) -> AsyncIterator[TestServer]:
    app = web.Application()
    app[STORE] = store
    admin_routes.add_routes(app)
    play.add_routes(app, runs_dir=tmp_path)
    store.add_user("ann", PASSWORD, "player")
    store.add_user("bob", PASSWORD, "player")
    store.add_user("vic", PASSWORD, "viewer")
    store.assign("ann", "play", "griddag", [GRIDDAG])
    store.assign("bob", "play", "griddag", [GRIDDAG])
    async with TestServer(app) as test_server:
        yield test_server


async def _login(server: TestServer, name: str) -> tuple[TestClient, dict[str, str]]:
    client = TestClient(server)
    await client.start_server()
    response = await client.post("/api/study/auth/login", json={"name": name, "password": PASSWORD})
    assert response.status == 200, await response.text()
    return client, {"X-CSRF-Token": (await response.json())["csrf"]}


async def _post(
    client: TestClient, path: str, body: dict, headers: dict[str, str], status: int = 200
) -> dict:
    response = await client.post(path, json=body, headers=headers)
    assert response.status == status, await response.text()
    return await response.json()


async def test_the_routes_play_an_assigned_instance_for_its_player_only(
    tmp_path: Path, server: TestServer, store: StudyStore
) -> None:
    moves = await reference_actions("griddag", GRIDDAG, "frontier")
    ann, ann_csrf = await _login(server, "ann")
    bob, bob_csrf = await _login(server, "bob")
    vic, vic_csrf = await _login(server, "vic")
    try:
        start = {"benchmark": "griddag", "instance": GRIDDAG}
        unassigned = {"benchmark": "griddag", "instance": "low-easy-s1"}
        error = await _post(ann, "/api/study/play/start", unassigned, ann_csrf, 403)
        assert set(error) == {"error"} and "instance" in error["error"]
        await _post(vic, "/api/study/play/start", start, vic_csrf, 403)
        await _post(ann, "/api/study/play/start", start, {}, 403)  # no CSRF header
        state = await _post(ann, "/api/study/play/start", start, ann_csrf)
        sid = state["session"]
        assert state["waiting"] and state["step"] == 0

        # Bob's own session is another; Ann's is not his to read or play.
        assert (await _post(bob, "/api/study/play/start", start, bob_csrf))["session"] != sid
        response = await bob.get(f"/api/study/play/state?session={sid}")
        assert response.status == 404 and GRIDDAG not in await response.text()
        act = {"session": sid, "action": moves[0]}
        await _post(bob, "/api/study/play/act", act, bob_csrf, 404)
        await _post(ann, "/api/study/play/act", {"session": sid}, ann_csrf, 400)

        for move in moves:
            state = await _post(ann, "/api/study/play/act", {**act, "action": move}, ann_csrf)
        assert state["done"] and state["metrics"]["success"] is True
        response = await ann.get(f"/api/study/play/state?session={sid}")
        assert (await response.json())["done"]
        [assignment] = store.assignments("ann", "play")
        assert assignment.done
        # A done assignment shows the recorded episode again, never a second try.
        again = await _post(ann, "/api/study/play/start", start, ann_csrf)
        assert again["session"] == sid and again["done"]
        await _post(ann, "/api/study/play/act", act, ann_csrf, 409)
        [record] = RunDirectory(tmp_path / "human-griddag-ann").latest_records().values()
        assert record.agent == "human" and record.outcome["success"] is True
    finally:
        for client in (ann, bob, vic):
            await client.close()


async def test_a_server_killed_after_the_record_closes_the_episode_on_restart(
    tmp_path: Path, store: StudyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed right after the record was appended: rescoring never ran, the row still says
    # running. The next start finds the record and finishes the job; no second try opens.
    store.add_user("ann", PASSWORD, "player")
    store.assign("ann", "play", "griddag", [GRIDDAG])
    moves = await reference_actions("griddag", GRIDDAG, "frontier")
    first = PlayManager(tmp_path, store)

    def killed(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed")

    monkeypatch.setattr(first, "_close_recorded", killed)
    session = await first.start("ann", "griddag", GRIDDAG)
    for move in moves:
        try:
            await first.act(session.id, "ann", move)
        except (PlayError, RuntimeError):
            break
    await first.aclose()
    run = RunDirectory(tmp_path / "human-griddag-ann")
    assert len(run.latest_records()) == 1 and not run.metrics_path.exists()

    restarted = PlayManager(tmp_path, store)
    try:
        again = await restarted.start("ann", "griddag", GRIDDAG)
        assert again.trial == 0 and again.state()["done"]
        assert [a.done for a in store.assignments("ann", "play")] == [True]
        assert json.loads(run.metrics_path.read_text())["episodes"]["ok"] == 1
    finally:
        await restarted.aclose()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"user": "ann", "kind": "play", "benchmark": "gridag", "items": [GRIDDAG]}, "griddag"),
        ({"user": "ann", "kind": "play", "benchmark": "griddag", "items": ["nope"]}, "'nope'"),
        (
            {"user": "ann", "kind": "play", "benchmark": "creativebench", "items": ["combo-01"]},
            "not played in the browser",
        ),
        ({"user": "vic", "kind": "play", "benchmark": "griddag", "items": [GRIDDAG]}, "viewer"),
        ({"user": "ann", "kind": "metric2", "items": ["run|x|0|0|1"]}, "annotator"),
        ({"user": "nobody", "kind": "play", "benchmark": "griddag", "items": [GRIDDAG]}, "nobody"),
    ],
)
async def test_an_assignment_that_cannot_be_done_is_refused_when_made(
    server: TestServer, store: StudyStore, body: dict, says: str
) -> None:
    store.add_user("ada", PASSWORD, "admin")
    before = store.assignments(None)
    admin, csrf = await _login(server, "ada")
    try:
        response = await admin.post("/api/study/admin/assign", json=body, headers=csrf)
        assert response.status in (400, 404), await response.text()
        error = await response.json()
    finally:
        await admin.close()
    assert says in error["error"] and "\n" not in error["error"]
    assert store.assignments(None) == before
