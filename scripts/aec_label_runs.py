"""Real AEC runs for the labelled set (``benchmark_cases/aec_labels``): cases, agents, scripts.

    python scripts/aec_label_runs.py run GROUP... --out DIR     # run agents in Docker
    python scripts/aec_label_runs.py extract --out DIR          # one draft item per case run
    python scripts/aec_label_runs.py merge --out DIR --labels L # draft + `id|label|reason` lines

Groups: ``oracle-shipped`` and ``readme-shipped`` (the 8 shipped AEC cases), ``oracle-lab``,
``readme-lab``, ``heuristic-lab`` (the five small repositories of ``benchmark_cases/repos/aec/lab``),
``swe-agent`` (mini-swe-agent played by a scripted OpenAI-compatible server on 127.0.0.1, through
litellm's real HTTP path: one scenario per case; ``swe-agent-2`` and ``-3`` are later batches),
``zero-shot`` and ``zero-shot-2``, and ``command`` (a host-side CLI agent driving the container
with ``docker exec``). The scripted replies stage behaviours real
agents show: a correct setup, a partial one, giving up, tests that fail, a compile error, success
claimed in prose, a subset of the tests, tests deleted, a setup that only worked in the agent's
own container, an exhausted step budget. Runs use ``-n 2`` at most and the offline judge (the
labels are written by reading the runs, not from the harness's verdict).

``extract`` writes ``DIR/draft.jsonl``: per case run, the artifacts the bench command needs to
recompute the hybrid verdict (bounded), for the labeller to add ``label`` and ``reason`` to;
``merge`` validates the labelled items (``bench.aec_labels.LabelledRun``) into
``benchmark_cases/aec_labels/labels.jsonl``. The labelled set of 2026-11-26 was made with
``run oracle-shipped`` (run as plain ``pytest benchmark_cases -k aec --agent=oracle``),
``swe-agent``, ``oracle-lab zero-shot command readme-lab heuristic-lab`` (``-n 1``),
``swe-agent-2 readme-shipped``, ``swe-agent-3 zero-shot-2`` (``-n 1``).
"""

# ruff: noqa: E501  (the scenario tables keep one step a line, as a trajectory reads)
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
LAB = ROOT / "benchmark_cases" / "repos" / "aec" / "lab"
SHIPPED = ROOT / "benchmark_cases" / "aec"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

# The lab repositories: language, reference command, PASS set, golden setup.
LAB_CASES: dict[str, dict] = {
    "labpy": {
        "language": "python",
        "test_command": "python3 -m pytest -rA",
        "pass_set": [
            "tests/test_core.py::test_words",
            "tests/test_core.py::test_slug",
            "tests/test_core.py::test_slug_empty",
            "tests/test_config.py::test_load_mapping",
            "tests/test_config.py::test_rejects_list",
        ],
        "golden": 'python3 -m venv .venv\nsource .venv/bin/activate\npip install -q -e ".[test]"\n',
    },
    "labunit": {
        "language": "python",
        "test_command": "python3 -m unittest discover -v -s tests",
        "pass_set": [
            "test_stats.MeanTest.test_mean",
            "test_stats.MeanTest.test_mean_empty",
            "test_stats.MedianTest.test_odd",
            "test_stats.MedianTest.test_even",
            "test_stats.MedianTest.test_empty",
        ],
        "golden": "# standard library only\npython3 -c 'import labunit'\n",
    },
    "labbug": {
        "language": "python",
        "test_command": "python3 -m pytest -rA tests",
        "pass_set": [
            "tests/test_calendar.py::test_leap_plain",
            "tests/test_calendar.py::test_not_leap_century",
            "tests/test_calendar.py::test_days",
            "tests/test_calendar.py::test_bad_month",
        ],
        "golden": "pip install -q -r requirements-dev.txt\n",
    },
    "labc": {
        "language": "c",
        "test_command": "make check",
        "pass_set": [],
        "golden": "make\n",
    },
    "labdoc": {
        "language": "python",
        "test_command": "python3 run_doctests.py -v",
        "pass_set": [],
        "golden": "pip install -q -r requirements.txt\n",
    },
}


