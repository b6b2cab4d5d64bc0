"""A setup that pins a release PyPI built only for older Pythons (llm-random's
``tensorflow==2.8.0``: wheels for CPython 3.7 to 3.10) is retried once on the newest older base
that PyPI's files, as of the attempt's cutoff, say can install it."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import Requirement
from test_verify_as_of import WHEN
from test_verify_older_python import _run as run_on_fake

from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.sandbox.recipes import BASE_RECIPES, older_base
from pytest_enconda.verify.recipes import AS_OF
from pytest_enconda.verify.wheel_pythons import (
    PyPIError,
    ReleaseFile,
    fetch_release_files,
    installable_on,
    unbuilt_requirement,
    unmatched_requirements,
)

PIP_SAYS = (
    "ERROR: Could not find a version that satisfies the requirement tensorflow==2.8.0 "
    "(from versions: 2.12.0, 2.13.0)\n"
    "ERROR: No matching distribution found for tensorflow==2.8.0\n"
)


def _wheel(name: str, uploaded: str = "2022-02-02T10:00:00Z", **more: Any) -> ReleaseFile:
    return ReleaseFile(
        filename=name, packagetype="bdist_wheel", upload_time_iso_8601=uploaded, **more
    )


TENSORFLOW = {
    "2.8.0": [
        _wheel(f"tensorflow-2.8.0-cp{minor}-cp{minor}-manylinux2010_x86_64.whl")
        for minor in (37, 38, 39, 310)
    ]
    + [_wheel("tensorflow-2.8.0-cp39-cp39-win_amd64.whl")],
    "2.12.0": [_wheel("tensorflow-2.12.0-cp311-cp311-manylinux_2_17_x86_64.whl", "2023-03-22")],
    "2.8.1rc0": [_wheel("tensorflow-2.8.1rc0-cp311-cp311-manylinux2014_x86_64.whl")],
}


# The same files, uploaded before the snapshot's revision day.
BEFORE_WHEN = {
    version: [f.model_copy(update={"upload_time_iso_8601": "2019-02-01T00:00:00Z"}) for f in files]
    for version, files in TENSORFLOW.items()
}


def test_pips_unmatched_requirements_are_read_in_order() -> None:
    text = (
        PIP_SAYS + "ERROR: No matching distribution found for c-blosc2<2.14,>=2.13.2\n" + PIP_SAYS
    )
    assert unmatched_requirements(text) == ["tensorflow==2.8.0", "c-blosc2<2.14,>=2.13.2"]
    assert unmatched_requirements("ERROR: Could not find a version that satisfies x") == []
    # tensorflow/model-analysis's setup: a dependency's pin, with what asked for it.
    assert unmatched_requirements(
        "ERROR: No matching distribution found for tfx-bsl<1.16.0,>=1.15.1 "
        "(from tensorflow-model-analysis)\n"
    ) == ["tfx-bsl<1.16.0,>=1.15.1"]


@pytest.mark.parametrize(
    ("requirement", "python", "before", "expected"),
    [
        ("tensorflow==2.8.0", "3.9.2", "", True),
        ("tensorflow==2.8.0", "3.11.2", "", False),  # a Windows cp39 wheel is no Linux build
        ("tensorflow==2.8.0", "3.9.2", "2022-01-01T00:00:00+00:00", False),  # not yet uploaded
        ("tensorflow==2.8.0", "3.9.2", "2022-03-01T00:00:00+00:00", True),
        ("tensorflow>=2.12", "3.11.2", "2022-03-01", False),  # 2.12 came later
        ("tensorflow>=2.12", "3.11.2", "", True),
        ("tensorflow>2.8.0,<2.9", "3.11.2", "", False),  # a pre-release is not picked unasked
        ("tensorflow==2.8.1rc0", "3.11.2", "", True),
        ("tensorflow==9.9", "3.9.2", "", False),  # never released
    ],
)
def test_a_release_is_installable_where_a_linux_build_for_that_python_was_uploaded(
    requirement: str, python: str, before: str, expected: bool
) -> None:
    assert installable_on(Requirement(requirement), TENSORFLOW, python, before) is expected


def test_pure_abi3_sdist_and_yanked_files_are_read_as_pip_reads_them() -> None:
    releases = {
        "1.0": [_wheel("a-1.0-py3-none-any.whl", requires_python=">=3.10")],
        "2.0": [_wheel("a-2.0-cp38-abi3-manylinux_2_17_x86_64.whl")],
        "3.0": [ReleaseFile(filename="a-3.0.tar.gz", packagetype="sdist", requires_python="<3.10")],
        "4.0": [_wheel("a-4.0-py3-none-any.whl", yanked=True)],
    }
    one, two, three, four = (Requirement(f"a=={v}") for v in ("1.0", "2.0", "3.0", "4.0"))
    assert installable_on(one, releases, "3.11.2") and not installable_on(one, releases, "3.9.2")
    assert installable_on(two, releases, "3.13.5") and not installable_on(two, releases, "3.7.3")
    assert installable_on(three, releases, "3.9.2") and not installable_on(three, releases, "3.11")
    assert not installable_on(four, releases, "3.11.2")


def _fetcher(releases: Mapping[str, list[ReleaseFile]], asked: list[str]) -> Any:
    def fetch(name: str) -> Mapping[str, list[ReleaseFile]]:
        asked.append(name)
        if name != "tensorflow":
            raise PyPIError(f"{name}: 404")
        return releases

    return fetch


def test_the_unbuilt_pin_says_which_pythons_have_it(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    log.write_text("ERROR: No matching distribution found for nosuchthing==1\n" + PIP_SAYS)
    asked: list[str] = []
    found = unbuilt_requirement([log], "3.11.2", "", fetch=_fetcher(TENSORFLOW, asked))
    assert asked == ["nosuchthing", "tensorflow"]  # PyPI could not say of the first: skipped
    assert found is not None and found.requirement == "tensorflow==2.8.0"
    assert found.allows("3.9.2") and found.allows("3.10.12") and not found.allows("3.11.2")
    assert "Python 3.11.2" in found.describe()
    choice = older_base("bookworm-py3.11", found.allows, None)
    assert choice is not None and choice.name == "bullseye-py3.9"
    # With a cutoff before its upload no Python has it: no older base either.
    early = unbuilt_requirement([log], "3.11.2", "2021-06-01", fetch=_fetcher(TENSORFLOW, []))
    assert early is not None and older_base("bookworm-py3.11", early.allows, None) is None


def test_a_pin_this_python_can_install_is_not_the_interpreters_doing(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    log.write_text(PIP_SAYS.replace("2.8.0", "2.12.0"))
    assert unbuilt_requirement([log], "3.11.2", "", fetch=_fetcher(TENSORFLOW, [])) is None
    assert unbuilt_requirement([tmp_path / "absent.log"], "3.11.2", fetch=_no_call) is None


def _no_call(name: str) -> Any:
    raise AssertionError(f"PyPI asked about {name} with no log")


@given(st.binary(max_size=2000))
def test_any_bytes_from_pypi_are_a_pypi_error_or_a_document(data: bytes) -> None:
    """A document that is not PyPI's JSON costs only the retry (``PyPIError``), nothing else."""
    import io
    import urllib.request
    from unittest import mock

    class _Response(io.BytesIO):
        def __enter__(self) -> _Response:
            return self

        def __exit__(self, *_: object) -> None:
            self.close()

    with mock.patch.object(urllib.request, "urlopen", lambda *_a, **_k: _Response(data)):
        try:
            releases = fetch_release_files("x")
        except PyPIError:
            return
    assert isinstance(releases, dict)


