"""Agent outputs and self-reports made by an untrusted agent: only regular files in the copied
folder are read; links and special files are refused and named in the outcome's problems."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_enconda.agents.output import DIAGNOSIS, REPORT, SETUP, collect_outputs, read_outputs

EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
GOOD_DIAGNOSIS = json.dumps([{"error_type": "E4", "error_description": "d", "fix_suggestion": "f"}])


def make(folder: Path, name: str, kind: str, canary: Path) -> None:
    path = folder / name
    if kind == "absolute link":
        path.symlink_to(canary)
    elif kind == "relative link":
        (folder / "inner.txt").write_text("pip install .\n")
        path.symlink_to("inner.txt")
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()


KINDS = ["absolute link", "relative link", "link to /dev/zero", "fifo", "folder"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [SETUP, DIAGNOSIS, REPORT])
def test_a_non_regular_output_is_refused_and_named(
    attempt, tmp_path: Path, canary: Path, name: str, kind: str
) -> None:
    make(tmp_path, name, kind, canary)
    if name != SETUP:
        (tmp_path / SETUP).write_text("pip install .\n")
    if name != DIAGNOSIS:
        (tmp_path / DIAGNOSIS).write_text(GOOD_DIAGNOSIS)
    outputs, _ = attempt(
        "agent output", lambda: read_outputs(tmp_path, research=name == REPORT), ()
    )
    assert name in outputs.problems and name in outputs.problems[name]
    if name != SETUP:
        assert outputs.setup_script == "pip install .\n"  # the good file beside still counts
    if name == REPORT:
        assert outputs.self_report == {"__invalid__": outputs.problems[REPORT]}


@EXAMPLES
@given(data=st.binary(max_size=3000), name=st.sampled_from([SETUP, DIAGNOSIS, REPORT]))
def test_any_bytes_in_an_output_file(attempt, tmp_path_factory, data: bytes, name: str) -> None:
    folder = tmp_path_factory.mktemp("out")
    (folder / name).write_bytes(data)
    outputs, _ = attempt("agent output", lambda: read_outputs(folder, research=name == REPORT), ())
    assert set(outputs.problems) <= {SETUP, DIAGNOSIS, REPORT}


@pytest.mark.parametrize("data", [b"[" * 100_000, b"{" * 100_000, b"x" * 2_100_000])
def test_deep_or_huge_self_reports_and_diagnoses(attempt, tmp_path: Path, data: bytes) -> None:
    for name in (DIAGNOSIS, REPORT):
        (tmp_path / name).write_bytes(data)
    for research in (False, True):
        outputs, _ = attempt(
            "self-report", lambda r=research: read_outputs(tmp_path, research=r), ()
        )
        assert (REPORT if research else DIAGNOSIS) in outputs.problems


@pytest.fixture
def fake_box(tmp_path: Path):
    from pytest_enconda.backends.base import started
    from pytest_enconda.backends.fake import FakeBackend

    fake = FakeBackend(tmp_path / "fake")
    image = fake.add_image("img", {"/data/project/.keep": ""})
    with started(fake, image, case_id="t/hostile", role="agent") as box:
        yield box
    fake.close()


def test_collect_outputs_refuses_a_link_out_of_the_box(
    attempt, fake_box, canary: Path, tmp_path: Path
) -> None:
    fake_box.exec(
        "mkdir -p /enconda/output && echo 'pip install .' > /enconda/output/setup.sh"
        f" && echo '{GOOD_DIAGNOSIS}' > /enconda/output/{DIAGNOSIS}",
        timeout=30,
    )
    link = Path(fake_box.path(f"/enconda/output/{DIAGNOSIS}"))
    link.unlink()
    link.symlink_to(canary)
    outputs, _ = attempt("agent output", lambda: collect_outputs(fake_box, tmp_path / "kept"), ())
    assert DIAGNOSIS in outputs.problems and "refused" in outputs.problems[DIAGNOSIS]
    assert outputs.setup_script.strip() == "pip install ."
    assert not (tmp_path / "kept" / DIAGNOSIS).exists()


@pytest.mark.docker
def test_a_real_box_cannot_make_the_harness_read_a_host_file(
    attempt, sandbox, base_image, canary: Path, tmp_path: Path
) -> None:
    from pytest_enconda.backends.base import started
    from pytest_enconda.backends.docker import DockerBackend

    backend = DockerBackend(sandbox=sandbox)
    with started(backend, base_image, case_id="t/hostile", role="agent") as box:
        box.exec(
            "mkdir -p /enconda/output && cd /enconda/output"
            f" && ln -s {canary} setup.sh && ln -s /etc/hostname {DIAGNOSIS}"
            " && ln -s setup.sh report.json && mkfifo pipe",
            timeout=60,
        )
        for research in (False, True):
            outputs, _ = attempt(
                "agent output (docker)",
                lambda r=research: collect_outputs(box, tmp_path / f"kept{r}", research=r),
                (),
            )
            assert "refused" in outputs.problems[SETUP]
            assert "refused" in outputs.problems[REPORT if research else DIAGNOSIS]
            assert outputs.setup_script == ""
    backend.close()
