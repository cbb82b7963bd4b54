"""Runs the README's offline commands, prints what they print, and checks (or rewrites) the
sample outputs the README shows.

    .venv/bin/python scripts/readme_outputs.py            # run every offline command, print outputs
    .venv/bin/python scripts/readme_outputs.py --list     # which commands are offline, and why not
    .venv/bin/python scripts/readme_outputs.py --check    # exit 1 when a README sample is stale
    .venv/bin/python scripts/readme_outputs.py --update   # rewrite the README's samples in place
    .venv/bin/python scripts/readme_outputs.py --only griddag   # commands containing "griddag"

Offline: a fenced `bash` command of `forkingpaths` whose models are all `scripted/` (or none),
with no endpoint, no shell operator, no person to wait for and no server, whose input files
exist (or are among `INPUTS`, written for it); a fenced `python` block that names no provider's
model. Each runs for real in a fresh working directory (so `runs/` lands there), paths of the
repository made absolute.

A sample output is the fenced block right after a line `<!-- output of: COMMAND -->`, COMMAND
written as in the README; its rows (`name  value  [comment]`, after a `metric  value` header, and
`run directory: ...` / `report: ...`) must equal the rows of the same name that COMMAND prints.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

INPUTS = {
    # `eeb replay`: the maze's actions by number or by the name the game lists them with.
    "moves.txt": "Move RIGHT 1 step\nMove UP 1 step\n9\n",
    # `creativebench exec`: the tests are appended to the solution, so they call it directly.
    "solution.py": 'def add(a, b):\n    return a + b\n\n\nif __name__ == "__main__":\n'
    "    print(add(2, 3))\n",
    "tests.py": 'def test():\n    assert add(2, 3) == 5\n\n\nif __name__ == "__main__":\n'
    "    test()\n",
    # `creativebench exec --batch`: one (solution, tests) row per line.
    "rows.jsonl": '{"id": "ok", "solution": "def add(a, b):\\n    return a + b\\n", '
    '"tests": "assert add(2, 3) == 5\\n"}\n'
    '{"id": "wrong", "solution": "def add(a, b):\\n    return a - b\\n", '
    '"tests": "assert add(2, 3) == 5\\n"}\n',
    # `creativebench novelty` / `robustness`: two programs.
    "a.py": "def add(a, b):\n    return a + b\n",
    "b.py": "def add(x, y):\n    total = x\n    total += y\n    return total\n",
}
"""Input files that README commands name, written into the working directory before they run."""

MODEL_FLAGS = ("--model", "--generator", "--embedding")
ENDPOINT_FLAGS = (
    "--base-url",
    "--embedding-base-url",
    "--role-base-url",
    "--api-key-env",
    "--role-api-key-env",
)
SHELL_OPERATORS = ("&", "&&", "||", "|", ">", ">>", "<", ";")
FILE_SUFFIXES = (".json", ".jsonl", ".txt", ".py", ".yaml", ".yml", ".pt", ".list", ".csv")
PROVIDER_MODEL = re.compile(r"[\"'](?:openai|openai-compat|hf|litellm|local)/")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SAMPLE = re.compile(r"^<!-- output of: (.+?) -->\n```\w*\n(.*?)^```", re.M | re.S)
TABLE_ROW = re.compile(r"^\s*[│┃]\s*(.+?)\s*[│┃]\s*(.*?)\s*[│┃]\s*$")
TRAILING_COMMENT = re.compile(r"^#.*$|\s{2,}#.*$")
PATH_ROW = re.compile(r"^(run directory|report): (.+)$")


@dataclass(frozen=True)
class Command:
    """One README command: a bash command line or a python block."""

    text: str
    """As the README writes it: continuation lines joined, comments dropped (bash)."""
    language: str
    line: int
    """The README line it starts on."""
    skip: str | None
    """Why it does not run offline; None when it does."""

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text, comments=True)


@dataclass(frozen=True)
class Sample:
    """A sample output block of the README and the command that prints it."""

    command: str
    body: str
    start: int
    end: int
    """The body's span in the README text."""


@dataclass(frozen=True)
class Output:
    command: Command
    returncode: int
    stdout: str
    stderr: str


