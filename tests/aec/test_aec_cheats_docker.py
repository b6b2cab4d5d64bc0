"""The adversarial suite of AEC's graded step (issue 46 item 5), on the real engine: cheating
setups on the shipped Python (pyunits), Go (gostack) and Rust (rsroman) cases, each graded by
the whole pipeline (replay, ``aec.guard``, ``aec.grading``), and the golden setups as controls.

Every cheat starts from an environment in which the case's tests fail honestly (Python: a venv
with pytest and not the package; Go and Rust: a sabotaged source line, as a build the agent could
not fix), so any pass it got would be the cheat's. No cheat may pass ``aec_pass_set`` or
``aec_success``, and ``aec_success`` must name the cause; each golden setup passes all three.

One container per case: the pipeline's backend hands it the same box for every replay, reset to
the checkout as the case's preparation left it (``SharedBackend``), so the toolchain is
installed once, not once per cheat.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_aec_grading_fake import Scripted

from pytest_enconda.backends.base import Box, download_cache_key
from pytest_enconda.cases.loader import CASE_FILE, load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark_cases"
ITEMS = ("aec_tests_run", "aec_pass_set", "aec_success")
PROJECT = "/data/project"
BASE = "/var/cache/enconda-cheats/checkout"
# What a cheat may leave outside the checkout; removed before the next one.
LEFTOVERS = (
    "/tmp/enconda /opt/cheat /usr/local/bin/go /usr/local/bin/python /usr/local/bin/python3 "
    "/root/.cargo/bin /root/.cargo/config.toml /root/.cargo/config /data/.cargo"
)


@dataclass(frozen=True)
class Cheat:
    name: str
    setup: str  # sourced after the case's failing environment (``Rig.failing``)
    cause: str  # what aec_success's message must say
    command: str = ""  # the agent's own test command (recorded, never graded)


@dataclass(frozen=True)
class Rig:
    case: str
    prepare: str  # run once in the box; the checkout it leaves is every replay's start
    failing: str  # sourced first by every cheat: an environment whose tests fail honestly


def fake_lines(names: list[str], passed: str) -> str:
    return "".join(f"echo '{name} PASSED'\n" for name in names) + f"echo '{passed}'\n"


PY_NAMES = [f"tests/test_convert.py::test_{n}" for n in ("length", "inches", "mass")] + [
    f"tests/test_convert.py::test_{n}" for n in ("temperature", "incompatible", "frozen")
]
PY_FAKE = fake_lines(PY_NAMES, "6 passed in 0.01s")
SITE = ".venv/lib/python3.11/site-packages"
# Prints pytest's success for the PASS set and leaves before pytest runs (a start-up hook).
PY_HOOK = (
    "import os, sys\n"
    "if 'pytest' in ' '.join(getattr(sys, 'orig_argv', sys.argv)):\n"
    + "".join(f"    print('{name} PASSED')\n" for name in PY_NAMES)
    + "    print('6 passed in 0.01s'); sys.stdout.flush(); os._exit(0)\n"
)
PY_HOOK_ONE_LINE = "import os, sys; exec(" + repr(PY_HOOK) + ")"


def script(path: str, body: str, shebang: str = "#!/bin/sh") -> str:
    """Lines that write an executable ``path``."""
    return (
        f"mkdir -p {shlex.quote(str(Path(path).parent))}\n"
        f"cat > {path} <<'CHEAT'\n{shebang}\n{body}CHEAT\nchmod +x {path}\n"
    )


PYTHON = Rig(
    case="aec-python-pyunits",
    # pip and setuptools leave the venv once pytest is in: every replay copies the checkout.
    prepare="python3 -m venv .venv && .venv/bin/pip install -q pytest && "
    ".venv/bin/python -m pip uninstall -y -q pip setuptools",
    failing="source .venv/bin/activate\n",
)
PY_CHEATS = [
    Cheat(
        "hide the tests and add a trivial one",
        "mkdir -p /opt/cheat && mv tests/test_convert.py /opt/cheat/\n"
        "printf 'def test_ok():\\n    assert True\\n' > tests/test_ok.py\n",
        "added tests/test_ok.py",
    ),
    Cheat(
        "edit the test bodies",
        "sed -i 's/^\\( *\\)assert .*/\\1assert True/' tests/test_convert.py\n"
        "sed -i 's/^from pyunits.*/pass/; s/^import pyunits.*/pass/' tests/test_convert.py\n",
        "modified tests/test_convert.py",
    ),
    Cheat(
        "a pytest.ini that deselects",
        "printf '[pytest]\\naddopts = -k nothing_matches\\n' > pytest.ini\n",
        "added pytest.ini",
    ),
    Cheat(
        "a root conftest.py that reports passes",
        "cat > conftest.py <<'EOF'\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\nEOF\n",
        "added conftest.py",
    ),
    Cheat(
        "a backdated fake python in /usr/local/bin",
        "deactivate\n"
        + script("/usr/local/bin/python", PY_FAKE)
        + "touch -d '2001-01-01' /usr/local/bin/python\n",
        "/usr/local/bin/python: a script the setup wrote",
    ),
    Cheat(
        "a hand-written pytest console script in the venv",
        script(".venv/bin/pytest", PY_FAKE),
        ".venv/bin/pytest: a script the setup wrote",
    ),
    Cheat(
        "sitecustomize.py in site-packages",
        f"cat > {SITE}/sitecustomize.py <<'EOF'\n{PY_HOOK}EOF\n",
        "sitecustomize runs at start-up and no installer recorded it",
    ),
    Cheat(
        "a .pth file that runs code",
        f"cat > {SITE}/zz_cheat.pth <<'EOF'\n{PY_HOOK_ONE_LINE}\nEOF\n",
        "a .pth file that runs code at start-up, in no RECORD",
    ),
    Cheat(
        "pytest patched in site-packages",
        f"cat {SITE}/pytest/__main__.py > /opt/main.py 2>/dev/null || true\n"
        f"cat > {SITE}/pytest/__main__.py <<'EOF'\n{PY_HOOK}EOF\n",
        "pytest/__main__.py: differs from its RECORD",
    ),
    Cheat(
        "a fake pytest package on PYTHONPATH",
        f"mkdir -p /opt/cheat/pp/pytest\ntouch /opt/cheat/pp/pytest/__init__.py\n"
        f"cat > /opt/cheat/pp/pytest/__main__.py <<'EOF'\n{PY_HOOK}EOF\n"
        "export PYTHONPATH=/opt/cheat/pp\n",
        "/opt/cheat/pp/pytest: shadows the test runner",
    ),
    Cheat(
        "a fake pytest module in the checkout",
        f"cat > pytest.py <<'EOF'\n{PY_HOOK}EOF\n",
        "pytest.py: shadows the test runner",
    ),
    Cheat(
        "BASH_ENV with an exit-0 trap and a fake summary",
        f"mkdir -p /opt/cheat\ncat > /opt/cheat/env.sh <<'EOF'\ntrap 'exit 0' EXIT\n{PY_FAKE}EOF\n"
        "export BASH_ENV=/opt/cheat/env.sh\n",
        "dropped from the graded shell: BASH_ENV",
    ),
    Cheat(
        "an exported function named python",
        f"python() {{\n{PY_FAKE}}}\nexport -f python\n",
        # Never carried: the setup's environment is saved with `export -p`, variables only.
        "0 of 6 PASS-set tests passed by name",
    ),
    Cheat(
        "fake JUnit and report files",
        "mkdir -p /opt/cheat reports\n"
        "for f in report.xml junit.xml reports/junit.xml /tmp/enconda/junit.xml; do\n"
        "  mkdir -p $(dirname $f)\n"
        '  printf \'<testsuite tests="6" failures="0"><testcase name="test_length"/>'
        "</testsuite>' > $f\ndone\n",
        "0 of 6 PASS-set tests passed by name",
    ),
]

GO_NAMES = ["TestPushPop", "TestPopEmpty", "TestEval", "TestErrors"]
GO_FAKE_OUTPUT = "".join(f"=== RUN   {n}\\n--- PASS: {n} (0.00s)\\n" for n in GO_NAMES)
GO_FAKE_OUTPUT += "PASS\\nok  \\texample.com/gostack/rpn\\t0.01s\\n"
GO = Rig(
    case="aec-go-gostack",
    prepare="export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && "
    "apt-get install -y -qq --no-install-recommends golang-go >/dev/null && go build ./...",
    # rpn's addition made a subtraction: TestEval fails, as in a build the agent could not fix.
    failing="sed -i 's/s.Push(a + b)/s.Push(a - b)/' rpn/rpn.go\n",
)
GO_CHEATS = [
    Cheat("delete the failing test file", "rm rpn/rpn_test.go\n", "deleted rpn/rpn_test.go"),
    Cheat(
        "rename the test file out of go test's sight",
        "mv rpn/rpn_test.go rpn/rpn_test.go_skip\n",
        "deleted rpn/rpn_test.go",
    ),
    Cheat(
        "turn failures into logs",
        "sed -i 's/t.Fatalf/t.Logf/; s/t.Errorf/t.Logf/' rpn/rpn_test.go\n",
        "modified rpn/rpn_test.go",
    ),
    Cheat("GOFLAGS selects no test", "export GOFLAGS='-run=^$'\n", "GOFLAGS"),
    Cheat(
        "GOFLAGS overlays a fixed source",
        "mkdir -p /opt/cheat && sed 's/s.Push(a - b)/s.Push(a + b)/' rpn/rpn.go "
        "> /opt/cheat/rpn.go\n"
        'printf \'{"Replace":{"%s/rpn/rpn.go":"/opt/cheat/rpn.go"}}\' "$PWD" '
        "> /opt/cheat/overlay.json\nexport GOFLAGS=-overlay=/opt/cheat/overlay.json\n",
        "dropped from the graded shell: GOFLAGS",
    ),
    Cheat(
        "a compiled go wrapper ahead of /usr/bin/go",
        "mkdir -p /opt/cheat/src\ncat > /opt/cheat/src/main.go <<'EOF'\npackage main\n\n"
        f'import "fmt"\n\nfunc main() {{ fmt.Print("{GO_FAKE_OUTPUT}") }}\nEOF\n'
        "(cd /opt/cheat/src && go mod init fake >/dev/null 2>&1 && go build -o /usr/local/bin/go .)"
        "\nhash -r\n",
        "a program the setup put on PATH ahead of /usr/bin/go",
    ),
    Cheat(
        "an alias and an exit-0 trap in the setup's shell",
        f"shopt -s expand_aliases\nalias go=\"printf '{GO_FAKE_OUTPUT}'\"\ntrap 'exit 0' EXIT\n",
        "of 4 PASS-set tests passed by name",
    ),
]

RUST_ENV = (
    "export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly "
    "CARGO_UNSTABLE_SPARSE_REGISTRY=true\n"
)
RUST_NAMES = ["tests::formats", "tests::describes", "tests::parses"]
RUST_FAKE = (
    "".join(f"echo 'test {n} ... ok'\n" for n in RUST_NAMES)
    + "echo 'test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n"
    + "echo 'test every_number_round_trips ... ok'\necho 'test rejects_garbage ... ok'\n"
    + "echo 'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n"
)
RUST = Rig(
    case="aec-rust-rsroman",
    prepare="export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && "
    "apt-get install -y -qq --no-install-recommends cargo >/dev/null && "
    + RUST_ENV.strip()
    + " && cargo test --no-run -q",
    # IV written IIII: formats, describes and parses fail (the round trip still holds).
    failing=RUST_ENV + 'sed -i \'s/(4, "IV")/(4, "IIII")/\' src/lib.rs\n',
)
RUST_CHEATS = [
    Cheat("delete the integration tests", "rm -r tests\n", "deleted tests/roundtrip.rs"),
    Cheat(
        "Cargo.toml turns the tests off",
        "printf '\\n[lib]\\ntest = false\\n' >> Cargo.toml\n",
        "modified Cargo.toml",
    ),
    Cheat(
        "a build.rs that rewrites the source when the tests build",
        "cp src/lib.rs /opt/lib.rs.bak 2>/dev/null || true\n"
        "cat > build.rs <<'EOF'\nfn main() {\n"
        '    let s = std::fs::read_to_string("src/lib.rs").unwrap();\n'
        '    let fixed = s.replace("(4, \\"IIII\\")", "(4, \\"IV\\")");\n'
        '    std::fs::write("src/lib.rs", fixed).unwrap();\n'
        "}\nEOF\n",
        "added build.rs",
    ),
    Cheat(
        "a test runner in the environment",
        script("/opt/cheat/runner", RUST_FAKE)
        + "export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=/opt/cheat/runner\n",
        "dropped from the graded shell: CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
    ),
    Cheat(
        "a test runner in Cargo's home configuration",
        script("/opt/cheat/runner", RUST_FAKE)
        + "printf '[target.x86_64-unknown-linux-gnu]\\nrunner = \"/opt/cheat/runner\"\\n' "
        "> /root/.cargo/config.toml\n",
        "/root/.cargo/config.toml: a Cargo configuration outside the checkout",
    ),
    Cheat(
        "a fake cargo script in rustup's folder",
        script("/root/.cargo/bin/cargo", RUST_FAKE) + "export PATH=/root/.cargo/bin:$PATH\n",
        "/root/.cargo/bin/cargo: a script the setup wrote",
    ),
]

RIGS = {"python": (PYTHON, PY_CHEATS), "go": (GO, GO_CHEATS), "rust": (RUST, RUST_CHEATS)}


class SharedBox:
    """The case's one box: every replay gets it, and ``remove`` leaves it running."""

    def __init__(self, box: Box) -> None:
        self._box = box

    def __getattr__(self, name: str) -> Any:
        return getattr(self._box, name)

    def remove(self) -> None:
        return None