def _run(
    tmp_path: Path, monkeypatch: Any, setup_logs: dict[str, str], verifies: set[str]
) -> tuple[RepoVerification, list[tuple[str, str, str]], list[str]]:
    """verify on the fake of the older-Python tests, its attempts writing setup logs."""
    record, tried, built, _ = run_on_fake(
        tmp_path,
        monkeypatch,
        setup_logs,
        verifies,
        step="setup",
        pypi_files=_fetcher(BEFORE_WHEN, []),
    )
    return record, tried, built


def test_a_pin_older_pythons_have_retries_the_last_recipe_on_the_older_base(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The snapshot's revision is dated ``WHEN``; in this index 2.8.0's wheels came before."""
    retry = f"{AS_OF}@bullseye-py3.9"
    record, tried, built = _run(tmp_path, monkeypatch, {AS_OF: PIP_SAYS}, {retry})
    assert tried == [
        ("recipe", "bookworm-py3.11", ""),
        (AS_OF, "bookworm-py3.11", WHEN),
        (retry, "bullseye-py3.9", WHEN),
    ]
    assert built == ["bookworm-py3.11", "bullseye-py3.9"]
    assert record.status == "verified" and record.base_image == "bullseye-py3.9"
    said = [a for a in record.attempts if "tensorflow==2.8.0" in a]
    assert said and said[0].endswith("retried on bullseye-py3.9"), record.attempts


def test_a_pin_no_older_python_has_is_said_and_not_retried(
    tmp_path: Path, monkeypatch: Any
) -> None:
    never = PIP_SAYS.replace("2.8.0", "9.9")
    record, tried, built = _run(tmp_path, monkeypatch, {AS_OF: never}, set())
    assert [label for label, _, _ in tried] == ["recipe", AS_OF]
    assert built == ["bookworm-py3.11"]
    assert any("tensorflow==9.9" in a and "no base has an older" in a for a in record.attempts)


def _pypi_reachable() -> bool:
    try:
        fetch_release_files("pip", timeout=20)
    except PyPIError:
        return False
    return True


@pytest.mark.docker
def test_pip_in_the_base_and_pypi_itself_send_tensorflow_2_8_to_bullseye(
    sandbox, base_image, tmp_path: Path
) -> None:
    """The real pip of the bookworm base refuses the pin with the text the reader reads, and
    PyPI's real files say bullseye's 3.9 can install it (needs PyPI, as every setup does)."""
    if not _pypi_reachable():
        if os.environ.get("CI") == "true":
            pytest.fail("PyPI is unreachable: every setup needs it")
        pytest.skip("PyPI is unreachable from this machine")
    with sandbox.container(base_image, case_id="t/unbuilt", role="test") as box:
        run = box.exec(
            "python3 -m pip download --no-deps -d /tmp/x " + shlex.quote("tensorflow==2.8.0"),
            timeout=300,
            workdir="/",
        )
    assert run.exit_code != 0
    assert unmatched_requirements(run.output) == ["tensorflow==2.8.0"], run.output
    python = BASE_RECIPES["bookworm-py3.11"].python_release
    log = tmp_path / "setup.log"
    log.write_text(run.output)
    found = unbuilt_requirement([log], python)
    assert found is not None
    choice = older_base("bookworm-py3.11", found.allows, None)
    assert choice is not None and choice.name == "bullseye-py3.9"