def case_toml(case_id: str, repo: str, spec: dict, *, golden: bool, steps: int = 30) -> str:
    lines = [
        f'id = "{case_id}"',
        'suite = "aec"',
        'base_image = "bookworm-py3.11"',
    ]
    if golden:
        lines.append('golden_setup = "golden_setup.sh"')
    lines += [
        "",
        "[repository]",
        'kind = "folder"',
        f'path = "../repos/{repo}"',
        "",
        "[aec]",
        f'language = "{spec["language"]}"',
        "",
        "[aec.reference]",
        f"test_command = {json.dumps(spec['test_command'])}",
        f"pass_set = {json.dumps(spec['pass_set'])}",
        "",
        "[budgets]",
        "agent_seconds = 900",
        "setup_seconds = 600",
        "test_seconds = 180",
        f"agent_steps = {steps}",
    ]
    return "\n".join(lines) + "\n"


def leave(setup: str, test_command: str | None = None) -> str:
    """A command writing the contract's files (setup.sh through a quoted heredoc)."""
    command = f"mkdir -p /enconda/output && cat > /enconda/output/setup.sh <<'ENCONDA_EOF'\n{setup}ENCONDA_EOF"
    if test_command is not None:
        command += f"\nprintf '%s\\n' {shlex.quote(test_command)} > /enconda/output/test_command"
    return command


VENV = 'python3 -m venv .venv\nsource .venv/bin/activate\npip install -q -e ".[test]"\n'
APT_GO = "export DEBIAN_FRONTEND=noninteractive\napt-get update -qq\napt-get install -y -qq --no-install-recommends golang-go\n"
APT_NODE = "export DEBIAN_FRONTEND=noninteractive\napt-get update -qq\napt-get install -y -qq --no-install-recommends nodejs\n"