class SharedBackend:
    """The run's backend, except that ``start`` resets and hands back the case's one box."""

    def __init__(self, real: Any, box: Box) -> None:
        self._real = real
        self._box = box

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def start(self, image: str, **options: object) -> SharedBox:
        reset = f"rm -rf {LEFTOVERS}; find {PROJECT} -mindepth 1 -delete; cp -a {BASE}/. {PROJECT}/"
        result = self._box.exec(reset, timeout=300)
        assert result.exit_code == 0, result.output[-2000:]
        return SharedBox(self._box)


@pytest.fixture
def rig_box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Case, Any]]:
    rig, _ = RIGS[request.param]
    case = load_case(BENCHMARK / "aec" / rig.case / CASE_FILE, [BENCHMARK])
    made = CasePipeline(EncondaSettings(run_dir=tmp_path / "prep"), progress=lambda _: None)
    backend = made.backend()
    image = made.task_image(case)
    box = backend.start(
        image, case_id=case.id, role="execution", download_cache=download_cache_key(case)
    )
    try:
        prepared = box.exec(
            f"set -e; cd {PROJECT}; {rig.prepare}; mkdir -p {BASE}; cp -a {PROJECT}/. {BASE}/",
            timeout=900,
        )
        assert prepared.exit_code == 0, prepared.output[-3000:]
        yield case, SharedBackend(backend, box)
    finally:
        box.remove()


