"""``--backend NAME`` runs a benchmark on any registered backend (issue 44): a toy one a
conftest.py registers, the built-in fake one, and a usage error for a name nobody registered."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from casefactory import write_case

pytest_plugins = ["pytester"]

# The fake backend under another name, noting each box it starts: the cases ran through it.
TOY = """
from pathlib import Path

from pytest_enconda.backends import BACKENDS, BackendRecord
from pytest_enconda.backends.fake import FakeBackend


class ToyBackend(FakeBackend):
    name = "toy"
    log: Path

    def start(self, image, *, case_id, role, **options):
        with self.log.open("a") as handle:
            handle.write(f"{case_id} {role}\\n")
        return super().start(image, case_id=case_id, role=role, **options)


def for_run(settings, progress, run_id):
    backend = ToyBackend()
    backend.log = Path(settings.run_dir).parent / "toy-boxes.log"
    progress(f"toy backend for run {run_id}")
    return backend


BACKENDS.register(BackendRecord("toy", ToyBackend, for_run))
"""


def _outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row["outcome"] for row in rows}


def test_a_conftest_backend_serves_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TOY)
    write_case(pytester.path, "good")
    write_case(pytester.path, "bad", test_command="test -f missing")
    run = pytester.path / "run"
    # A subprocess: the registration must not leak into this test process's registry.
    result = pytester.runpytest_subprocess(
        "cases", "-k", "execution", "--backend", "toy", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=1, failed=1)
    assert _outcomes(run) == {("bad", "execution"): "failed", ("good", "execution"): "passed"}
    started = (pytester.path / "toy-boxes.log").read_text().split()
    assert {"good", "bad"} <= set(started)


def test_the_fake_backend_by_name(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "good")
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "-k", "execution", "--backend", "fake", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=1)
    assert _outcomes(run) == {("good", "execution"): "passed"}


def test_an_unknown_or_unfitting_backend_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "good")
    result = pytester.runpytest("cases", "--backend", "podman")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--backend: unknown backend 'podman'; available: docker, fake, host" in (
        result.stderr.str()
    )
    result = pytester.runpytest("cases", "--backend", "host")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--backend host grades an existing environment: give --python and --repo" in (
        result.stderr.str()
    )
    existing = ("--python", sys.executable, "--repo", str(pytester.path))
    result = pytester.runpytest("cases", *existing, "--backend", "fake")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--python grades an existing environment, which --backend fake does not take" in (
        result.stderr.str()
    )