# swe-agent scenarios: case id -> (repository, steps budget, [(thought, command), ...]).
# A reply past the end repeats the last one (the submit).
SWE: dict[str, tuple[str, int, list[tuple[str, str]]]] = {
    "sw-labpy-correct": ("labpy", 30, [
        ("Read CI first.", "cat .github/workflows/ci.yml"),
        ("Dependencies.", "cat pyproject.toml"),
        ("Make a venv and install with test extras.", 'python3 -m venv .venv && . .venv/bin/activate && pip install -q -e ".[test]"'),
        ("Run the suite.", ". .venv/bin/activate && python -m pytest -rA"),
        ("Write outputs.", leave(VENV, "python -m pytest -rA")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-missing-dep": ("labpy", 30, [
        ("Look at the tests.", "ls tests && cat pyproject.toml"),
        ("Only pytest is needed, use PYTHONPATH.", "pip install -q pytest"),
        ("Run tests.", "PYTHONPATH=src python3 -m pytest -rA"),
        ("Write outputs.", leave("pip install -q pytest\nexport PYTHONPATH=src\n", "python3 -m pytest -rA")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-subset": ("labpy", 30, [
        ("Install.", 'pip install -q -e ".[test]"'),
        ("Core tests are the important ones.", "python3 -m pytest -rA tests/test_core.py"),
        ("Write outputs.", leave('pip install -q -e ".[test]"\n', "python3 -m pytest -rA tests/test_core.py")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-prose": ("labpy", 30, [
        ("Install.", 'pip install -q -e ".[test]"'),
        ("Everything should work now.", 'echo "Environment ready. All 5 tests passed!"'),
        ("Write outputs.", leave('pip install -q -e ".[test]"\n', 'echo "All 5 tests passed!"')),
        ("Done, all tests pass.", SUBMIT),
    ]),
    "sw-labpy-giveup": ("labpy", 30, [
        ("Look around.", "ls -la"),
        ("Read README.", "cat README.md"),
        ("I cannot determine how to configure this repository; giving up.", SUBMIT),
    ]),
    "sw-labpy-delete-tests": ("labpy", 30, [
        ("Install without yaml.", "pip install -q pytest && PYTHONPATH=src python3 -m pytest -rA"),
        ("test_config needs yaml; remove it to make the suite pass.", "rm tests/test_config.py && PYTHONPATH=src python3 -m pytest -rA"),
        ("Write outputs.", leave("pip install -q pytest\nrm -f tests/test_config.py\nexport PYTHONPATH=src\n", "python3 -m pytest -rA")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-budget": ("labpy", 4, [
        ("Explore.", "ls -la"),
        ("Explore more.", "find . -name '*.py' | head"),
        ("Read pyproject.", "cat pyproject.toml"),
        ("Read CI.", "cat .github/workflows/ci.yml"),
        ("Read README.", "cat README.md"),
        ("Install.", 'pip install -q -e ".[test]"'),
    ]),
    "sw-labpy-not-replayable": ("labpy", 30, [
        ("Install dependencies.", 'pip install -q -e ".[test]"'),
        ("Run.", "python3 -m pytest -rA"),
        ("Write outputs (the install already happened).", leave("export PYTHONPATH=src\n", "python3 -m pytest -rA")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-deselect": ("labpy", 30, [
        ("Install pytest only.", "pip install -q pytest"),
        ("Config tests fail without yaml; deselect them.", 'PYTHONPATH=src python3 -m pytest -rA -k "not config"'),
        ("Write outputs.", leave("pip install -q pytest\nexport PYTHONPATH=src\n", 'python3 -m pytest -rA -k "not config"')),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-lint-exit": ("labpy", 30, [
        ("Install.", 'pip install -q -e ".[test]"'),
        ("Tests then lint.", "python3 -m pytest -rA && flake8 src"),
        ("Write outputs.", leave('pip install -q -e ".[test]"\n', "python3 -m pytest -rA && flake8 src")),
        ("Done.", SUBMIT),
    ]),
    "sw-labpy-no-tool": ("labpy", 30, []),  # replies without a tool call: format errors
    "sw-labunit-correct": ("labunit", 30, [
        ("Standard library only.", "ls -R && cat README.md"),
        ("Run.", "python3 -m unittest discover -v -s tests"),
        ("Write outputs.", leave("python3 --version\n", "python3 -m unittest discover -v -s tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labunit-zero-tests": ("labunit", 30, [
        ("Run unittest.", "python3 -m unittest -v"),
        ("Write outputs.", leave("python3 --version\n", "python3 -m unittest -v")),
        ("Done.", SUBMIT),
    ]),
    "sw-labunit-smoke": ("labunit", 30, [
        ("Check the import works.", "python3 -c 'import labunit; print(labunit.mean([1, 2]))'"),
        ("Write outputs.", leave("true\n", "python3 -c 'import labunit; print(\"ok\")'")),
        ("Done.", SUBMIT),
    ]),
    "sw-labunit-no-command": ("labunit", 30, [
        ("Nothing to install.", "cat README.md"),
        ("Write the setup only.", leave("python3 --version\n")),
        ("Done.", SUBMIT),
    ]),
    "sw-labbug-correct": ("labbug", 30, [
        ("Dev requirements.", "cat README.md requirements-dev.txt"),
        ("Install and run.", "pip install -q -r requirements-dev.txt && python3 -m pytest -rA tests"),
        ("One known failure (issue #12). Write outputs.", leave("pip install -q -r requirements-dev.txt\n", "python3 -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labbug-patch-test": ("labbug", 30, [
        ("Install and run.", "pip install -q -r requirements-dev.txt && python3 -m pytest -rA tests"),
        ("Make the failing test pass by skipping it.", "sed -i 's/^def test_leap_400/@pytest.mark.skip\\ndef test_leap_400/' tests/test_calendar.py && python3 -m pytest -rA tests"),
        ("Write outputs.", leave("pip install -q -r requirements-dev.txt\nsed -i 's/^def test_leap_400/@pytest.mark.skip\\ndef test_leap_400/' tests/test_calendar.py\n", "python3 -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labbug-no-pytest": ("labbug", 30, [
        ("Run the tests with unittest.", "python3 -m unittest discover -v -s tests"),
        ("Write outputs.", leave("true\n", "python3 -m unittest discover -v -s tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labc-correct": ("labc", 30, [
        ("Makefile.", "cat Makefile README.md"),
        ("Build and run the project's checks.", "make && make check"),
        ("Write outputs.", leave("make\n", "make check")),
        ("Done.", SUBMIT),
    ]),
    "sw-labc-build-only": ("labc", 30, [
        ("Build.", "make"),
        ("Write outputs.", leave("true\n", "make")),
        ("Done: it builds.", SUBMIT),
    ]),
    "sw-labc-missing-data": ("labc", 30, [
        ("Build the test binary and run it.", "make tests/run_tests && ./tests/run_tests"),
        ("Write outputs.", leave("make tests/run_tests\n", "./tests/run_tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labc-clang": ("labc", 30, [
        ("Use clang with strict flags.", "make CC=clang"),
        ("Write outputs anyway.", leave("true\n", "make CC=clang check")),
        ("Done.", SUBMIT),
    ]),
    "sw-labc-werror": ("labc", 30, [
        ("Strict build.", "make CFLAGS='-O2 -Wall -Werror -std=c89 -pedantic' check"),
        ("Write outputs.", leave("true\n", "make CFLAGS='-O2 -Wall -Werror -std=c89 -pedantic' check")),
        ("Done.", SUBMIT),
    ]),
    "sw-labdoc-correct": ("labdoc", 30, [
        ("Requirements.", "cat README.md requirements.txt"),
        ("Install (the README forgets -r) and run the doctests.", "pip install -q -r requirements.txt && python3 run_doctests.py -v"),
        ("Write outputs.", leave("pip install -q -r requirements.txt\n", "python3 run_doctests.py -v")),
        ("Done.", SUBMIT),
    ]),
    "sw-labdoc-readme-literal": ("labdoc", 30, [
        ("Follow the README.", "pip install requirements.txt"),
        ("Write outputs.", leave("pip install requirements.txt\n", "python3 run_doctests.py -v")),
        ("Done.", SUBMIT),
    ]),
    "sw-labdoc-no-dep": ("labdoc", 30, [
        ("Run doctests.", "python3 run_doctests.py -v"),
        ("Write outputs.", leave("true\n", "python3 run_doctests.py -v")),
        ("Done.", SUBMIT),
    ]),
    "sw-pyunits-correct": ("pyunits", 30, [
        ("CI and pyproject.", "ls -a && cat pyproject.toml"),
        ("venv and install.", 'python3 -m venv .venv && . .venv/bin/activate && pip install -q -e ".[test]" && python -m pytest -rA tests'),
        ("Write outputs.", leave(VENV, "python -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-pyunits-no-attrs": ("pyunits", 30, [
        ("Install pytest only.", "pip install -q pytest && PYTHONPATH=src python3 -m pytest -rA tests"),
        ("Write outputs.", leave("pip install -q pytest\nexport PYTHONPATH=src\n", "python3 -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-gostack-correct": ("gostack", 30, [
        ("go.mod.", "cat go.mod"),
        ("Install Go from Debian and test.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends golang-go >/dev/null && go test -v ./..."),
        ("Write outputs.", leave(APT_GO, "go test -v ./...")),
        ("Done.", SUBMIT),
    ]),
    "sw-gostack-subset": ("gostack", 30, [
        ("Install Go.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends golang-go >/dev/null && go version"),
        ("Only the stack package matters.", "go test -v ./stack/"),
        ("Write outputs.", leave(APT_GO, "go test -v ./stack/")),
        ("Done.", SUBMIT),
    ]),
    "sw-jsslug-prose": ("jsslug", 30, [
        ("package.json.", "cat package.json"),
        ("Install node.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs >/dev/null && node --version"),
        ("Write outputs.", leave(APT_NODE, "node -e \"console.log('all tests passed')\"")),
        ("Done.", SUBMIT),
    ]),
    "sw-jsslug-correct": ("jsslug", 30, [
        ("Install node and run node's test runner.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs >/dev/null && node --test"),
        ("Write outputs.", leave(APT_NODE, "node --test")),
        ("Done.", SUBMIT),
    ]),
}  # fmt: skip

RUST_ENV = "export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly CARGO_UNSTABLE_SPARSE_REGISTRY=true"
# A second swe-agent batch on the shipped repositories that need Debian toolchains (slow: apt).
SWE2: dict[str, tuple[str, int, list[tuple[str, str]]]] = {
    "sw-jvbits-no-junit": ("jvbits", 30, [
        ("Makefile.", "cat Makefile"),
        ("A JDK is enough.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends default-jdk-headless make >/dev/null && make test"),
        ("Write outputs.", leave("export DEBIAN_FRONTEND=noninteractive\napt-get update -qq\napt-get install -y -qq --no-install-recommends default-jdk-headless make\n", "make test")),
        ("Done.", SUBMIT),
    ]),
    "sw-rsroman-lib-only": ("rsroman", 30, [
        ("Cargo.toml pins itoa for rustc 1.63.", "cat Cargo.toml"),
        ("Debian cargo, sparse index; unit tests.", f"export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends cargo >/dev/null && {RUST_ENV} && cargo test --lib"),
        ("Write outputs.", leave("export DEBIAN_FRONTEND=noninteractive\napt-get update -qq\napt-get install -y -qq --no-install-recommends cargo\n" + RUST_ENV + "\n", "cargo test --lib")),
        ("Done.", SUBMIT),
    ]),
    "sw-jsoncount-ci": ("jsoncount", 30, [
        ("CI first.", "cat .github/workflows/*.yml 2>/dev/null; cat CMakeLists.txt"),
        ("CI installs libjansson-dev; build and test.", "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get install -y -qq --no-install-recommends cmake libjansson-dev >/dev/null && cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure"),
        ("Write outputs.", leave("export DEBIAN_FRONTEND=noninteractive\napt-get update -qq\napt-get install -y -qq --no-install-recommends cmake libjansson-dev\ncmake -S . -B build\ncmake --build build\n", "ctest --test-dir build --output-on-failure")),
        ("Done.", SUBMIT),
    ]),
}  # fmt: skip

FAKE = "============================== 5 passed in 0.12s ==============================="
# A third swe-agent batch: a fabricated report, a literal README version, a partial doctest run,
# a passing harness followed by a missing tool, pytest over a unittest suite, a venv not activated.
SWE3: dict[str, tuple[str, int, list[tuple[str, str]]]] = {
    "sw-labpy-fake-report": ("labpy", 30, [
        ("Install pytest.", "pip install -q pytest && PYTHONPATH=src python3 -m pytest -q 2>&1 | tail -1"),
        ("Record a passing report and print it as the test output.", leave(f"pip install -q pytest\nprintf '%s\\n' '{FAKE}' > /tmp/report.txt\n", "cat /tmp/report.txt")),
        ("Done.", SUBMIT),
    ]),
    "sw-pyunits312-readme-literal": ("pyunits-py312", 30, [
        ("README asks for Python 3.12.", "cat README.md"),
        ("Make the 3.12 venv.", "python3.12 -m venv .venv"),
        ("Write outputs as the README says.", leave('python3.12 -m venv .venv\nsource .venv/bin/activate\npip install -q -e ".[test]"\n', "python -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labdoc-partial": ("labdoc", 30, [
        ("Install.", "pip install -q -r requirements.txt"),
        ("Doctests of the versions module.", "python3 -m doctest -v labdoc/versions.py | tail -3"),
        ("Write outputs.", leave("pip install -q -r requirements.txt\n", "python3 -m doctest -v labdoc/versions.py")),
        ("Done.", SUBMIT),
    ]),
    "sw-labc-valgrind": ("labc", 30, [
        ("Build and check, then a memory check.", "make check && valgrind --error-exitcode=1 ./tests/run_tests"),
        ("Write outputs.", leave("make\n", "make check && valgrind --error-exitcode=1 ./tests/run_tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labunit-pytest": ("labunit", 30, [
        ("Use pytest as the runner for the unittest suite.", "pip install -q pytest && python3 -m pytest -rA tests"),
        ("Write outputs.", leave("pip install -q pytest\n", "python3 -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
    "sw-labbug-venv-inactive": ("labbug", 30, [
        ("Venv.", "python3 -m venv .venv && .venv/bin/pip install -q -r requirements-dev.txt && .venv/bin/python -m pytest -rA tests | tail -2"),
        ("Write outputs.", leave("python3 -m venv .venv\n.venv/bin/pip install -q -r requirements-dev.txt\n", "python3 -m pytest -rA tests")),
        ("Done.", SUBMIT),
    ]),
}  # fmt: skip

ZERO_SHOT2: dict[str, tuple[str, str]] = {
    "zs-pyunits-correct": ("pyunits", "```json\n{\"detected_errors\": []}\n```\n```bash\n" + 'python3 -m venv .venv\nsource .venv/bin/activate\npip install -q -e ".[test]"\n' + "```\n"),
    "zs-pyunits-system": ("pyunits", "```json\n{\"detected_errors\": []}\n```\n```bash\npip install -q pytest\n```\n"),
}  # fmt: skip

# zero-shot: case id -> (repository, the model's answer).
ZS_JSON = '```json\n{"detected_errors": []}\n```\n'
ZERO_SHOT: dict[str, tuple[str, str]] = {
    "zs-labpy-correct": ("labpy", ZS_JSON + "```bash\n" + VENV + "```\n"),
    "zs-labunit-correct": ("labunit", ZS_JSON + "```bash\npython3 --version\n```\n"),
    "zs-labc-correct": ("labc", ZS_JSON + "```bash\nmake\n```\n"),
    "zs-labdoc-typo": ("labdoc", ZS_JSON + "```bash\npip install -q requirements.txt\n```\n"),
    "zs-labbug-nothing": ("labbug", "The repository looks fine; nothing needs to be installed."),
}

# command: case id -> (repository, host script driving the container).
_EXEC = 'docker exec -w "$ENCONDA_REPO_DIR" "$ENCONDA_CONTAINER_NAME" bash -c'
COMMAND: dict[str, tuple[str, str]] = {
    "cmd-labunit-correct": ("labunit", (
        f"{_EXEC} 'python3 -m unittest discover -v -s tests' 2>&1; "
        f"{_EXEC} \"mkdir -p /enconda/output && echo python3 --version > /enconda/output/setup.sh "
        "&& echo python3 -m unittest discover -v -s tests > /enconda/output/test_command\"; "
        "echo agent: done"
    )),
    "cmd-labpy-claims": ("labpy", (
        f"{_EXEC} 'ls; cat README.md'; echo 'agent: environment configured, all tests pass'"
    )),
    "cmd-labbug-correct": ("labbug", (
        f"{_EXEC} 'pip install -q -r requirements-dev.txt && python3 -m pytest -rA tests' 2>&1; "
        f"{_EXEC} \"mkdir -p /enconda/output && echo pip install -q -r requirements-dev.txt > "
        "/enconda/output/setup.sh && echo python3 -m pytest -rA tests > "
        "/enconda/output/test_command\"; echo agent: done"
    )),
}  # fmt: skip

SHIPPED_REPOS = {"pyunits": "pyunits", "gostack": "gostack", "jsslug": "jsslug"}


def shipped_spec(repo: str) -> dict:
    import tomllib

    # The honest case of a repository first: a misleading one only where it is the only one.
    for case in sorted(SHIPPED.iterdir(), key=lambda c: "misleading" in c.name):
        data = tomllib.loads((case / "case.toml").read_text())
        if data["repository"]["path"].endswith(f"/{repo}"):
            ref = data["aec"]["reference"]
            return {
                "language": data["aec"]["language"],
                "test_command": ref["test_command"],
                "pass_set": ref.get("pass_set", []),
            }
    raise KeyError(repo)


def prepare(bench: Path, cases: dict[str, tuple[str, int]], *, golden: bool) -> None:
    """Case folders under ``bench``, the repositories copied beside them."""
    if bench.exists():
        shutil.rmtree(bench)
    (bench / "repos").mkdir(parents=True)
    for case_id, (repo, steps) in cases.items():
        target = bench / "repos" / repo
        if not target.exists():
            source = (
                LAB / repo if (LAB / repo).is_dir() else ROOT / "benchmark_cases/repos/aec" / repo
            )
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
        spec = LAB_CASES[repo] if repo in LAB_CASES else shipped_spec(repo)
        (bench / case_id).mkdir()
        (bench / case_id / "case.toml").write_text(
            case_toml(case_id, repo, spec, golden=golden, steps=steps)
        )
        if golden:
            (bench / case_id / "golden_setup.sh").write_text(spec["golden"])


def responder(request: dict):
    from scripted_llm import completion, prompt_text, step_of, tool_call

    text = prompt_text(request)
    scripted = {**SWE, **SWE2, **SWE3}
    answers = {**ZERO_SHOT, **ZERO_SHOT2}
    case = next((c for c in list(scripted) + list(answers) if f"# Task {c}\n" in text), None)
    if case in answers:
        return 200, completion(answers[case][1], 900, 120)
    if case is None:
        return 400, {"error": {"message": "unknown case"}}
    step = step_of(request)
    script = scripted[case][2]
    if not script:
        return 200, completion("The environment is configured and all tests pass.", 400, 20)
    thought, command = script[min(step, len(script) - 1)]
    return 200, tool_call(command, thought, call_id=f"c{step}")


def run_group(group: str, out: Path, workers: int) -> int:
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", str(workers)]
    run_dir = out / "runs" / group
    if run_dir.exists():
        shutil.rmtree(run_dir)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ENCONDA_CACHE_DIR=str(out / "cache"))
    server = None
    if group in ("oracle-shipped", "readme-shipped"):
        agent = group.split("-")[0]
        args = [str(ROOT / "benchmark_cases"), "-k", "aec", f"--agent={agent}"]
    elif group in ("oracle-lab", "readme-lab", "heuristic-lab"):
        bench = out / "bench" / group
        prepare(bench, {f"lab-{repo}": (repo, 30) for repo in LAB_CASES}, golden=True)
        args = [str(bench), f"--agent={group.split('-')[0]}"]
    else:
        from scripted_llm import ScriptedServer

        bench = out / "bench" / group
        table = {
            "swe-agent": SWE,
            "swe-agent-2": SWE2,
            "swe-agent-3": SWE3,
            "zero-shot": ZERO_SHOT,
            "zero-shot-2": ZERO_SHOT2,
            "command": COMMAND,
        }[group]
        prepare(
            bench,
            {k: (v[0], v[1] if group.startswith("swe-agent") else 30) for k, v in table.items()},
            golden=False,
        )
        server = ScriptedServer()
        server.responder = responder
        server.start()
        args = [str(bench), f"--agent={group.removesuffix('-2').removesuffix('-3')}"]
        if group == "command":
            script = out / "bench" / "command-agent.sh"
            cases = "\n".join(f"  {case}) {body} ;;" for case, (_, body) in COMMAND.items())
            script.write_text(f'case "$ENCONDA_CASE_ID" in\n{cases}\nesac\n')
            args += ["--agent-option", f"command=bash {script}"]
        else:
            args += ["--model", "scripted-agent", "--api-base", server.api_base]
    print(f"== {group}: pytest {' '.join(args)}", flush=True)
    log = out / f"{group}.log"
    with log.open("w") as stream:
        done = subprocess.run(
            [*base, *args, "--run-dir", str(run_dir)],
            env=env,
            stdout=stream,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if server is not None:
        server.stop()
        (out / f"{group}.requests.json").write_text(json.dumps(len(server.requests)))
    print(f"== {group}: exit {done.returncode}; log {log}", flush=True)
    return done.returncode


def merge(draft: Path, labels: Path) -> int:
    """The draft items with the labels written by reading them, into ``labels.jsonl``."""
    from pytest_enconda.bench.aec_labels import DEFAULT_LABELS, LabelledRun

    written = {}
    for line in labels.read_text().splitlines():
        if line.strip():
            key, label, reason = line.split("|", 2)
            written[key] = (label, reason)
    out = []
    for line in draft.read_text().splitlines():
        item = json.loads(line)
        if not item.pop("_log_excerpt_exact"):
            raise SystemExit(f"{item['id']}: the log's tail does not read as the whole log")
        if item["id"] not in written:
            print(f"not labelled yet, left out: {item['id']}")
            continue
        item["label"], item["reason"] = written.pop(item["id"])
        out.append(LabelledRun.model_validate(item).model_dump(mode="json"))
    if written:
        raise SystemExit(f"labels without a run: {sorted(written)}")
    out.sort(key=lambda item: item["id"])
    DEFAULT_LABELS.write_text("".join(json.dumps(item) + "\n" for item in out))
    print(f"{len(out)} labelled runs -> {DEFAULT_LABELS}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["run", "extract", "merge"])
    parser.add_argument("--labels", type=Path, help="merge: lines `id|label|reason`")
    parser.add_argument("groups", nargs="*")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("-n", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.action == "run":
        for group in args.groups:
            run_group(group, args.out, min(args.n, 2))
        return 0
    if args.action == "merge":
        return merge(args.out / "draft.jsonl", args.labels)
    import tomllib

    from pytest_enconda.bench.aec_labels import extract_runs

    items = extract_runs(args.out / "runs")
    for item in items:
        # A run whose agent left no setup.sh has no aec.json: its language is the case's.
        group, case = item["id"].split("/")
        toml = args.out / "bench" / group / case / "case.toml"
        if item["language"] == "unknown" and toml.is_file():
            item["language"] = tomllib.loads(toml.read_text())["aec"]["language"]
    with (args.out / "draft.jsonl").open("w") as stream:
        for item in items:
            stream.write(json.dumps(item) + "\n")
    print(f"{len(items)} runs -> {args.out / 'draft.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
