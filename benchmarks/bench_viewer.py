"""The viewer on a large run: a generated run of 10,000 episodes and about 1 GB of records, served
by `forkingpaths view` in its own process. Prints how long the run page and episodes take to
open (the server's answers, and in a real browser when Playwright and chromium are there) and
the server's memory, with the run's index and without it (a run written before the index).

    python benchmarks/bench_viewer.py                       # 10,000 episodes, ~1 GB
    python benchmarks/bench_viewer.py --episodes 2000 --gb 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import free_port
from viewer_run import write_big_run

from forkingpaths.core.records import RunOptions
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import INDEX_FILE
from forkingpaths.runner.suite import quick_specs

LIMIT_MS = 300.0
LIMIT_MB = 300.0


def source_run(work: Path) -> Path:
    """The quick suite's eeb run with a scripted model: steps, model calls and a world view."""
    spec = next(s for s in quick_specs() if s.benchmark.startswith("eeb") and s.model)
    result = asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=work))
    return Path(result.run_dir.path)


@contextlib.contextmanager
def viewer(runs_dir: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "forkingpaths.cli", "view", str(runs_dir), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base, timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def get_ms(base: str, path: str, **params: object) -> tuple[float, int]:
    url = f"{base}api/{path}?{urllib.parse.urlencode(params)}"
    start = time.perf_counter()
    body = urllib.request.urlopen(url, timeout=120).read()
    return (time.perf_counter() - start) * 1000, len(body)


def rss_mb(pid: int) -> tuple[float, float]:
    """Resident memory now and at its peak (VmHWM), MiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


_SHOWN_AFTER = """(target) => new Promise((resolve) => {
  const t0 = performance.now();
  const seen = () => document.querySelector(target.sel);
  const observer = new MutationObserver(() => {
    if (seen()) { observer.disconnect(); resolve(performance.now() - t0); }
  });
  observer.observe(document.body, {childList: true, subtree: true});
  location.hash = target.hash;
})"""
"""Milliseconds from following a link inside the app to the page's content in the DOM."""

_FIRST_SEEN = """
window.__fpSeen = null;
new MutationObserver((_, observer) => {
  if (document.querySelector("table.fp-table tbody tr.clickable")) {
    window.__fpSeen = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
"""Milliseconds from the start of a page load to the run page's episode rows in the DOM."""


def browser_ms(base: str, key: str, episodes: list[int]) -> dict[str, float] | None:
    """The run page and episode pages in chromium (Playwright), timed inside the page: opened
    by their address (a fresh load of the app) and by a link from another page of the app."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    out: dict[str, float] = {}
    quoted = urllib.parse.quote(key, safe="")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(_FIRST_SEEN)
        loads = []
        for _ in range(3):
            page.goto(f"{base}#/run/{quoted}")
            # Polled: the app's Content-Security-Policy refuses wait_for_function's eval.
            seen = None
            while seen is None:
                seen = page.evaluate("window.__fpSeen")
                page.wait_for_timeout(20)
            loads.append(seen)
        out["run page by address (load of the app), median of 3"] = statistics.median(loads)
        links = []
        for _ in range(3):
            page.evaluate("location.hash = '#/'")
            page.wait_for_selector("text=Runs")
            target = {"sel": "table.fp-table tbody tr.clickable", "hash": f"#/run/{quoted}"}
            links.append(page.evaluate(_SHOWN_AFTER, target))
        out["run page from the runs list, median of 3"] = statistics.median(links)
        times = []
        for n in episodes:
            target = {"sel": ".timeline .step", "hash": f"#/run/{quoted}/episode/{n}"}
            times.append(page.evaluate(_SHOWN_AFTER, target))
        out[f"episode page, median of {len(times)}"] = statistics.median(times)
        out[f"episode page, slowest of {len(times)}"] = max(times)
        browser.close()
    return out


def measure(runs_dir: Path, key: str, episodes: int, label: str) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    rng = random.Random(0)
    picks = [rng.randrange(episodes) for _ in range(20)]
    with viewer(runs_dir) as (base, pid):
        cold_list, _ = get_ms(base, "runs")
        cold_run, _ = get_ms(base, "run", run=key)
        cold_eps, size = get_ms(base, "episodes", run=key)
        rows.append((f"{label}: first runs list (indexes the run)", f"{cold_list:,.0f} ms", ""))
        rows.append(
            (
                f"{label}: first run page (run + episode list)",
                f"{cold_run + cold_eps:,.0f} ms",
                f"< {LIMIT_MS:.0f} ms",
            )
        )
        warm = [sum(get_ms(base, p, run=key)[0] for p in ("run", "episodes")) for _ in range(5)]
        rows.append(
            (
                f"{label}: run page, median of 5",
                f"{statistics.median(warm):,.0f} ms",
                f"< {LIMIT_MS:.0f} ms",
            )
        )
        rows.append((f"{label}: episode list JSON", f"{size / 1e6:,.1f} MB", ""))
        times = [get_ms(base, "episode", run=key, n=n)[0] for n in picks]
        rows.append(
            (
                f"{label}: episode, median of 20 random",
                f"{statistics.median(times):,.1f} ms",
                f"< {LIMIT_MS:.0f} ms",
            )
        )
        rows.append(
            (f"{label}: episode, slowest of 20", f"{max(times):,.1f} ms", f"< {LIMIT_MS:.0f} ms")
        )
        times = [get_ms(base, "messages", run=key, n=n)[0] for n in picks[:10]]
        rows.append(
            (
                f"{label}: an episode's messages, median of 10",
                f"{statistics.median(times):,.1f} ms",
                "",
            )
        )
        browser = browser_ms(base, key, picks[:10])
        for name, value in (browser or {}).items():
            rows.append((f"{label}: browser, {name}", f"{value:,.0f} ms", f"< {LIMIT_MS:.0f} ms"))
        now, peak = rss_mb(pid)
        rows.append(
            (
                f"{label}: server memory now / peak",
                f"{now:,.0f} / {peak:,.0f} MiB",
                f"< {LIMIT_MB:.0f} MiB",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--gb", type=float, default=1.0, help="size of episodes.jsonl to reach")
    parser.add_argument("--keep", type=Path, help="write the run here and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="fp-bench-viewer-"))
    try:
        source = source_run(work / "source")
        runs_dir = work / "runs"
        key = "big-run"
        start = time.perf_counter()
        sizes = write_big_run(
            source, runs_dir / key, args.episodes, target_bytes=int(args.gb * 1e9)
        )
        written = time.perf_counter() - start
        gb, mb = sizes["episodes_bytes"] / 1e9, sizes["texts_bytes"] / 1e6
        gb, mb = sizes["episodes_bytes"] / 1e9, sizes["texts_bytes"] / 1e6
        print(
            f"generated {sizes['episodes']:,} episodes: episodes.jsonl {gb:.2f} GB, texts.jsonl "
            f"{mb:.1f} MB ({written:.0f} s); machine: {os.cpu_count()} CPUs"
        )
        rows = measure(runs_dir, key, args.episodes, "with index")
        index = runs_dir / key / INDEX_FILE
        index.rename(index.with_suffix(".aside"))
        try:
            rows += measure(runs_dir, key, args.episodes, "no index (older run)")
        finally:
            index.with_suffix(".aside").rename(index)
        width = max(len(r[0]) for r in rows)
        print(f"{'figure':<{width}}  {'measured':>18}  limit")
        for name, value, limit in rows:
            print(f"{name:<{width}}  {value:>18}  {limit}")
        print(json.dumps({"episodes": args.episodes, "bytes": sizes["episodes_bytes"]}))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
