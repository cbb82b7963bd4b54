"""The `forkingpaths` command line (Typer): run, list, report, compare, estimate, mockserver."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.table import Table as RichTable

from forkingpaths.core.chat import ModelParams
from forkingpaths.core.errors import ConfigError, ForkingPathsError, NameNotFound
from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.core.registry import (
    MODEL_APIS,
    SUITES,
    benchmark_names,
    benchmark_table,
    load_entry_point,
    make_benchmark,
    scripted_policy_table,
)
from forkingpaths.models.cache import merge_caches
from forkingpaths.models.local import DEFAULT_CONTEXT, DEFAULT_THREADS, serve_local
from forkingpaths.models.runtime import NODE_CACHE_GLOB, ModelRuntime
from forkingpaths.report.compare import compare_runs
from forkingpaths.report.html import write_run_report
from forkingpaths.report.tables import format_value
from forkingpaths.report.transcript import (
    episode_view,
    episodes_table,
    find_episode,
    print_paged,
    step_view,
)
from forkingpaths.runner.arguments import (
    parse_extra_options,
    parse_options,
    parse_pairs,
    parse_roles,
)
from forkingpaths.runner.estimate import estimate_run
from forkingpaths.runner.index import EpisodeIndex, TextIndex
from forkingpaths.runner.reproduce import (
    OFFLINE,
    estimate_reproduction,
    list_reproductions,
    print_outcome,
    reproduce,
)
from forkingpaths.runner.run import (
    RETRY_HINT,
    RunResult,
    describe_errors,
    draw_run_figures,
    execute_run,
)
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run
from forkingpaths.runner.suite import (
    is_suite_directory,
    print_metrics,
    print_run_summary,
    rebuild_suite_report,
    run_suite,
)

RUNS_DIR = Path("runs")

# Options `run` and `reproduce` share: declared once, so their flags and help stay the same.
RoleOpt = Annotated[
    list[str] | None,
    typer.Option(help="model of a benchmark role, ROLE=MODEL (e.g. judge=openai/gpt-4.1)"),
]
RoleBaseUrlOpt = Annotated[
    list[str] | None, typer.Option(help="endpoint of a role's model, ROLE=URL")
]
RoleKeyOpt = Annotated[
    list[str] | None, typer.Option(help="env var with a role model's key, ROLE=VAR")
]
BaseUrlOpt = Annotated[str | None, typer.Option(help="endpoint for openai-compat/")]
KeyEnvOpt = Annotated[str | None, typer.Option(help="env var holding the endpoint's key")]
MaxTokensOpt = Annotated[int | None, typer.Option(help="completion token cap")]
ConcurrencyOpt = Annotated[int, typer.Option(help="episodes in flight")]
ModelConcurrencyOpt = Annotated[int, typer.Option(help="requests in flight per model")]
RpmOpt = Annotated[float | None, typer.Option(help="requests per minute limit")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="bypass the cache")]
RetryErrorsOpt = Annotated[bool, typer.Option(help="re-run errored episodes")]
MaxRetriesOpt = Annotated[int, typer.Option(help="retries per model call")]
TimeoutOpt = Annotated[float, typer.Option(help="seconds per HTTP request")]
PricesOpt = Annotated[Path | None, typer.Option(help="YAML price table override")]
RunsDirOpt = Annotated[Path, typer.Option(help="where run directories go")]
NoProgressOpt = Annotated[bool, typer.Option("--no-progress", help="no live progress display")]


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _print_table(console: Console, title: str, header: list[str], rows: list[list[Any]]) -> None:

    table = RichTable(title=title, title_justify="left")
    for h in header:
        table.add_column(h)
    for row in rows:
        table.add_row(*(format_value(c) for c in row))
    console.print(table)


def build_app(mount: str | None = "*") -> typer.Typer:
    """Build the Typer app; benchmark sub-commands are mounted from the registry: every
    benchmark's (`mount="*"`), one benchmark's (its name) or none (None)."""

    app = typer.Typer(
        help="forkingpaths: benchmarks of exploration, divergent thinking and imagination in "
        "LLM agents.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    # Piped output (logs, CI) gets a wide console so tables are not truncated to 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=160)

    @app.callback()
    def _root(
        verbose: Annotated[int, typer.Option("--verbose", "-v", count=True)] = 0,
    ) -> None:
        level = logging.WARNING - 10 * min(verbose, 2)
        # A terminal gets rich's columns; a pipe or a log file gets one plain line per record,
        # never wrapped, so a warning naming a file and a position can be grepped whole.
        handler: logging.Handler
        if sys.stderr.isatty():
            handler = RichHandler(console=Console(stderr=True), show_path=False)
        else:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)

    @app.command(
        "run",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def run_cmd(
        ctx: typer.Context,
        benchmark: Annotated[
            str | None, typer.Argument(help="benchmark name, e.g. griddag")
        ] = None,
        suite: Annotated[str | None, typer.Option(help="run a suite instead (quick)")] = None,
        agent: Annotated[str | None, typer.Option(help="agent name (see `list agents`)")] = None,
        model: Annotated[
            str | None, typer.Option(help="provider/model, e.g. openai/gpt-4.1")
        ] = None,
        split: Annotated[str | None, typer.Option(help="instance split")] = None,
        instances: Annotated[str | None, typer.Option(help="comma-separated instance ids")] = None,
        trials: Annotated[int, typer.Option(help="episodes per instance")] = 1,
        seed: Annotated[int, typer.Option(help="base seed")] = 0,
        agent_option: Annotated[
            list[str] | None, typer.Option("--agent-option", "-a", help="agent KEY=VALUE")
        ] = None,
        benchmark_option: Annotated[
            list[str] | None, typer.Option("--benchmark-option", "-b", help="benchmark KEY=VALUE")
        ] = None,
        role: RoleOpt = None,
        role_base_url: RoleBaseUrlOpt = None,
        role_api_key_env: RoleKeyOpt = None,
        base_url: BaseUrlOpt = None,
        api_key_env: KeyEnvOpt = None,
        temperature: Annotated[float, typer.Option(help="sampling temperature")] = 0.0,
        max_tokens: MaxTokensOpt = None,
        reasoning_effort: Annotated[str | None, typer.Option(help="low|medium|high")] = None,
        model_extra: Annotated[
            list[str] | None,
            typer.Option(help="provider-specific request field KEY=VALUE (e.g. top_k=20)"),
        ] = None,
        concurrency: ConcurrencyOpt = 8,
        model_concurrency: ModelConcurrencyOpt = 32,
        rpm: RpmOpt = None,
        executor: Annotated[
            str, typer.Option(help="local, or ray: an existing Ray cluster (the ray extra)")
        ] = "local",
        ray_address: Annotated[
            str | None,
            typer.Option(help="with --executor ray: auto, HOST:PORT of the head, or ray://…"),
        ] = None,
        ray_workers_per_node: Annotated[
            int, typer.Option(help="with --executor ray: worker actors per node (1 CPU each)")
        ] = 1,
        no_cache: NoCacheOpt = False,
        budget_usd: Annotated[float | None, typer.Option(help="stop scheduling once spent")] = None,
        retry_errors: RetryErrorsOpt = False,
        max_retries: MaxRetriesOpt = 6,
        timeout: TimeoutOpt = 120.0,
        prices: PricesOpt = None,
        force_new: Annotated[bool, typer.Option(help="start a new run directory")] = False,
        run_id: Annotated[str | None, typer.Option(help="run directory name")] = None,
        runs_dir: RunsDirOpt = RUNS_DIR,
        no_progress: NoProgressOpt = False,
        wandb: Annotated[
            str | None,
            typer.Option(
                "--wandb",
                metavar="PROJECT",
                help="log metrics, cost and an episode table to this W&B project as the run goes",
            ),
        ] = None,
    ) -> None:
        """Run (or resume) a benchmark, or a suite, and write its run directory.

        Options not listed here are the benchmark's own (`--max-steps 30` = `-b max_steps=30`).
        """

        options = RunOptions(
            concurrency=concurrency,
            executor=executor,  # type: ignore[arg-type]
            ray_address=ray_address,
            ray_workers_per_node=ray_workers_per_node,
            cache=not no_cache,
            budget_usd=budget_usd,
            retry_errors=retry_errors,
            model_concurrency=model_concurrency,
            requests_per_minute=rpm,
            max_retries=max_retries,
            request_timeout_s=timeout,
            prices_path=str(prices) if prices else None,
            progress=not no_progress and sys.stderr.isatty(),
        )
        if suite is not None:
            if benchmark is not None:
                raise ConfigError("give either a BENCHMARK or --suite, not both")
            if wandb is not None:
                raise ConfigError("--wandb logs one run: give a BENCHMARK, not --suite")

            results = run_suite(suite, options, runs_dir=runs_dir, console=console)
            _exit_on_errors(results)
            return
        if benchmark is None:
            raise ConfigError("name a BENCHMARK (see `forkingpaths list`) or pass --suite quick")
        bench_options = parse_options(benchmark_option, "--benchmark-option")
        extra = parse_extra_options(ctx.args)
        for key, value in extra.items():
            if key in bench_options:
                raise ConfigError(f"benchmark option {key!r} given twice (--{key} and -b)")
            bench_options[key] = value
        try:
            bench = make_benchmark(benchmark, **bench_options)
        except ConfigError as exc:
            if not extra:
                raise
            flags = ", ".join(f"--{k.replace('_', '-')}" for k in extra)
            raise ConfigError(
                f"No such option: {flags} (not a `run` option; as a benchmark option: {exc})"
            ) from None
        if agent is None:
            raise ConfigError(
                f"--agent is required; {bench.name} has: {', '.join(sorted(bench.agents))}"
            )
        if not (math.isfinite(temperature) and temperature >= 0):
            raise ConfigError(
                f"--temperature: got {temperature}; allowed: a finite number >= 0 (0 is greedy;"
                " OpenAI's API takes 0 to 2)"
            )
        spec = RunSpec(
            benchmark=bench.id,
            split=split or bench.default_split,
            instances=_csv(instances),
            trials=trials,
            seed=seed,
            agent=agent,
            agent_options=parse_options(agent_option, "--agent-option"),
            model=model,
            model_options=ModelOptions(
                base_url=base_url,
                api_key_env=api_key_env,
                params=ModelParams(
                    temperature=temperature,
                    max_tokens=max_tokens,
                    reasoning_effort=reasoning_effort,
                    extra=parse_options(model_extra, "--model-extra"),
                ),
            ),
            benchmark_options=bench.options,
            roles=parse_roles(role, role_base_url, role_api_key_env),
        )

        # Built before the run: a missing wandb package is refused before anything is written.
        observers = []
        if wandb is not None:
            from forkingpaths.export.wandb_log import WandbLogger

            observers.append(WandbLogger(wandb))
        result = _run_async(
            execute_run(
                spec,
                options,
                runs_dir=runs_dir,
                run_id=run_id,
                force_new=force_new,
                # The summary comes before the figures (matplotlib costs seconds): at a
                # terminal they are drawn by a process of their own and the prompt comes back;
                # otherwise (a script, CI) here, after the summary, so none outlives the command.
                figures="background" if _interactive(console) else "none",
                observers=observers,
            )
        )
        print_run_summary(console, bench, result)
        if result.report_written and result.figures is None:
            draw_run_figures(result)
        _exit_on_errors([result])

    @app.command("list")
    def list_cmd(
        what: Annotated[
            str, typer.Argument(help="benchmarks | agents | models | suites | all")
        ] = "all",
    ) -> None:
        """List registered benchmarks, agents, model providers, scripted policies and suites."""

        allowed = ("benchmarks", "agents", "models", "suites", "all")
        if what not in allowed:
            raise NameNotFound("listing", what, list(allowed))
        benches = [make_benchmark(n) for n in benchmark_names()]
        if what in ("benchmarks", "all"):
            rows = [[b.name, b.id, ", ".join(b.splits), b.description] for b in benches]
            _print_table(console, "Benchmarks", ["name", "id", "splits", "description"], rows)
        if what in ("agents", "all"):
            rows = [
                [b.name, name, "yes" if spec.needs_model else "no", spec.description]
                for b in benches
                for name, spec in b.agents.items()
            ]
            _print_table(console, "Agents", ["benchmark", "agent", "model", "description"], rows)
        if what in ("models", "all"):
            rows = [[f"{p}/<model>", api.factory.split(":")[0]] for p, api in MODEL_APIS.items()]
            rows += [[f"scripted/{n}", t.split(":")[0]] for n, t in scripted_policy_table().items()]
            _print_table(console, "Models", ["model id", "implemented in"], rows)
        if what in ("suites", "all"):
            _print_table(console, "Suites", ["suite", "runs"], [[k, v] for k, v in SUITES.items()])

    @app.command("reproduce")
    def reproduce_cmd(
        target: Annotated[
            str,
            typer.Argument(
                metavar="PAPER:ITEM", help="e.g. mutate:table2, or `list` to see them all"
            ),
        ],
        paper: Annotated[
            str | None,
            typer.Argument(metavar="PAPER", help="with `list`: only this paper's items"),
        ] = None,
        model: Annotated[
            str | None,
            typer.Option(help="provider/model, or `scripted` for the offline stand-ins"),
        ] = None,
        role: RoleOpt = None,
        role_base_url: RoleBaseUrlOpt = None,
        role_api_key_env: RoleKeyOpt = None,
        base_url: BaseUrlOpt = None,
        api_key_env: KeyEnvOpt = None,
        max_tokens: MaxTokensOpt = None,
        compare_to: Annotated[
            str | None,
            typer.Option(help="published model to set our numbers against (as the paper names it)"),
        ] = None,
        input_file: Annotated[
            list[str] | None,
            typer.Option("--input", help="a file the table needs, NAME=PATH (see `list`)"),
        ] = None,
        limit: Annotated[
            int | None, typer.Option(help="at most N instances per run (a smoke test)")
        ] = None,
        benchmark_option: Annotated[
            list[str] | None,
            typer.Option(
                "--benchmark-option",
                "-b",
                help="KEY=VALUE on every run whose benchmark has it (a deviation switched on)",
            ),
        ] = None,
        estimate: Annotated[
            bool, typer.Option("--estimate", help="print calls, tokens and cost; run nothing")
        ] = False,
        concurrency: ConcurrencyOpt = 8,
        model_concurrency: ModelConcurrencyOpt = 32,
        rpm: RpmOpt = None,
        no_cache: NoCacheOpt = False,
        budget_usd: Annotated[
            float | None, typer.Option(help="stop scheduling once this much is spent, all runs")
        ] = None,
        retry_errors: RetryErrorsOpt = False,
        max_retries: MaxRetriesOpt = 6,
        timeout: TimeoutOpt = 120.0,
        prices: PricesOpt = None,
        runs_dir: RunsDirOpt = RUNS_DIR,
        no_progress: NoProgressOpt = False,
    ) -> None:
        """Reproduce a paper's table or figure: run its protocol as ordinary (resumable) runs,
        then print our numbers beside the published ones and write report.html."""
        if target == "list":
            _print_reproductions(console, paper)
            return
        if paper is not None:
            raise ConfigError(f"unexpected argument {paper!r}: only `list` takes a PAPER")
        if estimate:
            if model is None or model == OFFLINE:
                raise ConfigError("--estimate prices a real model: pass --model provider/model")
            est = estimate_reproduction(
                target,
                model=model,
                roles=parse_roles(role, role_base_url, role_api_key_env),
                limit=limit,
                inputs=_input_paths(input_file),
                prices_path=prices,
                benchmark_options=parse_options(benchmark_option, "--benchmark-option"),
            )
            rows = [[*r[:5], f"{r[5]:.4f}", f"{r[6]:.4f}"] for r in est.rows]
            rows.append(
                [
                    "total",
                    "",
                    est.expected_calls,
                    est.upper_calls,
                    sum(r[4] for r in est.rows),
                    f"{est.expected_cost_usd:.4f}",
                    f"{est.upper_cost_usd:.4f}",
                ]
            )
            header = ["run", "agent", "calls", "calls (cap)", "tokens", "USD", "USD (cap)"]
            _print_table(console, f"Estimate: {target} with {model}", header, rows)
            console.print(
                "expected: each run as its scripted stand-in plays it; cap: every episode to "
                "its step cap",
                highlight=False,
            )
            for note in est.notes:
                console.print(f"note: {escape(note)}", highlight=False)
            return
        options = RunOptions(
            concurrency=concurrency,
            cache=not no_cache,
            budget_usd=budget_usd,
            retry_errors=retry_errors,
            model_concurrency=model_concurrency,
            requests_per_minute=rpm,
            max_retries=max_retries,
            request_timeout_s=timeout,
            prices_path=str(prices) if prices else None,
            progress=not no_progress and sys.stderr.isatty(),
        )
        inputs = _input_paths(input_file)
        outcome = _run_async(
            reproduce(
                target,
                model=model,
                model_options=ModelOptions(
                    base_url=base_url,
                    api_key_env=api_key_env,
                    params=ModelParams(max_tokens=max_tokens),
                ),
                roles=parse_roles(role, role_base_url, role_api_key_env),
                compare_to=compare_to,
                inputs=inputs,
                limit=limit,
                runs_dir=runs_dir,
                options=options,
                benchmark_options=parse_options(benchmark_option, "--benchmark-option"),
            )
        )
        print_outcome(console, outcome)
        _exit_on_errors(outcome.errored)

    @app.command("report")
    def report_cmd(
        run_dir: Annotated[
            Path,
            typer.Argument(help="a run directory (runs/<run-id>) or a suite's (runs/suite-quick)"),
        ],
    ) -> None:
        """Re-score a run (or every run of a suite) from its records and rebuild metrics.json
        and report.html."""
        if is_suite_directory(run_dir):
            console.print(f"report: {rebuild_suite_report(run_dir, console=console)}")
            return
        rd = RunDirectory(run_dir)
        # One pass over the records (never all in memory); the summary is printed before the
        # figures are drawn (matplotlib costs seconds), which this command waits for.
        metrics, bench, scored = rescore_run(rd)
        print_metrics(console, bench, metrics)
        write_run_report(rd, rd.read_header(), bench, scored, metrics)
        console.print(f"report: {rd.report_path}")

    @app.command("show")
    def show_cmd(
        run_dir: Annotated[Path, typer.Argument(help="a run directory (runs/<run-id>)")],
        episode: Annotated[
            str | None,
            typer.Argument(help="episode number (from the list), INSTANCE or INSTANCE#TRIAL"),
        ] = None,
        step: Annotated[int | None, typer.Option(help="one step in full, with its calls")] = None,
        call: Annotated[
            int | None, typer.Option(help="with --step: only this model call, messages whole")
        ] = None,
    ) -> None:
        """Print a run's transcripts: its episodes, an episode's steps, or a step's model calls
        with the exact messages sent and the replies (paged in a terminal)."""
        # A run's byte-offset indexes: a run of any size is listed from its episode index, and
        # one episode is read with only the texts its calls name.
        rd = RunDirectory(run_dir)
        header = rd.read_header()
        if episode is None and (step is not None or call is not None):
            raise ConfigError("--step and --call need an EPISODE (see the list without them)")
        if call is not None and step is None:
            raise ConfigError("--call needs --step N (the step the call belongs to)")
        # The list shows each episode's summary; one episode needs only where each lies.
        index = EpisodeIndex(rd.path, summaries=episode is None)
        entries = index.entries()
        if episode is None:
            print_paged(console, episodes_table(header, entries))
            return
        number = find_episode(entries, episode)
        record = index.read(number)
        TextIndex(rd.path).attach(record)
        view = episode_view(number, record) if step is None else step_view(record, step, call)
        print_paged(console, view)

    @app.command("compare")
    def compare_cmd(
        run_dirs: Annotated[list[Path], typer.Argument(help="run directories")],
        html: Annotated[Path | None, typer.Option(help="also write an HTML comparison")] = None,
    ) -> None:
        """Side-by-side table of the headline metrics of several runs."""

        def show(table: Any) -> None:  # a report.tables.Table
            # Runs as columns, fields as rows: stays readable in a narrow terminal.
            columns = [f"#{i + 1}" for i in range(len(table.rows))]
            header = table.header
            rows = [[field, *(row[j] for row in table.rows)] for j, field in enumerate(header)]
            _print_table(console, table.title, ["field", *columns], rows)

        # The table is printed before the HTML page's figures are drawn.
        _, path = compare_runs(run_dirs, html, show=show)
        if path:
            console.print(f"comparison: {path}")

    @app.command("estimate")
    def estimate_cmd(
        benchmark: Annotated[str, typer.Argument(help="benchmark name")],
        agent: Annotated[str, typer.Option(help="agent name")],
        model: Annotated[str, typer.Option(help="provider/model to price")],
        split: Annotated[str | None, typer.Option()] = None,
        instances: Annotated[str | None, typer.Option()] = None,
        trials: Annotated[int, typer.Option()] = 1,
        agent_option: Annotated[list[str] | None, typer.Option("--agent-option", "-a")] = None,
        completion_tokens: Annotated[
            int | None,
            typer.Option(help="assumed completion tokens per call (reasoning models write more)"),
        ] = None,
        prices: PricesOpt = None,
    ) -> None:
        """Predict a run's calls, tokens and cost without calling the model."""

        est = estimate_run(
            benchmark,
            agent=agent,
            model=model,
            split=split,
            instances=_csv(instances),
            trials=trials,
            agent_options=parse_options(agent_option, "--agent-option"),
            completion_tokens=completion_tokens,
            prices_path=prices,
        )
        _print_table(console, est.title, ["quantity", "expected", "upper bound"], est.rows)
        for note in est.notes:
            console.print(f"[dim]{note}[/dim]")

    export_app = typer.Typer(
        help="Write a run where researchers already look: an Inspect eval log, Parquet tables."
    )
    app.add_typer(export_app, name="export")

    @export_app.command("inspect")
    def export_inspect_cmd(
        run_dir: Annotated[Path, typer.Argument(help="a run directory (runs/<run-id>)")],
        out: Annotated[Path | None, typer.Option(help="the log file to write")] = None,
    ) -> None:
        """An Inspect AI eval log of the run (one sample per episode, every call's messages,
        the metrics as scores): `inspect view` opens it. Needs the `inspect` extra."""
        from forkingpaths.export.inspect_log import export_inspect

        _check_run_dir(run_dir)
        console.print(f"inspect log: {export_inspect(run_dir, out)}")

    @export_app.command("parquet")
    def export_parquet_cmd(
        run_dir: Annotated[Path, typer.Argument(help="a run directory (runs/<run-id>)")],
        out: Annotated[
            Path | None, typer.Option(help="the folder to write the tables into")
        ] = None,
        push_to_hub: Annotated[
            str | None, typer.Option(help="also upload the tables to this Hugging Face dataset")
        ] = None,
    ) -> None:
        """The run's episodes, steps and model calls as Parquet tables (schema in
        docs/export-parquet.md), for pandas and `datasets`. Needs the `parquet` extra."""
        from forkingpaths.export.parquet import export_parquet
        from forkingpaths.export.parquet import push_to_hub as upload

        _check_run_dir(run_dir)
        tables = export_parquet(run_dir, out)
        for name, path in tables.items():
            console.print(f"{name}: {path}")
        if push_to_hub:
            upload(next(iter(tables.values())).parent, push_to_hub)
            console.print(f"pushed to https://huggingface.co/datasets/{push_to_hub}")

    cache_app = typer.Typer(help="The response cache: one SQLite file, one more per Ray node.")
    app.add_typer(cache_app, name="cache")

    @cache_app.command("merge")
    def cache_merge_cmd(
        files: Annotated[
            list[Path] | None,
            typer.Argument(help="cache files to merge (default: responses.node-*.sqlite)"),
        ] = None,
        into: Annotated[
            Path | None, typer.Option(help="the cache file to merge into (default: the shared)")
        ] = None,
    ) -> None:
        """Join the per-node cache files a Ray run wrote into one file, so every later run,
        local or on Ray, replays their answers. The files are kept; merging twice adds nothing."""
        target = into if into is not None else ModelRuntime().shared_cache_path()
        sources = list(files) if files else sorted(target.parent.glob(NODE_CACHE_GLOB))
        if not sources:
            raise ConfigError(
                f"no per-node cache files ({NODE_CACHE_GLOB}) in {str(target.parent)!r}; "
                "name the files to merge (copy them here from each node first)"
            )
        result = merge_caches(sources, target)
        console.print(
            f"merged {len(result.sources)} file{'s' * (len(result.sources) != 1)} into "
            f"{result.into}: {result.added} new "
            f"answers, {result.already} already there"
        )

    local_app = typer.Typer(help="Local GGUF models on llama.cpp's server (the `local` extra).")
    app.add_typer(local_app, name="local")

    @local_app.command("serve")
    def local_serve_cmd(
        model: Annotated[
            str, typer.Argument(help="smollm2-135m, gemma3-270m or a PATH.gguf")
        ] = "smollm2-135m",
        n_ctx: Annotated[int, typer.Option(help="context window, tokens")] = DEFAULT_CONTEXT,
        threads: Annotated[int, typer.Option(help="decoding threads")] = DEFAULT_THREADS,
    ) -> None:
        """Serve a local model until Ctrl-C and print the --base-url to use with it."""
        name = model.removeprefix("local/")
        options = ModelOptions(
            params=ModelParams(extra={"local_n_ctx": n_ctx, "local_threads": threads})
        )

        def ready(base_url: str, served: str) -> None:
            console.print(
                f"serving local/{name} at {base_url}\n"
                f"use: --model openai-compat/{served} --base-url {base_url}   (Ctrl-C stops it)",
                highlight=False,
            )

        serve_local(name, options, ready)

    @app.command("view")
    def view_cmd(
        paths: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="[RUNS_DIR] | RUN...",
                help="the runs folder to serve (default: runs); with --bundle, the runs to copy "
                "(run directories or folders of runs)",
                show_default=False,
            ),
        ] = None,
        port: Annotated[int, typer.Option(help="port to listen on (0: any free port)")] = 8765,
        host: Annotated[str, typer.Option(help="interface; loopback unless you share it")] = (
            "127.0.0.1"
        ),
        bundle: Annotated[
            Path | None,
            typer.Option(help="write a static copy of the runs into this folder instead"),
        ] = None,
    ) -> None:
        """Open runs in the browser: the runs, a run's tables and figures, every episode's steps
        and model calls beside its world, and comparisons. Read-only."""
        from forkingpaths.web.bundle import MARKER as BUNDLE_MARKER
        from forkingpaths.web.bundle import write_bundle
        from forkingpaths.web.data import Viewer
        from forkingpaths.web.server import serve

        if bundle is not None:
            if not paths:
                raise ConfigError(
                    "--bundle OUT needs the runs to copy: forkingpaths view --bundle OUT RUN..."
                )
            replaced = (bundle / BUNDLE_MARKER).exists()
            index = write_bundle(bundle, paths)
            if replaced:
                console.print(f"replaced the earlier bundle in {bundle}")
            console.print(f"bundle: {index}  (open it in a browser, or serve its folder)")
            return
        if paths and len(paths) > 1:
            raise ConfigError(
                f"RUNS_DIR: got {len(paths)} folders; serve one folder (its runs are found "
                "inside it), or give several runs with --bundle"
            )
        runs_dir = paths[0] if paths else Path("runs")
        if not runs_dir.is_dir():
            raise ConfigError(
                f"RUNS_DIR {runs_dir}: "
                + ("is not a folder" if runs_dir.exists() else "does not exist")
                + "; give the folder your runs are written to (--runs-dir of `forkingpaths run`)"
            )
        if is_suite_directory(runs_dir):
            # A suite's folder holds its report; its runs sit beside it.
            console.print(f"{runs_dir} is a suite's folder: serving the runs beside it")
            runs_dir = runs_dir.parent
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port}: allowed: 0..65535 (0 picks a free port)")

        def ready(url: str) -> None:
            console.print(f"forkingpaths view: {url}  (runs under {runs_dir}; Ctrl-C stops it)")
            if host not in ("127.0.0.1", "localhost", "::1"):
                logging.getLogger(__name__).warning(
                    "listening on %s: anyone who can reach it can read these runs", host
                )

        _serve_until_stopped(serve(Viewer(runs_dir), host, port, ready), host, port)

    @app.command("study")
    def study_cmd(
        runs_dir: Annotated[
            Path, typer.Argument(help="the runs folder: played episodes and study.sqlite go here")
        ] = Path("runs"),
        port: Annotated[int, typer.Option(help="port to listen on (0: any free port)")] = 8765,
        host: Annotated[str, typer.Option(help="interface; loopback unless you share it")] = (
            "127.0.0.1"
        ),
        role: RoleOpt = None,
        role_base_url: RoleBaseUrlOpt = None,
        role_api_key_env: RoleKeyOpt = None,
    ) -> None:
        """Run a human study in the browser: accounts (viewer, player, annotator, admin), people
        playing assigned instances under the agents' protocol, annotation of judged steps and
        built instances. The first start prints a one-time link that creates the admin."""
        from forkingpaths.web.study import serve_study

        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port}: allowed: 0..65535 (0 picks a free port)")
        if runs_dir.exists() and not runs_dir.is_dir():
            raise ConfigError(f"RUNS_DIR {runs_dir}: is not a folder")
        runs_dir.mkdir(parents=True, exist_ok=True)
        roles = parse_roles(role, role_base_url, role_api_key_env)

        def ready(url: str, token: str | None) -> None:
            console.print(f"forkingpaths study: {url}  (runs under {runs_dir}; Ctrl-C stops it)")
            if token:
                console.print(f"first start: create the admin at {url}#/setup?token={token}")

        _serve_until_stopped(serve_study(runs_dir, host, port, roles, ready), host, port)

    @app.command("mockserver")
    def mockserver_cmd(
        port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
        host: Annotated[str, typer.Option(help="interface")] = "127.0.0.1",
        latency_ms: Annotated[float, typer.Option(help="added latency per request")] = 0.0,
        latency_jitter_ms: Annotated[
            float, typer.Option(help="latency varies uniformly by +- this much")
        ] = 0.0,
        error_rate: Annotated[
            float | None, typer.Option(help="fraction of requests faulted")
        ] = None,
        fault: Annotated[str | None, typer.Option(help="429|500|timeout|malformed|empty")] = None,
        seed: Annotated[int, typer.Option(help="fault sequence seed")] = 0,
    ) -> None:
        """Serve every scripted model over the OpenAI chat API, with injectable faults."""
        from forkingpaths.models.mockserver import serve_forever

        # MockServer validates every option, naming it and what is allowed.
        serve_forever(
            port=port,
            host=host,
            latency_ms=latency_ms,
            latency_jitter_ms=latency_jitter_ms,
            error_rate=error_rate or 0.0,
            fault=fault,
            seed=seed,
        )

    for bid, path in sorted(benchmark_table().items()):
        if mount != "*" and bid.rsplit("-v", 1)[0] != mount:
            continue
        cls = load_entry_point(path)
        entry = getattr(cls, "cli_entry_point", None)
        if entry:
            app.add_typer(load_entry_point(entry), name=cls.name, help=cls.description)
    return app


