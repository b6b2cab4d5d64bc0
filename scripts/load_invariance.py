"""Load invariance (issue 48): do item outcomes depend on how busy the machine is?

    python scripts/load_invariance.py runs   --cases A,B --out DIR [--workers 1,8] [--burners 2]
    python scripts/load_invariance.py eighty --cases A,B --out DIR [--fraction 0.8] [--burners 2]
    python scripts/load_invariance.py cost   --cases A,B --out DIR [--uncut RUN] [--ceiling USD]
    python scripts/load_invariance.py compare RUN_A RUN_B

A scripted OpenAI-compatible server on 127.0.0.1 (``tests/scripted_llm.py``) drives
``--agent swe-agent --model scripted`` through a correct setup of each case: it writes the case's
golden setup to ``/enconda/output/setup.sh`` and runs it in the agent's box (one bash call), writes
what the oracle agent returns (``diagnosis.json`` with the golden errors, an AEC case's reference
``test_command``) and submits. Every answer reports the same token usage, so ``--model-price``
gives each call the same cost.

- ``runs``: the cases at each ``--workers`` count, all at once (each run is the others' load),
  with ``--burners`` busy loops in a container beside them; prints each run's item outcomes,
  the items whose outcome differs, agents cut by their clock, replays re-run with calibrated
  budgets, and the load seen.
- ``eighty``: the agent first does CPU-bound work (``--units`` sha256 loops), then the setup.
  An idle pass (``--idle-workers``, the cases' own budgets) measures each agent's time; the
  cases are then copied under ``--out`` with ``agent_seconds`` set so that time is
  ``--fraction`` of it, and run under load at ``--loaded-workers``. Its outputs come after its
  CPU work, so an agent cut by its clock leaves the later ones unwritten: a cut shows as a
  ``timeout`` status and failed items.
- ``cost``: the cases with ``--max-cost`` low enough to stop the run partway (beside an uncut
  run of them, unless ``--uncut`` names one), then ``--resume`` with a high ceiling; the resumed
  outcomes are compared with the uncut run's.

Figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_enconda.agents.prompts import SUBMIT
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.records import RunDir

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmark_cases"
OUTPUT = "/enconda/output"
# Every call reports these tokens; at --model-price 1,1 a call costs $0.0101.
PROMPT_TOKENS = 10_000
COMPLETION_TOKENS = 100
PRICE = "1,1"
CALL_USD = (PROMPT_TOKENS + COMPLETION_TOKENS) / 1e6
BURNER_LABEL = "io.enconda.load-burner"


def _scripted_llm() -> Any:
    """tests/scripted_llm.py, loaded by path: the tests' own server, not a copy of it."""
    spec = importlib.util.spec_from_file_location("scripted_llm", ROOT / "tests/scripted_llm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LLM = _scripted_llm()


# ----------------------------------------------------------------------------- the agent's script


def find_case(name: str, bench: Path = BENCH) -> Path:
    found = sorted(bench.glob(f"*/{name}/case.toml"))
    if len(found) != 1:
        raise SystemExit(f"--cases: {name!r}: {len(found)} case.toml under {bench}/*/{name}/")
    return found[0]


def heredoc(path: str, text: str) -> str:
    marker = "ENCONDA_LOAD_EOF"
    if marker in text:
        raise ValueError(f"{path}: the text holds the heredoc marker {marker}")
    return f"mkdir -p {OUTPUT} && cat > {path} <<'{marker}'\n{text.rstrip()}\n{marker}"


def cpu_unit(loops: int) -> str:
    """A CPU-bound command: ``loops`` chained sha256 digests in the box's python3."""
    code = f"import hashlib\nh = b''\nfor _ in range({loops}):\n    h = hashlib.sha256(h).digest()"
    return f"python3 -c {shlex.quote(code)} && echo cpu-unit-done"


def agent_script(case: Case, units: int = 0, loops: int = 0) -> list[str]:
    """The commands of a correct setup of ``case``, after ``units`` CPU-bound commands."""
    if case.golden_setup_text is None:
        raise SystemExit(f"{case.id}: no golden setup to script")
    commands = [cpu_unit(loops) for _ in range(units)]
    commands.append(heredoc(f"{OUTPUT}/setup.sh", case.golden_setup_text))
    # The golden setup is sourced, as the replay does, so `source .venv/bin/activate` holds.
    commands.append(
        f"set -o pipefail; bash -eo pipefail -c 'source {OUTPUT}/setup.sh' 2>&1 | tail -n 20"
    )
    if case.golden.errors:
        errors = [
            {
                "error_type": error.error_type,
                "error_description": error.error_description,
                "fix_suggestion": error.golden_answer,
            }
            for error in case.golden.errors
        ]
        text = json.dumps({"detected_errors": errors}, indent=1)
        commands.append(heredoc(f"{OUTPUT}/diagnosis.json", text))
    aec = case.spec.aec
    if aec is not None and aec.reference is not None and aec.reference.test_command:
        commands.append(heredoc(f"{OUTPUT}/test_command", aec.reference.test_command))
    commands.append(f"echo {SUBMIT}")
    return commands


class Responder:
    """Answers each conversation from its case's script: step k runs command k, then submits."""

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        self.scripts = scripts
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> tuple[int, dict]:
        text = LLM.prompt_text(request)
        case_id = text.split("# Task ", 1)[1].split()[0] if "# Task " in text else ""
        script = self.scripts.get(case_id)
        if script is None:
            return 400, {"error": {"message": f"no script for case {case_id!r}", "type": "test"}}
        step = LLM.step_of(request)
        with self._lock:
            self.calls[case_id] = self.calls.get(case_id, 0) + 1
        command = script[min(step, len(script) - 1)]
        return 200, LLM.tool_call(
            command,
            thought=f"step {step}",
            prompt_tokens=PROMPT_TOKENS,
            completion_tokens=COMPLETION_TOKENS,
            call_id=f"call_{step}",
        )


# ----------------------------------------------------------------------------- load


class LoadSampler:
    """The 1-minute load average every ``every`` seconds, on a thread."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(self.every)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, float]:
        if not self.samples:
            return {}
        return {
            "min": min(self.samples),
            "median": round(statistics.median(self.samples), 2),
            "max": max(self.samples),
        }


def code_state(out: Path) -> dict[str, Any]:
    """The commit measured and the files changed beside it; the package's diff is kept in
    ``out``, so a run of uncommitted code can be told apart."""

    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True).stdout

    changed = [line[3:] for line in git("status", "--short").splitlines() if line[3:]]
    diff = git("diff", "HEAD", "--", "pytest_enconda")
    digest = hashlib.sha256(diff.encode()).hexdigest()[:12]
    if diff:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"package-{digest}.diff").write_text(diff)
    return {
        "head": git("rev-parse", "--short", "HEAD").strip(),
        "changed": changed,
        "package_diff_sha256": digest,
    }


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def burner_image() -> str:
    out = subprocess.run(
        ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    bases = [name for name in out if "bookworm" in name and name.startswith("enconda")]
    if not bases:
        raise SystemExit("--burners: no enconda bookworm base image here yet (run a case first)")
    return bases[0]


class Burners:
    """``count`` busy loops in one container of the base image, removed on exit."""

    def __init__(self, count: int, name: str) -> None:
        self.count = count
        self.name = name

    def __enter__(self) -> Burners:
        if self.count:
            loop = " & ".join(["while :; do :; done"] * self.count) + " & wait"
            subprocess.run(
                ["docker", "run", "-d", "--rm", "--name", self.name, "--label", BURNER_LABEL,
                 "--network", "none", burner_image(), "bash", "-c", loop],
                check=True, capture_output=True,
            )  # fmt: skip
        return self

    def __exit__(self, *_: object) -> None:
        if self.count:
            subprocess.run(["docker", "rm", "-f", self.name], capture_output=True)


# ----------------------------------------------------------------------------- running pytest


@dataclass
class Leg:
    """One pytest run: its folder, worker count and extra options."""

    name: str
    run_dir: Path
    workers: int
    extra: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=lambda: [str(BENCH)])
    # Another checkout of the project (e.g. `git archive` of an older commit) to run instead.
    code: Path | None = None
    rc: int | None = None
    seconds: float = 0.0


def selection(cases: list[str]) -> str:
    return " or ".join(cases)


def pytest_argv(leg: Leg, cases: list[str], api_base: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", *leg.paths, "-k", selection(cases),
        "-n", str(leg.workers), "-p", "no:cacheprovider", "-q", "--no-header",
        "--agent", "swe-agent", "--model", "scripted", "--api-base", api_base,
        "--model-price", PRICE, "--run-dir", str(leg.run_dir), *leg.extra,
    ]  # fmt: skip


def run_legs(legs: list[Leg], cases: list[str], api_base: str, logs: Path) -> None:
    """Every leg at once (each is the others' load); each one's output goes to its log."""
    logs.mkdir(parents=True, exist_ok=True)
    started: list[tuple[Leg, subprocess.Popen, float, Any]] = []
    for leg in legs:
        handle = (logs / f"{leg.name}.log").open("w")
        argv = pytest_argv(leg, cases, api_base)
        handle.write(" ".join(argv) + "\n")
        handle.flush()
        env = dict(os.environ)
        if leg.code is not None:
            # Its package is found on sys.path before the editable install's finder.
            env["PYTHONPATH"] = str(leg.code)
        process = subprocess.Popen(
            argv, cwd=leg.code or ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT
        )
        started.append((leg, process, time.monotonic(), handle))
    # Polled, not waited for in turn: each leg's time is its own, not the slowest one's before it.
    waiting = list(started)
    while waiting:
        for entry in list(waiting):
            leg, process, began, handle = entry
            if process.poll() is not None:
                leg.rc, leg.seconds = process.returncode, time.monotonic() - began
                handle.close()
                waiting.remove(entry)
        time.sleep(1)


def with_server(scripts: dict[str, list[str]]) -> Any:
    server = LLM.ScriptedServer()
    server.responder = Responder(scripts)
    server.start()
    return server


# ----------------------------------------------------------------------------- reading a run


@dataclass
class CaseFacts:
    status: str = "-"
    wall_time: float = 0.0
    wall_budget: float | None = None
    calls: int = 0
    first_attempt: bool = False
    clock: dict[str, Any] = field(default_factory=dict)


def read_outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    read = RunDir(run_dir).results_file.read()
    return {key: row.label for key, row in read.rows.items()}


def case_facts(run_dir: Path, case_id: str) -> CaseFacts:
    folder = run_dir / "cases" / case_id
    facts = CaseFacts()
    outcome_file = folder / "agent" / "outcome.json"
    if outcome_file.is_file():
        # Read as JSON, not as AgentOutcome: a run of another version of the code (--compare-code)
        # may record fields this version's model does not know.
        raw = json.loads(outcome_file.read_text())
        facts.status, facts.wall_time = str(raw["status"]), round(float(raw["wall_time"]), 1)
        budget = (raw.get("config") or {}).get("wall_seconds")
        facts.wall_budget = float(budget) if isinstance(budget, int | float) else None
        facts.calls = int((raw.get("usage") or {}).get("calls", 0))
        # The agent's clock (agents/clock.py, issue 48 item 1), where this version records it.
        clock = raw.get("clock") if isinstance(raw.get("clock"), dict) else {}
        facts.clock = {k: clock[k] for k in ("factor", "measured", "capped") if k in clock}
    record = folder / "execution" / "record.json"
    if record.is_file():
        facts.first_attempt = json.loads(record.read_text()).get("first_attempt") is not None
    return facts


def describe_run(leg: Leg, cases: list[str]) -> dict[str, Any]:
    outcomes = read_outcomes(leg.run_dir)
    counts: dict[str, int] = {}
    for label in outcomes.values():
        counts[label] = counts.get(label, 0) + 1
    facts = {case: case_facts(leg.run_dir, case).__dict__ for case in cases}
    return {
        "name": leg.name,
        "workers": leg.workers,
        "rc": leg.rc,
        "seconds": round(leg.seconds, 1),
        "items": len(outcomes),
        "counts": counts,
        "cases": facts,
    }


def differences(a: Path, b: Path) -> list[str]:
    first, second = read_outcomes(a), read_outcomes(b)
    lines = []
    for key in sorted(set(first) | set(second)):
        left, right = first.get(key, "absent"), second.get(key, "absent")
        if left != right:
            lines.append(f"{key[0]}::{key[1]}: {left} vs {right}")
    return lines


def print_run(summary: dict[str, Any]) -> None:
    print(
        f"\n{summary['name']}: -n {summary['workers']}, exit {summary['rc']}, "
        f"{summary['seconds']} s, {summary['items']} items {summary['counts']}"
    )
    for case, facts in summary["cases"].items():
        clock = ", ".join(f"{k}={v}" for k, v in facts["clock"].items())
        print(
            f"  {case:32} agent {facts['status']:16} {facts['wall_time']:7.1f} s of "
            f"{facts['wall_budget']} s, {facts['calls']} calls"
            + (", replay re-run calibrated" if facts["first_attempt"] else "")
            + (f" [{clock}]" if clock else "")
        )


def save(out: Path, name: str, data: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    print(f"\nwritten: {out / name}.json")


# ----------------------------------------------------------------------------- the legs


def load_cases(names: list[str], bench: Path = BENCH) -> list[Case]:
    return [load_case(find_case(name, bench), roots=[bench]) for name in names]


def measure(
    legs: list[Leg], cases: list[str], scripts: dict[str, list[str]], out: Path, burners: int
) -> dict[str, Any]:
    """Run ``legs`` at once beside ``burners`` busy loops; their summaries and the load."""
    server = with_server(scripts)
    before = uptime()
    code = code_state(out)
    try:
        with LoadSampler() as load, Burners(burners, f"h7-load-burner-{os.getpid()}"):
            run_legs(legs, cases, server.api_base, out / "logs")
    finally:
        server.stop()
    result = {
        "code": code,
        "uptime_before": before,
        "uptime_after": uptime(),
        "load_during": load.figures(),
        "burners": burners,
        "model_calls": server.responder.calls,
        "runs": [describe_run(leg, cases) for leg in legs],
    }
    print(f"\nload: before [{before}], during {result['load_during']}, after [{uptime()}]")
    for summary in result["runs"]:
        print_run(summary)
    return result


def leg_runs(args: argparse.Namespace) -> None:
    cases = args.cases
    scripts = {case.id: agent_script(case) for case in load_cases(cases)}
    legs = [Leg(f"n{n}", args.out / f"run-n{n}", n, list(args.pytest_option)) for n in args.workers]
    result = measure(legs, cases, scripts, args.out, args.burners)
    result["differences"] = {}
    for leg in legs[1:]:
        diff = differences(legs[0].run_dir, leg.run_dir)
        result["differences"][f"{legs[0].name} vs {leg.name}"] = diff
        print(f"\n{legs[0].name} vs {leg.name}: {len(diff)} item(s) differ")
        for line in diff:
            print(f"  {line}")
    save(args.out, "runs", result)


def budgeted_copy(cases: list[Case], dest: Path, budgets: dict[str, int]) -> Path:
    """The cases (and the repositories they name) copied under ``dest`` with their
    ``agent_seconds`` replaced by ``budgets``; the folder to collect."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(BENCH / "repos", dest / "repos")
    # The repositories' own tests are not this run's (the project's conftest.py says so for
    # benchmark_cases/repos; a copy outside the project needs its own).
    (dest / "conftest.py").write_text('collect_ignore_glob = ["repos/*"]\n')
    for case in cases:
        source = find_case(case.id).parent
        target = dest / source.parent.name / source.name
        shutil.copytree(source, target)
        toml = target / "case.toml"
        lines = toml.read_text().splitlines()
        swapped = [
            f"agent_seconds = {budgets[case.id]}" if line.startswith("agent_seconds") else line
            for line in lines
        ]
        if swapped == lines:
            raise SystemExit(f"{toml}: no agent_seconds line to replace")
        toml.write_text("\n".join(swapped) + "\n")
    return dest


def leg_eighty(args: argparse.Namespace) -> None:
    names = args.cases
    cases = load_cases(names)
    scripts = {case.id: agent_script(case, args.units, args.loops) for case in cases}
    result: dict[str, Any] = {"fraction": args.fraction, "units": args.units, "loops": args.loops}
    idle_dir = args.idle_run or args.out / "idle"
    if args.idle_run is None:
        idle = Leg("idle", idle_dir, args.idle_workers, list(args.pytest_option))
        result["idle"] = measure([idle], names, scripts, args.out, burners=0)
    idle_times = {name: case_facts(idle_dir, name) for name in names}
    budgets = {}
    for name, facts in idle_times.items():
        if facts.status != "completed":
            raise SystemExit(f"{name}: the idle agent ended {facts.status}: no time to scale")
        # The idle pass ran at whatever load the machine had: its time is an upper bound of an
        # idle machine's, so the agent uses at most `fraction` of this budget when idle. (Its
        # clock's factor is recorded, not divided out: the CPU probe reads a busy machine as
        # slower than a setup that waits on the network finds it.)
        budgets[name] = math.ceil(facts.wall_time / args.fraction)
    result["idle_agent"] = {name: facts.__dict__ for name, facts in idle_times.items()}
    result["budgets"] = budgets
    print(f"\nbudgets (agent_seconds of the copies): {budgets}")
    if args.idle_only:
        save(args.out, "eighty-idle", result)
        return
    copied = budgeted_copy(cases, args.out / "cases", budgets)
    extra, paths = list(args.pytest_option), [str(copied)]
    loaded = [
        Leg(f"loaded-n{n}", args.out / f"loaded-n{n}", n, extra, paths) for n in args.loaded_workers
    ]
    if args.compare_code is not None:
        loaded += [
            Leg(f"other-n{n}", args.out / f"other-n{n}", n, extra, paths, code=args.compare_code)
            for n in args.loaded_workers
        ]
    result["loaded"] = measure(loaded, names, scripts, args.out, args.burners)
    result["agent_vs_idle"] = {}
    for summary in result["loaded"]["runs"]:
        rows = {}
        for case, facts in summary["cases"].items():
            idle = idle_times[case]
            rows[case] = {
                "status": facts["status"],
                "used": round(facts["wall_time"] / facts["wall_budget"], 3)
                if facts["wall_budget"]
                else None,
                "slower_than_idle": round(facts["wall_time"] / idle.wall_time, 2)
                if idle.wall_time
                else None,
                "factor": facts["clock"].get("factor"),
            }
        result["agent_vs_idle"][summary["name"]] = rows
        cut = [case for case, row in rows.items() if row["status"] != "completed"]
        print(f"\n{summary['name']}: {len(cut)} of {len(names)} agents cut {cut}")
        for case, row in rows.items():
            print(f"  {case:32} {row}")
    save(args.out, "eighty", result)


def leg_cost(args: argparse.Namespace) -> None:
    names = args.cases
    scripts = {case.id: agent_script(case) for case in load_cases(names)}
    calls = sum(len(script) for script in scripts.values())
    ceiling = args.ceiling or round(calls * CALL_USD / 2, 4)
    run_dir = args.out / "run-cut"
    extra = list(args.pytest_option)
    cut = Leg("cut", run_dir, args.workers, [*extra, "--max-cost", str(ceiling)])
    legs = [cut]
    uncut_dir = args.uncut
    if uncut_dir is None:
        # The uncut run beside the cut one: each is the other's load.
        uncut_dir = args.out / "run-uncut"
        legs.append(Leg("uncut", uncut_dir, args.workers, extra))
    result: dict[str, Any] = {"ceiling": ceiling, "expected_calls": calls, "call_usd": CALL_USD}
    result["cut"] = measure(legs, names, scripts, args.out, args.burners)
    result["cut_outcomes"] = _count(read_outcomes(run_dir))
    resumed = Leg(
        "resumed", run_dir, args.workers, [*extra, "--max-cost", "100", "--resume", str(run_dir)]
    )
    result["resumed"] = measure([resumed], names, scripts, args.out, args.burners)
    diff = differences(uncut_dir, run_dir)
    result["resumed_vs_uncut"] = diff
    print(f"\nceiling ${ceiling}: cut run {result['cut_outcomes']}, exit {cut.rc}")
    print(f"resumed (exit {resumed.rc}) vs uncut {uncut_dir}: {len(diff)} item(s) differ")
    for line in diff:
        print(f"  {line}")
    save(args.out, "cost", result)


def _count(outcomes: dict[tuple[str, str], str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in outcomes.values():
        counts[label] = counts.get(label, 0) + 1
    return counts


def leg_compare(args: argparse.Namespace) -> None:
    diff = differences(args.run_a, args.run_b)
    print(f"{len(diff)} item(s) differ")
    for line in diff:
        print(f"  {line}")


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _ints(value: str) -> list[int]:
    return [int(part) for part in _csv(value)]


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = top.add_subparsers(dest="leg", required=True)
    for name, run in (("runs", leg_runs), ("eighty", leg_eighty), ("cost", leg_cost)):
        leg = sub.add_parser(name)
        leg.set_defaults(run=run)
        leg.add_argument("--cases", type=_csv, required=True, help="case ids, comma-separated")
        leg.add_argument("--out", type=Path, required=True, help="a new folder for the runs")
        leg.add_argument("--burners", type=int, default=0, help="busy loops in a container")
        leg.add_argument(
            "--pytest-option", action="append", default=[], help="passed to every pytest run"
        )
    sub.choices["runs"].add_argument("--workers", type=_ints, default=[1, 8])
    eighty = sub.choices["eighty"]
    eighty.add_argument("--fraction", type=float, default=0.8)
    eighty.add_argument("--units", type=int, default=6, help="CPU-bound commands per agent")
    eighty.add_argument("--loops", type=int, default=3_000_000, help="sha256 rounds per command")
    eighty.add_argument("--idle-run", type=Path, default=None, help="reuse this idle pass")
    eighty.add_argument("--loaded-workers", type=_ints, default=[8])
    eighty.add_argument(
        "--compare-code",
        type=Path,
        default=None,
        help="also run the loaded pass with this checkout (e.g. the code before a change)",
    )
    eighty.add_argument("--idle-workers", type=int, default=1)
    eighty.add_argument("--idle-only", action="store_true", help="stop after the idle pass")
    cost = sub.choices["cost"]
    cost.add_argument(
        "--uncut", type=Path, default=None, help="a run of the same cases (default: run one)"
    )
    cost.add_argument("--ceiling", type=float, default=None, help="default: half the spend")
    cost.add_argument("--workers", type=int, default=2)
    compare = sub.add_parser("compare")
    compare.set_defaults(run=leg_compare)
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    return top


def main() -> None:
    args = parser().parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
