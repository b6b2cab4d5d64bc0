"""The hostile-input suite's figures: inputs tried per kind, and what went wrong with them.

    python scripts/hostile_inputs.py          # count inputs from `pytest --collect-only -q`
    python scripts/hostile_inputs.py --run    # and run the suite: faults and reads per kind

Counting: each collected test id of ``tests/hostile`` is one input (a parametrized case is one
hostile file, record or tree); a property test (hypothesis) counts its ``max_examples``
generated inputs. A test whose input is read by several kinds of reader counts once for each
(a FIFO given as sidecar, subset file and self-report is three). ``--run`` runs the suite with
``ENCONDA_HOSTILE_FIGURES`` (``tests/hostile/conftest.py``): every read is timed, its peak
memory watched and its result searched for a canary host file's text, and the tally says how
many reads each kind took and how many crashed, hung (over 5 s), blew up (over 512 MB) or read
the host file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "hostile"
KINDS = [
    "case files",
    "datasets",
    "predictions",
    "sidecars",
    "subset files",
    "run directories",
    "agent outputs",
    "self-reports",
]
# The kinds each test's inputs are given as; by module, with the tests that differ named.
BY_MODULE = {
    "test_hostile_cases": ["case files"],
    "test_hostile_datasets": ["datasets"],
    "test_hostile_predictions": ["predictions"],
    "test_hostile_run_dirs": ["run directories"],
    "test_hostile_regrade": ["run directories"],
    "test_hostile_outputs": ["agent outputs"],
}
BY_TEST = {
    "test_hostile_sidecars_and_subsets_are_refused": ["sidecars", "subset files"],
    "test_special_files_as_sidecar_subset_or_report": ["sidecars", "subset files", "self-reports"],
    "test_deep_or_huge_self_reports_and_diagnoses": ["agent outputs", "self-reports"],
}


def kinds_of(module: str, test: str, params: str) -> list[str]:
    if test in BY_TEST:
        return BY_TEST[test]
    if module == "test_hostile_outputs" and "report.json" in params:
        return ["self-reports"]
    return BY_MODULE.get(module, ["other"])  # a new module: counted, then to be named above


def collected() -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", "", str(SUITE.relative_to(ROOT))],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [line for line in out.splitlines() if "::" in line]


def examples_of(module: str, test: str) -> int | None:
    """A property test's number of generated inputs; None for a plain test."""
    spec = importlib.util.spec_from_file_location(module, SUITE / f"{module}.py")
    assert spec is not None and spec.loader is not None
    if module not in sys.modules:
        sys.path[:0] = [str(SUITE), str(ROOT)]
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[module] = loaded
        spec.loader.exec_module(loaded)
    function = getattr(sys.modules[module], test)
    if not getattr(function, "is_hypothesis_test", False):
        return None
    return int(function._hypothesis_internal_use_settings.max_examples)


def count() -> tuple[Counter[str], Counter[str], int]:
    """(files and trees per kind, generated inputs per kind, tests collected)."""
    fixed: Counter[str] = Counter()
    generated: Counter[str] = Counter()
    ids = collected()
    for node in ids:
        path, _, name = node.partition("::")
        test, _, params = name.partition("[")
        module = Path(path).stem
        examples = examples_of(module, test)
        for kind in kinds_of(module, test, params):
            if examples is None:
                fixed[kind] += 1
            else:
                generated[kind] += examples
    return fixed, generated, len(ids)


def run_suite() -> dict[str, dict[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "figures.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ENCONDA_HOSTILE_FIGURES": str(figures)}
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "",
             str(SUITE.relative_to(ROOT))],
            cwd=ROOT, env=env, check=True,
        )  # fmt: skip
        return json.loads(figures.read_text())  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="store_true", help="run the suite for faults and reads")
    args = parser.parse_args()
    fixed, generated, tests = count()
    print(f"{tests} tests collected in {SUITE.relative_to(ROOT)}\n")
    print("| kind | hostile files and trees | generated (hypothesis) | inputs |")
    print("|---|---:|---:|---:|")
    for kind in [*KINDS, *sorted((set(fixed) | set(generated)) - set(KINDS))]:
        total = fixed[kind] + generated[kind]
        print(f"| {kind} | {fixed[kind]:,} | {generated[kind]:,} | {total:,} |")
    print(
        f"| all | {sum(fixed.values()):,} | {sum(generated.values()):,} "
        f"| {sum(fixed.values()) + sum(generated.values()):,} |"
    )
    if args.run:
        figures = run_suite()
        faults = Counter({kind: 0 for kind in ("crash", "hang", "memory", "host read")})
        for key, number in figures["faults"].items():
            faults[key.rsplit(": ", 1)[1]] += number
        print(f"\nreads per reader: {json.dumps(figures['inputs'])}")
        print(
            f"reads: {sum(figures['inputs'].values()):,}; crashes: {faults['crash']}, hangs: "
            f"{faults['hang']}, memory blow-ups: {faults['memory']}, host-file reads: "
            f"{faults['host read']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