def _check_run_dir(run_dir: Path) -> None:
    if not RunDirectory(run_dir).exists():
        raise ConfigError(f"RUN_DIR {run_dir}: not a run directory (no spec.json)")


def _serve_until_stopped(server: Any, host: str, port: int) -> None:
    """Run a web server until Ctrl-C; an address it cannot take is one line."""
    try:
        asyncio.run(server)
    except OSError as exc:
        raise ConfigError(
            f"--host {host} --port {port}: cannot listen ({exc.strerror or exc}); "
            "pick another port (--port 0 picks a free one)"
        ) from None
    except KeyboardInterrupt:
        pass


def _commands_to_mount(argv: list[str]) -> str | None:
    """Which benchmark's commands a command line needs: its own when it names a benchmark
    (`forkingpaths griddag ...`), all for the top-level help, none for the other commands (a
    benchmark's commands import its whole package: `run` should not pay for every one)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None:
        return "*"
    return command if command in benchmark_names() else None


def _interactive(console: Console) -> bool:
    """Whether a person waits at a terminal for the prompt (not a pipe, a script or CI)."""
    return console.is_terminal and not os.environ.get("CI")


def _input_paths(pairs: list[str] | None) -> dict[str, Path]:
    """`--input NAME=PATH` pairs; paths kept as typed (not read as YAML scalars)."""
    return {k: Path(v) for k, v in parse_pairs(pairs, "--input").items()}


def _print_reproductions(console: Console, paper: str | None) -> None:
    rows = []
    for entry in list_reproductions(paper):
        repro = entry.reproduction
        protocol = repro.description
        if repro.inputs:
            flags = " ".join(f"--input {n}=PATH" for n in repro.inputs)
            protocol += (
                f" (made first unless given: {flags})" if repro.prepare else f" (needs {flags})"
            )
        if repro.optional_inputs:
            optional = " ".join(f"--input {n}=PATH" for n in repro.optional_inputs)
            protocol += f" (optional {optional})"
        rows.append([repro.key, repro.title, protocol])
    _print_table(console, "Reproductions", ["PAPER:ITEM", "as printed", "protocol"], rows)


def _exit_on_errors(results: list[RunResult]) -> None:
    """After a run or a suite: when any planned episode is recorded as errored, say how many,
    grouped by cause, and how to retry them (on stderr), and exit 1."""
    errored = [r for r in results if r.errored]
    if not errored:
        return
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for result in errored:
        where = str(result.run_dir.path) if len(results) > 1 else ""
        for i, line in enumerate(describe_errors(result.errored, where)):
            err.print(f"[red]{escape(line)}[/red]" if i == 0 else escape(line))
    err.print(f"{RETRY_HINT} (finished episodes are kept)")
    raise typer.Exit(1)


def _run_async(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        Console(stderr=True).print(
            "[yellow]interrupted: finished episodes are saved; re-run the same command to "
            "resume[/yellow]"
        )
        raise typer.Exit(130) from None


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: user errors print one clear line and exit 2."""
    app = build_app(_commands_to_mount(sys.argv[1:] if argv is None else argv))
    try:
        # Without standalone mode the parser returns (not raises) the code of typer.Exit.
        code = app(args=argv, standalone_mode=False, prog_name="forkingpaths")
        if isinstance(code, int) and code:
            sys.exit(code)
    except ForkingPathsError as exc:
        _fail(str(exc))
    except ValidationError as exc:
        _fail(_describe_validation(exc))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        sys.exit(130)
    except OSError as exc:
        # A file or folder that cannot be read or written (a full disk, a read-only folder):
        # one line naming it, not a traceback. What was written before stays.
        name = f"{exc.filename}: " if exc.filename is not None else ""
        _fail(f"{name}{exc.strerror or exc}", code=1)
    except typer.TyperException as exc:  # usage errors: unknown flag, bad value, no command
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _fail(str(exc))
        sys.exit(exc.exit_code)


def _fail(message: str, code: int = 2) -> None:

    # Messages quote user input and `[row, col]` cells: never read them as markup.
    # One line whatever the terminal's width: a message is read (and grepped) whole.
    Console(stderr=True).print(
        f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(code)


# RunOptions fields whose flag is not the field name with dashes.
_FLAG_OF_FIELD = {"requests_per_minute": "--rpm", "request_timeout_s": "--timeout"}


def _describe_validation(exc: ValidationError) -> str:
    """A pydantic error on options as `--flag: what is wrong (got value)`."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"])
        flag = _FLAG_OF_FIELD.get(field, "--" + field.replace("_", "-"))
        parts.append(f"{flag}: {error['msg']} (got {error.get('input')!r})")
    return "; ".join(parts)


if __name__ == "__main__":
    main()