def commands(text: str) -> list[Command]:
    """Every command of the README's fenced bash and python blocks, classified."""
    found: list[Command] = []
    for block in FENCE.finditer(text):
        language, body = block.group(1), block.group(2)
        first = text.count("\n", 0, block.start(2)) + 1
        if language == "python":
            why = "names a provider's model" if PROVIDER_MODEL.search(body) else None
            found.append(Command(body, "python", first, why))
        elif language == "bash":
            found.extend(_bash_commands(body, first))
    return found


def _bash_commands(body: str, first: int) -> list[Command]:
    found, pending, start = [], "", first
    for number, line in enumerate(body.splitlines(), first):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.strip()[:-1].strip() + " "
            continue
        joined = TRAILING_COMMENT.sub("", pending + line.strip())
        pending = ""
        tokens = shlex.split(joined, comments=True)
        if tokens:
            found.append(Command(joined, "bash", start, why_not_offline(tokens)))
    return found


def why_not_offline(argv: list[str]) -> str | None:
    """None when the command runs here with no model endpoint, key, person or server."""
    if not argv[0].endswith("forkingpaths"):
        return f"not a forkingpaths command ({argv[0]})"
    if any(t in SHELL_OPERATORS for t in argv):
        return "a shell job (redirect, pipe or background)"
    serving = argv[1:2] in (["mockserver"], ["study"]) or argv[2:3] in (["serve"], ["play"])
    if serving or (argv[1:2] == ["view"] and "--bundle" not in argv):
        return "serves, or waits for a person"
    if _flag_values(argv, "--agent") == ["human"]:
        return "waits for a person (--agent human)"
    for flag in MODEL_FLAGS:
        for model in _flag_values(argv, flag):
            if not model.startswith("scripted/") and model not in ("none", "scripted"):
                return f"calls {model}"
    for role in _flag_values(argv, "--role"):
        model = role.partition("=")[2]
        if not model.startswith("scripted/"):
            return f"calls {model}"
    for flag in ENDPOINT_FLAGS:
        if flag in argv:
            return f"needs an endpoint ({flag})"
    for token in _path_tokens(argv):
        if token not in INPUTS and not (ROOT / token).exists():
            return f"needs {token}"
    return None


def _flag_values(argv: list[str], flag: str) -> list[str]:
    values = []
    for i, token in enumerate(argv):
        if token == flag and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif token.startswith(flag + "="):
            values.append(token.partition("=")[2])
    return values


def _path_tokens(argv: list[str]) -> list[str]:
    """The tokens that name files: arguments and option values (after `KEY=` too) that hold a
    `/` or end with a file suffix, models and URLs aside."""
    models = {v for flag in (*MODEL_FLAGS, "--role") for v in _flag_values(argv, flag)}
    paths = []
    for token in argv[1:]:
        if token.startswith("-") or token in models:
            continue
        value = token.partition("=")[2] if "=" in token else token
        if "://" not in value and ("/" in value or value.endswith(FILE_SUFFIXES)):
            paths.append(value)
    return paths


def samples(text: str) -> list[Sample]:
    return [
        Sample(m.group(1).strip(), m.group(2), m.start(2), m.end(2)) for m in SAMPLE.finditer(text)
    ]


