"""Disk space before an image is written, and a run's snapshots removed once its cases are
graded (issue 48 item 7): logic on the fake backend, the engine's side on the real one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.diskspace import HEADROOM, DiskSpaceError, human, require_space, tree_bytes
from pytest_enconda.errors import HarnessError
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.settings import EncondaSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
from casefactory import VENV_SETUP, write_research_case

pytest_plugins = ["pytester"]

# What the setup writes: a few MB, so that a "free" figure below it is a shortfall.
BIG_SETUP = "head -c 3000000 /dev/zero > blob.bin\n"


def test_require_space_names_what_how_much_and_where() -> None:
    require_space(None, 10**15, "anything", "nowhere")  # unknown: nothing is checked
    require_space(HEADROOM + 100, 100, "fits", "/var/lib/docker")
    with pytest.raises(DiskSpaceError) as caught:
        require_space(HEADROOM + 99, 100, "the final-state snapshot of x", "/var/lib/docker")
    message = str(caught.value)
    assert "the final-state snapshot of x" in message
    assert "/var/lib/docker" in message
    assert f"{human(HEADROOM + 100)} in all" in message and "1023 B is free" not in message
    assert isinstance(caught.value, HarnessError)  # an error of the harness, not the agent's


def test_human_and_tree_bytes(tmp_path: Path) -> None:
    assert [human(n) for n in (0, 1023, 1024, 6_979_321_856)] == [
        "0 B",
        "1023 B",
        "1.0 KB",
        "6.5 GB",
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x" * 1000)
    (tmp_path / "g").write_bytes(b"y" * 24)
    # A link is copied as a link: its own size (its target's length), the target not followed.
    (tmp_path / "link").symlink_to("/usr/bin/python3")
    assert tree_bytes(tmp_path) == 1024 + len("/usr/bin/python3")


def _case(root: Path, setup: str = VENV_SETUP) -> Case:
    case_dir = write_research_case(root, "tiny", setup=setup)
    return load_case(case_dir / "case.toml", [root / "cases"])


def _pipeline(
    tmp_path: Path, backend: FakeBackend, messages: list[str], **settings: object
) -> CasePipeline:
    return CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run", **settings),  # type: ignore[arg-type]
        progress=messages.append,
        backend=backend,
    )


def test_a_snapshot_that_cannot_fit_is_a_named_harness_error(tmp_path: Path) -> None:
    case = _case(tmp_path, BIG_SETUP)
    backend = FakeBackend(tmp_path / "fake", free=HEADROOM + 1_000_000)
    pipeline = _pipeline(tmp_path, backend, [])
    with pytest.raises(DiskSpaceError, match="final-state snapshot of tiny"):
        pipeline.final_state(case)
    assert backend.ops("snapshot") == []  # refused before anything was written
    # Every stage that needs the final state gets the same harness error (an item error).
    with pytest.raises(DiskSpaceError):
        pipeline.stage(case, "C1")


def test_released_snapshot_is_gone_and_rebuilt_when_asked_again(tmp_path: Path) -> None:
    case = _case(tmp_path)
    backend = FakeBackend(tmp_path / "fake", free=10**12)
    messages: list[str] = []
    pipeline = _pipeline(tmp_path, backend, messages)
    first = pipeline.stage(case, "C1")
    image = pipeline.final_state(case).image
    assert backend.image_exists(image)
    pipeline.release_snapshot(case)
    assert not backend.image_exists(image)
    assert [call.detail["image"] for call in backend.ops("remove_snapshot")] == [image]
    # An item asked after the release (--resume, or out of order) gets a rebuilt snapshot.
    again = pipeline.stage(case, "C5")
    rebuilt = pipeline.final_state(case).image
    assert rebuilt != image and backend.image_exists(rebuilt)
    assert any("is gone; rebuilding it" in line for line in messages)
    assert (first.outcome, again.outcome) == ("passed", "passed"), (first, again)


def test_keep_snapshots_keeps_it(tmp_path: Path) -> None:
    case = _case(tmp_path)
    backend = FakeBackend(tmp_path / "fake")
    pipeline = _pipeline(tmp_path, backend, [], keep_snapshots=True)
    image = pipeline.final_state(case).image
    pipeline.release_snapshot(case)
    assert backend.image_exists(image) and backend.ops("remove_snapshot") == []


def test_only_snapshots_are_removed(tmp_path: Path) -> None:
    backend = FakeBackend(tmp_path / "fake")
    base = backend.add_image("fake/base:one")
    assert backend.remove_snapshot(base) is False and backend.image_exists(base)
    assert backend.remove_snapshot("fake/snapshot:never-made") is False


# A toy backend (the fake one) that notes each snapshot made and removed, for a whole run.
NOTING = """
import json
from pathlib import Path

from pytest_enconda.backends import BACKENDS, BackendRecord
from pytest_enconda.backends.fake import FakeBackend, FakeBox


class NotingBackend(FakeBackend):
    name = "noting"

    def note(self, what, image):
        with (Path(self.log_dir) / "images.log").open("a") as handle:
            handle.write(json.dumps([what, image]) + "\\n")

    def remove_snapshot(self, image):
        removed = super().remove_snapshot(image)
        if removed:
            self.note("removed", image)
        return removed

    def start(self, image, **options):
        box = super().start(image, **options)
        original = box.snapshot

        def snapshot(hint):
            ref = original(hint)
            self.note("made", ref)
            return ref

        box.snapshot = snapshot
        return box


def for_run(settings, progress, run_id):
    backend = NotingBackend()
    backend.log_dir = str(Path(settings.run_dir).parent)
    return backend


BACKENDS.register(BackendRecord("noting", NotingBackend, for_run))
"""


def _images(root: Path) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {"made": set(), "removed": set()}
    log = root / "images.log"
    for line in log.read_text().splitlines() if log.is_file() else []:
        what, image = json.loads(line)
        seen[what].add(image)
    return seen


def _outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row["outcome"] for row in rows}


@pytest.mark.slow  # two research runs in subprocesses: about 3 minutes on a loaded machine
def test_a_run_removes_its_snapshots_unless_kept(pytester: pytest.Pytester) -> None:
    """Under xdist (a case's items on one worker), each case's snapshot goes after its last
    item; with --keep-snapshots none goes; the outcomes are the same."""
    pytester.makeconftest(NOTING)
    for name in ("one", "two", "three"):
        write_research_case(pytester.path, name)
    removed_run, kept_run = pytester.path / "run-a", pytester.path / "run-b"
    args = ["cases", "-k", "C1 or C5", "--backend", "noting", "-p", "no:randomly"]
    first = pytester.runpytest_subprocess(*args, "-n", "2", "--run-dir", str(removed_run))
    images = _images(pytester.path)
    assert len(images["made"]) == 3 and images["removed"] == images["made"], images
    (pytester.path / "images.log").unlink()
    second = pytester.runpytest_subprocess(*args, "--run-dir", str(kept_run), "--keep-snapshots")
    kept = _images(pytester.path)
    assert len(kept["made"]) == 3 and kept["removed"] == set(), kept
    # Removing them changes no outcome.
    assert _outcomes(removed_run) == _outcomes(kept_run)
    first.assert_outcomes(passed=len(_outcomes(removed_run)))
    second.assert_outcomes(passed=len(_outcomes(kept_run)))
