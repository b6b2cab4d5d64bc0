"""What a ``construct`` run is asked for (``ConstructOptions``) and how it fails: a
``ConstructInputError`` is the user's to fix (exit 2), any other ``ConstructError`` the run's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EncondaError, InputError
from .models import CONSTRUCT_TYPES

Progress = Callable[[str], None]


class ConstructError(EncondaError):
    pass


class ConstructInputError(ConstructError, InputError):
    """The sources, OUT or the options are not what ``construct`` can work from: the user's
    to fix (the command line exits 2), found before anything runs in Docker."""


class ConstructOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    sources: tuple[str, ...]
    out: Path
    types: tuple[str, ...] = CONSTRUCT_TYPES
    per_readme: int = Field(default=2, ge=1)
    per_type: int = Field(default=2, ge=1)
    levels: tuple[int, ...] = (1, 2, 3, 5)
    injector: str = "rules"
    llm_api_base: str | None = None
    judge: str | None = None
    judge_api_base: str | None = None
    judge_cache: Path | None = None
    seed: int = 0
    owner: str = "local"
    repo_mirror: Path | None = None
    workers: int = Field(default=2, ge=1)
    setup_seconds: float = 900
    test_seconds: float = 600
    logs: Path | None = None