def run_command(command: Command, workdir: Path, timeout: float = 600) -> Output:
    """Run one offline command in `workdir` (its `INPUTS` written there first)."""
    for name, content in INPUTS.items():
        (workdir / name).write_text(content, encoding="utf-8")
    env = {
        **os.environ,
        "COLUMNS": "200",  # tables unwrapped
        "FORKINGPATHS_CACHE_DIR": str(workdir / ".cache"),
    }
    if command.language == "python":
        argv = [sys.executable, "-c", command.text]
    else:
        argv = [*_forkingpaths(), *(_absolute(t) for t in command.argv[1:])]
    done = subprocess.run(
        argv,
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return Output(command, done.returncode, done.stdout, done.stderr)


def _forkingpaths() -> list[str]:
    script = Path(sys.executable).with_name("forkingpaths")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from forkingpaths.cli import main; main()"]


def _absolute(token: str) -> str:
    """A path of the repository (`src/.../000.json`) made absolute; anything else as is."""
    if token in INPUTS or "/" not in token or token.startswith(("-", "/")):
        return token
    return str(ROOT / token) if (ROOT / token).exists() else token


def printed_rows(stdout: str) -> dict[str, str]:
    """The `name -> value` rows a command printed: its table, run directory and report."""
    rows: dict[str, str] = {}
    for line in stdout.splitlines():
        if match := TABLE_ROW.match(line) or PATH_ROW.match(line.strip()):
            rows.setdefault(match.group(1), match.group(2))
    return rows


def sample_rows(body: str) -> list[tuple[str, str, str]]:
    """(name, value, comment) of each row of a sample block, its `metric  value` header aside."""
    rows = []
    for line in body.splitlines():
        if not line.strip() or re.fullmatch(r"metric\s+value", line.strip()):
            continue
        if match := PATH_ROW.match(line.strip()):
            rows.append((match.group(1), match.group(2), ""))
            continue
        name, value, *comment = re.split(r"\s{2,}", line.strip(), maxsplit=2)
        rows.append((name, value, comment[0] if comment else ""))
    return rows


def check_sample(sample: Sample, stdout: str) -> list[str]:
    """What in the sample differs from what its command printed (empty: it matches)."""
    printed = printed_rows(stdout)
    problems = []
    for name, value, _ in sample_rows(sample.body):
        if name not in printed:
            problems.append(f"{sample.command}: {name!r} is not printed")
        elif printed[name] != value:
            problems.append(
                f"{sample.command}: {name} is {printed[name]!r}, the README shows {value!r}"
            )
    return problems


def regenerate(sample: Sample, stdout: str) -> str:
    """The sample's body with the printed values, its rows, order and comments kept."""
    printed = printed_rows(stdout)
    rows = [(n, printed.get(n, v), c) for n, v, c in sample_rows(sample.body)]
    table = [(n, v, c) for n, v, c in rows if n not in ("run directory", "report")]
    name_width = max([len("metric"), *(len(n) for n, _, _ in table)]) + 2
    value_width = max([len("value"), *(len(v) for _, v, _ in table)])
    lines = ["metric".ljust(name_width) + "value".rjust(value_width)] if table else []
    for name, value, comment in rows:
        if name in ("run directory", "report"):
            lines.append(f"{name}: {value}")
        else:
            line = name.ljust(name_width) + value.rjust(value_width)
            lines.append(f"{line}    {comment}" if comment else line)
    return "\n".join(lines) + "\n"


def find_command(found: list[Command], text: str) -> Command:
    """The README command a sample names (as written, whitespace aside)."""
    wanted = shlex.split(text)
    for command in found:
        if command.language == "bash" and command.argv == wanted:
            return command
    raise SystemExit(f"README: the sample of {text!r} names no command of a bash block")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="classify the commands, run none")
    parser.add_argument("--check", action="store_true", help="exit 1 when a sample is stale")
    parser.add_argument("--update", action="store_true", help="rewrite the samples in README.md")
    parser.add_argument("--only", action="append", help="run the commands containing this")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    found = commands(text)
    if args.list:
        for command in found:
            first = command.text.splitlines()[0]
            print(f"{command.line:4d}  {command.skip or 'offline':45.45}  {first}")
        return 0
    offline = [c for c in found if c.skip is None]
    if args.only:
        offline = [c for c in offline if any(o in c.text for o in args.only)]
    outputs: dict[str, Output] = {}
    with tempfile.TemporaryDirectory(prefix="readme-outputs-") as tmp:
        for number, command in enumerate(offline):
            workdir = Path(tmp) / str(number)
            workdir.mkdir()
            output = run_command(command, workdir)
            outputs[command.text] = output
            where = f"  # README line {command.line}, exit {output.returncode}"
            if command.language == "bash":
                print(f"$ {command.text}{where}")
            else:
                print(f"$ python - <<'EOF'{where}\n{command.text}EOF")
            print(output.stdout + output.stderr)
    problems, pieces, end = [], [], 0
    for sample in samples(text):
        command = find_command(found, sample.command)
        if command.text not in outputs:
            continue
        output = outputs[command.text]
        problems.extend(check_sample(sample, output.stdout))
        body = regenerate(sample, output.stdout)
        print(f"<!-- output of: {sample.command} -->\n```\n{body}```\n")
        pieces += [text[end : sample.start], body]
        end = sample.end
    updated = "".join([*pieces, text[end:]])
    failed = [o for o in outputs.values() if o.returncode != 0]
    for output in failed:
        problems.append(f"README line {output.command.line}: exit {output.returncode}")
    for problem in problems:
        print(f"STALE {problem}", file=sys.stderr)
    if args.update and updated != text:
        args.readme.write_text(updated, encoding="utf-8")
        print(f"rewrote the samples in {args.readme}", file=sys.stderr)
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    sys.exit(main())
