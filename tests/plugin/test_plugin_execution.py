"""Pass@1 end to end on the real Docker engine: oracle, readme agent, -n 2, resume, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from casefactory import golden_error, write_case
from gitutil import git

from pytest_enconda.records import RunDir

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("base_image")]

BROKEN_README = "# toy\n\n```bash\ncat does-not-exist.txt\ntouch ok\n```\n"


def _results(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    return {(row["case"], row["item"]): row["outcome"] for row in _results(run_dir)}


def test_oracle_passes_readme_agent_fails_on_broken_readme(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "toy-e4", readme=BROKEN_README)
    run = pytester.path / "run-oracle"
    result = pytester.runpytest("cases", "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(passed=1)
    record = json.loads((run / "cases" / "toy-e4" / "execution" / "record.json").read_text())
    assert [step["exit_code"] for step in record["steps"]] == [0, 0]
    # The oracle's script is the golden setup: its calibration measurement is its replay, and
    # the record names the logs where that run wrote them.
    assert (run / "cases" / "toy-e4" / record["steps"][0]["log"]).is_file()

    run = pytester.path / "run-readme"
    result = pytester.runpytest(
        "cases", "-k", "execution", "--agent", "readme", "--run-dir", str(run)
    )
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "setup step exited with 1" in text
    assert "does-not-exist.txt: No such file or directory" in text
    assert _outcomes(run) == {("toy-e4", "execution"): "failed"}

    run = pytester.path / "run-original"
    result = pytester.runpytest(
        "cases",
        "-k",
        "execution",
        "--agent",
        "readme",
        "--readme-variant",
        "original",
        "--run-dir",
        str(run),
    )
    result.assert_outcomes(passed=1)


def test_failing_tests_and_timeouts_are_failures(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "wrong", test_command="python -c 'raise SystemExit(3)'")
    write_case(pytester.path, "slow", setup="sleep 1000\n", extra_toml="")
    toml = pytester.path / "cases" / "slow" / "case.toml"
    toml.write_text(toml.read_text().replace("setup_seconds = 60", "setup_seconds = 2"))
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "test step exited with 3: python -c 'raise SystemExit(3)'" in text
    # The golden setup (the oracle's) itself ran out of 3 x its 2 s budget here.
    assert "TIMEOUT: setup step timed out after 6 s (the golden setup itself" in text


def test_unreachable_repository_is_a_harness_error(pytester: pytest.Pytester) -> None:
    case_dir = write_case(pytester.path, "remote")
    toml = case_dir / "case.toml"
    toml.write_text(
        toml.read_text().replace(
            'kind = "folder"\npath = "repo"',
            'kind = "url"\nurl = "https://github.com/nonexistent-owner/nonexistent-repo"\n'
            'revision = "0123456789abcdef0123456789abcdef01234567"',
        )
    )
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(errors=1)
    assert (
        "repository unavailable: https://github.com/nonexistent-owner/nonexistent-repo"
        "@0123456789abcdef0123456789abcdef01234567 (use --repo-mirror DIR)"
    ) in result.stdout.str()
    assert _outcomes(run) == {("remote", "execution"): "error"}


def _agent_runs(run_dir: Path) -> dict[str, int]:
    return {
        path.parent.parent.name: len(path.read_text().splitlines())
        for path in (run_dir / "cases").glob("*/agent/runs.jsonl")
    }


@pytest.mark.slow
def test_xdist_runs_each_agent_once_with_serial_outcomes(pytester: pytest.Pytester) -> None:
    for index, kind in enumerate(["E1", "E2", "E4", "E6"]):
        write_case(
            pytester.path,
            f"case{index}-{kind.lower()}",
            errors=[golden_error(kind)],
            test_command="test -f ok" if index % 2 == 0 else "false",
        )
    serial = pytester.path / "serial"
    pytester.runpytest_subprocess(
        "cases", "-k", "execution or error_types", "--run-dir", str(serial)
    )
    parallel = pytester.path / "parallel"
    result = pytester.runpytest_subprocess(
        "cases", "-n", "2", "-k", "execution or error_types", "--run-dir", str(parallel)
    )
    assert "2 workers" in result.stdout.str()
    assert _outcomes(parallel) == _outcomes(serial)
    assert len(_outcomes(parallel)) == 8
    assert _agent_runs(parallel) == {
        f"case{i}-{k.lower()}": 1 for i, k in enumerate(["E1", "E2", "E4", "E6"])
    }
    workers = {
        json.loads(line)["worker"]
        for path in (parallel / "cases").glob("*/agent/runs.jsonl")
        for line in path.read_text().splitlines()
    }
    assert workers <= {"gw0", "gw1"} and workers


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_outcomes(pytester: pytest.Pytester) -> None:
    for index in range(3):
        write_case(pytester.path, f"case{index}", setup="sleep 2\ntouch ok\n")
    reference = pytester.path / "reference"
    pytester.runpytest_subprocess("cases", "--run-dir", str(reference))

    run = pytester.path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "cases", "--run-dir", str(run), "-p", "no:cacheprovider"],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    results = run / "results.jsonl"
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 5:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = len(results.read_text().splitlines())
    finished = {p.parent.parent.name for p in (run / "cases").glob("*/agent/outcome.json")}
    assert 5 <= partial < 12, "the run should have been killed part-way"

    result = pytester.runpytest_subprocess("cases", "--resume", str(run))
    lines = results.read_text().splitlines()
    keys = [(json.loads(line)["case"], json.loads(line)["item"]) for line in lines]
    assert len(keys) == len(set(keys)) == 12
    assert _outcomes(run) == _outcomes(reference)
    assert result.ret == pytest.ExitCode.OK
    # Agents that had finished before the kill were not run again.
    runs = _agent_runs(run)
    assert finished and all(runs[case] == 1 for case in finished)


def _run_containers(run_id: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_run_removes_its_containers(pytester: pytest.Pytester, sig: int) -> None:
    write_case(pytester.path, "hangs", setup="sleep 1000\n")
    run = pytester.path / f"run-{sig}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "cases", "-k", "execution", "--run-dir", str(run)],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not _run_containers(RunDir(run).run_id):
        time.sleep(0.2)
    assert _run_containers(RunDir(run).run_id), "the execution container never started"
    proc.send_signal(sig)
    # A liveness bound, not a speed target: beside the other worker's image builds (-n 2) the
    # engine took more than 120 s to let the interrupted run remove its box, twice on
    # 2026-11-28, while the test passes in seconds alone.
    proc.wait(timeout=600)
    assert _run_containers(RunDir(run).run_id) == []


@pytest.mark.slow
def test_image_builds_show_steps_and_log_everything(pytester: pytest.Pytester) -> None:
    marker = f"enconda-env-{os.getpid()}-{time.time_ns()}"  # a new layer: it must be built
    write_case(
        pytester.path,
        "envcase",
        extra_toml=f'[environment]\nrun = ["echo {marker} > /etc/enconda-marker"]',
        test_command=f"grep -q {marker} /etc/enconda-marker",
    )
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess("cases", "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(passed=1)
    log = (run / "logs" / "harness.log").read_text()
    assert marker in log and "Step " in log
    lines = result.stdout.lines
    assert any(line.startswith("enconda: Step ") for line in lines)
    # Progress lines break the dots' line when one is open, and leave no blank line behind.
    progress = [n for n, line in enumerate(lines) if line.startswith("enconda: ")]
    assert all(lines[n + 1].strip() for n in progress if n + 1 < len(lines))
    for tag in {word for word in log.split() if word.startswith(("enconda/env:", "enconda/task:"))}:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


def test_unknown_base_image_is_refused_at_collection(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "nobase", extra_toml='base_image = "noble-py3.99"')
    write_case(pytester.path, "good")
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(errors=1, passed=1)
    text = result.stdout.str()
    assert "base_image: unknown base image recipe 'noble-py3.99'; known: " in text
    assert "During handling" not in text  # the message alone, not a chained traceback
    assert _outcomes(run) == {("good", "execution"): "passed"}


def test_imported_instance_runs_from_a_local_mirror(pytester: pytest.Pytester) -> None:
    mirror = pytester.path / "mirror" / "acme" / "widget"
    (mirror / "tests").mkdir(parents=True)
    (mirror / "tests" / "test_widget.py").write_text(
        "import pathlib\n\ndef test_setup_ran():\n    assert pathlib.Path('built').exists()\n"
    )
    git(mirror, "init", "-q")
    git(mirror, "add", ".")
    git(mirror, "commit", "-qm", "widget")
    revision = git(mirror, "rev-parse", "HEAD")

    data = pytester.path / "data"
    instance = data / "instances" / "error_gen_acme_widget" / "acme_widget_error_readme_1"
    instance.mkdir(parents=True)
    (instance / "README.md").write_text("# widget\n\n```bash\ntouch built\n```\n")
    (instance / "README.json").write_text(
        json.dumps({"level": "level1", "errors": [golden_error("E4")]})
    )
    (data / "repo_info.jsonl").write_text(
        json.dumps({"repository": "acme/widget", "revision": revision}) + "\n"
    )
    # An imported instance's execution item runs only against a verified reference.
    from pytest_enconda.cases.sidecar import SIDECAR_NAME, RepoVerification, Sidecar
    from pytest_enconda.verify.sidecar_writer import write_sidecar

    reference = RepoVerification(
        repository="acme/widget",
        revision=revision,
        status="verified",
        test_command="python -m pytest tests",
        test_command_source="default",
        reference_setup="touch built\n",
        reference_source="test",
        pass_set=["tests.test_widget::test_setup_ran"],
    )
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"acme/widget": reference}))
    predictions = pytester.path / "predictions.jsonl"
    predictions.write_text(
        json.dumps(
            {
                "case_id": "acme/widget/error_readme_1",
                "agent": "recorded",
                "setup_script": "pip install -q pytest\ntouch built\n",
            }
        )
        + "\n"
    )
    common = [
        "--cases",
        str(data),
        "-k",
        "execution",
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
    ]

    result = pytester.runpytest(*common, "--run-dir", str(pytester.path / "no-mirror"))
    result.assert_outcomes(errors=1)
    assert "repository unavailable: https://github.com/acme/widget@" in result.stdout.str()

    result = pytester.runpytest(
        *common,
        "--repo-mirror",
        str(pytester.path / "mirror"),
        "--run-dir",
        str(pytester.path / "mirrored"),
    )
    result.assert_outcomes(passed=1)


def test_containers_still_open_are_removed_at_session_end(
    pytester: pytest.Pytester, base_image: str
) -> None:
    """In-process, so no atexit runs: ``pytest_sessionfinish`` itself must close the backend."""
    run_name = f"run-close-{os.getpid()}-{time.time_ns()}"
    pytester.makepyfile(
        f"""
        from pytest_enconda.state import session_of

        def test_leaves_a_container_open(request):
            backend = session_of(request.config).pipeline.backend()
            box = backend.start({base_image!r}, case_id="left-open", role="probe")
            assert box.exec("true", timeout=30).exit_code == 0
        """
    )
    run_dir = pytester.path / run_name
    result = pytester.runpytest("--run-dir", str(run_dir))
    result.assert_outcomes(passed=1)
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={RunDir(run_dir).run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert left.stdout.strip() == ""


@pytest.mark.slow
def test_proxy_credentials_stay_out_of_the_container_when_stripped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy nobody listens on: the case needs no network, only the variables matter.
    monkeypatch.setenv("HTTPS_PROXY", "http://user:s3cret@127.0.0.1:9")
    write_case(pytester.path, "proxy", test_command="! env | grep -q s3cret")
    kept = pytester.runpytest_subprocess(
        "cases", "-k", "execution", "--run-dir", str(pytester.path / "kept")
    )
    kept.assert_outcomes(failed=1)
    assert "the proxy variables carry credentials" in kept.stdout.str()
    stripped = pytester.runpytest_subprocess(
        "cases",
        "-k",
        "execution",
        "--strip-proxy-credentials",
        "--run-dir",
        str(pytester.path / "stripped"),
    )
    stripped.assert_outcomes(passed=1)
