"""One cache folder: ``ENCONDA_CACHE_DIR`` moves every part of it (issue 7.6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.cache import default_cache_dir
from pytest_enconda.grading.judges import llm
from pytest_enconda.sandbox.settings import SandboxSettings


def test_every_cache_user_honours_enconda_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    assert default_cache_dir() == tmp_path / "cache"
    assert SandboxSettings.from_env().cache_dir == tmp_path / "cache"
    assert llm.default_cache_dir() == tmp_path / "cache" / "judge"


def test_xdg_cache_home_is_the_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ENCONDA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "pytest-enconda"
    assert llm.default_cache_dir() == tmp_path / "pytest-enconda" / "judge"
