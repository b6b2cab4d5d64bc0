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
