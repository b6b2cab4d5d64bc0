"""An unreachable cluster address stops the run with one usage error (no cluster started)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_enconda.settings import EncondaSettings

if os.environ.get("CI") == "true":
    import ray  # .ci/run installs the dev extra: a missing ray fails the run, never skips
else:
    ray = pytest.importorskip("ray", reason="--dispatch ray needs the 'ray' extra")


def test_an_unreachable_cluster_is_one_usage_error(tmp_path: Path) -> None:
    from pytest_enconda.dispatch.ray import RayDispatcher

    assert not ray.is_initialized()
    settings = EncondaSettings(run_dir=tmp_path / "run", dispatch="ray=127.0.0.1:1")
    with pytest.raises(pytest.UsageError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:1"):
        RayDispatcher(settings, lambda _m: None)
    assert not ray.is_initialized()


def test_dispatch_with_xdist_workers_is_one_usage_error(pytester: pytest.Pytester) -> None:
    """Refused before xdist starts a worker: one line, not a worker's traceback per worker."""
    case = pytester.path / "cases" / "toy"
    (case / "repo").mkdir(parents=True)
    (case / "README.md").write_text("# toy\n")
    (case / "case.toml").write_text(
        'id = "toy"\nsuite = "diagnosis"\nreadme = "README.md"\ntest_command = "true"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
    )
    result = pytester.runpytest_subprocess("cases", "--dispatch", "ray=127.0.0.1:1", "-n", "2")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "--dispatch ray replaces xdist's workers: drop -n" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