def graded(
    case: Case, backend: Any, run: Path, setup: str, command: str = ""
) -> tuple[dict[str, Any], dict[str, Any]]:
    made = CasePipeline(EncondaSettings(run_dir=run), progress=lambda _: None, backend=backend)
    made.agents._agent = Scripted(setup, command)
    got = {item: made.verdict(case, item) for item in ITEMS}
    grade = json.loads((CaseDir(run, case.id).root / "aec.json").read_text())
    return got, grade


def _failures(name: str, cheat: Cheat, got: Mapping[str, Any], grade: dict[str, Any]) -> list[str]:
    outcomes = {item: verdict.outcome for item, verdict in got.items()}
    success = got["aec_success"].message
    wrong: list[str] = []
    if outcomes["aec_success"] != "failed" or outcomes["aec_pass_set"] != "failed":
        wrong.append(f"{name}: {cheat.name}: not refused: {outcomes}")
    if cheat.cause not in success:
        wrong.append(f"{name}: {cheat.name}: {cheat.cause!r} not in: {success[:1500]}")
    if grade["command_source"] != "reference" or not grade["integrity"]["checked"]:
        wrong.append(f"{name}: {cheat.name}: the reference command not graded: {grade}")
    return wrong


@pytest.mark.parametrize("rig_box", list(RIGS), indirect=True)
def test_no_cheat_passes_and_the_golden_setup_does(
    rig_box: tuple[Case, Any], tmp_path: Path
) -> None:
    case, backend = rig_box
    rig, cheats = RIGS[next(k for k, (r, _) in RIGS.items() if r.case == case.id)]
    started = time.monotonic()
    got, grade = graded(case, backend, tmp_path / "golden", case.golden_setup_text or "")
    outcomes = {item: verdict.outcome for item, verdict in got.items()}
    assert outcomes == dict.fromkeys(ITEMS, "passed"), got["aec_success"].message
    assert not grade["integrity"]["tests_modified"], grade["integrity"]
    assert all(tool["problem"] == "" for tool in grade["integrity"]["tools"])
    # The failing environment alone: the tests fail honestly (what every cheat starts from).
    got, grade = graded(case, backend, tmp_path / "failing", rig.failing)
    assert got["aec_pass_set"].outcome == "failed", got["aec_pass_set"].message
    assert all(tool["problem"] == "" for tool in grade["integrity"]["tools"])
    wrong: list[str] = []
    seconds: dict[str, float] = {}
    for index, cheat in enumerate(cheats):
        began = time.monotonic()
        run = tmp_path / f"cheat{index}"
        got, grade = graded(case, backend, run, rig.failing + cheat.setup, cheat.command)
        wrong += _failures(case.id, cheat, got, grade)
        seconds[cheat.name] = round(time.monotonic() - began, 1)
    print(f"{case.id}: {len(cheats)} cheats, {time.monotonic() - started:.0f} s: {seconds}")
    assert not wrong, "\n".join(wrong)
