"""Backends are records that build themselves from a run's settings (issue 44): the pipeline
asks the record ``settings.backend_name`` names, with no branch on which backend it is."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

from pytest_enconda.backends import BACKENDS, BackendRecord
from pytest_enconda.backends import _from_entry_point as from_entry_point
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.backends.host import HostBackend
from pytest_enconda.pipeline import backend_for
from pytest_enconda.settings import EncondaSettings

GROUP = "pytest_enconda.backends"


# Module attributes, so real ``EntryPoint`` objects can load them by "module:attr".
def plain_factory(**options: object) -> FakeBackend:
    return FakeBackend(gpus=3)


RECORD = BackendRecord("recorded", plain_factory, existing_environment=True)


def test_the_default_backend_follows_python_unless_named(tmp_path: Path) -> None:
    assert EncondaSettings(run_dir=tmp_path).backend_name == "docker"
    existing = EncondaSettings(run_dir=tmp_path, python=Path(sys.executable), repo=tmp_path)
    assert existing.backend_name == "host"
    assert EncondaSettings(run_dir=tmp_path, backend="fake").backend_name == "fake"


def test_backend_for_builds_the_named_record_from_the_settings(tmp_path: Path) -> None:
    made = backend_for(EncondaSettings(run_dir=tmp_path, backend="fake", gpus="2"), print, "r")
    assert isinstance(made, FakeBackend) and made.gpus == 2
    existing = EncondaSettings(run_dir=tmp_path, python=Path(sys.executable), repo=tmp_path)
    host = backend_for(existing, print, "r")
    assert isinstance(host, HostBackend) and host.repo_dir == tmp_path


def test_an_entry_point_names_a_record_or_a_factory_of_options(tmp_path: Path) -> None:
    record = from_entry_point(EntryPoint("recorded", f"{__name__}:RECORD", GROUP))
    assert record is RECORD
    wrapped = from_entry_point(EntryPoint("plain", f"{__name__}:plain_factory", GROUP))
    assert wrapped.name == "plain" and not wrapped.existing_environment
    # Without a builder from settings, the run's backend is the factory with no options.
    made = wrapped.from_settings(EncondaSettings(run_dir=tmp_path), print, "r")
    assert isinstance(made, FakeBackend) and made.gpus == 3


def test_builtins_declare_which_grades_an_existing_environment() -> None:
    existing = {name for name in BACKENDS.names() if BACKENDS.get(name).existing_environment}
    assert existing == {"host"}
