"""``verify --recheck`` (issue 47 items 3 and 7): the null-setup check and the checkout proof by
the current probe, on records verified before either, written into each record with the rest of
the record as it was; a proof that refuses the reference, or a reference setup that now fails,
makes the record unverified with the reason; resumable, each part redone when it is out of date
or with ``--redo``; on the fake backend."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from dataset_factory import GOLDEN_ERROR
from gitutil import git

from pytest_enconda.backends.fake import FakeBackend, FakeBox, canned
from pytest_enconda.cases.sidecar import NullSetup, RepoVerification, Sidecar, read_sidecar
from pytest_enconda.cli import main
from pytest_enconda.errors import EncondaError
from pytest_enconda.probing.junit import JUNIT_PATH
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.verify import VerifyOptions
from pytest_enconda.verify.attempt import SETUP_SCRIPT, step_digest
from pytest_enconda.verify.checkout import probe_digest
from pytest_enconda.verify.recheck import proof_current, recheck_dataset, recheck_summary
from pytest_enconda.verify.sidecar_writer import write_sidecar

PASS_SET = ["tests.test_calc::test_add", "tests.test_calc::test_sub"]


def module(name: str, file: str, *, checkout: bool) -> dict[str, Any]:
    """One module's entry as ``probes/checkout_proof.py`` reports it."""
    return {
        "name": name,
        "file": file,
        "under_checkout": checkout,
        "distribution": None if checkout else "calc-release",
        "direct_url": None,
        "from_checkout": checkout,
        "error": None,
    }


def probe_report(*modules: dict[str, Any], distribution: dict[str, Any] | None = None) -> str:
    report = {"project": "/data/project", "modules": list(modules), "error": None}
    return json.dumps({**report, "distribution": distribution})


FROM_CHECKOUT = probe_report(module("calc", "/data/project/calc/__init__.py", checkout=True))
RELEASE = probe_report(
    module("calc", "/usr/local/lib/python3.11/site-packages/calc/__init__.py", checkout=False)
)


class _Tests:
    """A box's answers: the reference setup exits ``setup_exit``; the probe prints ``probe``; the
    test step passes only ``alone`` (raises when ``step_error``). Each command is kept, with each
    setup's script and budget."""

    def __init__(
        self,
        alone: list[str],
        probe: str = FROM_CHECKOUT,
        setup_exit: int = 0,
        step_error: bool = False,
    ) -> None:
        self.alone, self.probe, self.setup_exit = alone, probe, setup_exit
        self.step_error = step_error
        self.commands: list[str] = []
        self.setups: list[tuple[str, float]] = []

    def respond(
        self, box: FakeBox, command: str, timeout: float, _workdir: str, _env: Mapping[str, str]
    ) -> ExecResult:
        self.commands.append(command)
        if "checkout_proof.py" in command:
            return canned(self.probe + "\n", 0)
        if SETUP_SCRIPT in command:
            self.setups.append((box.path(SETUP_SCRIPT).read_text(), timeout))
            failed = "ERROR: No matching distribution found for calc-core==9\n"
            return canned("ok\n" if not self.setup_exit else failed, self.setup_exit)
        if "--junitxml" not in command:
            return canned("", 0)
        if self.step_error:
            raise EncondaError("the engine went away")
        cases = "".join(
            f'<testcase classname="{test.split("::")[0]}" name="{test.split("::")[1]}"/>'
            for test in self.alone
        )
        report = box.path(JUNIT_PATH)
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
        return canned(f"{len(self.alone)} passed", 0 if self.alone else 1)

    def ran(self, word: str) -> int:
        """How many commands had ``word`` (``setup.sh``, ``checkout_proof.py``, ``--junitxml``)."""
        return sum(1 for command in self.commands if word in command)


CALC = {
    "pyproject.toml": '[project]\nname = "calc"\ndependencies = ["Requests>=2"]\n',
    "calc/__init__.py": "",
}


def _world(tmp_path: Path, files: Mapping[str, str] = CALC) -> tuple[Path, Path, str]:
    """A dataset of two repositories (o/calc verified, o/gone not), the mirror of o/calc (its
    ``files``: the package ``calc`` by default) and its commit."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    for name, text in files.items():
        (origin / name).parent.mkdir(parents=True, exist_ok=True)
        (origin / name).write_text(text)
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    commit = git(origin, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(mirror / "o+calc" / "repo"))
    data = tmp_path / "data"
    data.mkdir()
    lines = [
        {"repository": "o/calc", "revision": commit},
        {"repository": "o/gone", "revision": "1"},
    ]
    (data / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    golden = {"level": "level1", "errors": [{**GOLDEN_ERROR, "correction_candidates": []}]}
    for name in ("calc", "gone"):
        folder = data / "instances" / f"error_gen_o_{name}" / f"o_{name}_error_readme_1"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text("# x\n")
        (folder / "README.json").write_text(json.dumps(golden))
    return data, mirror, commit


def _verified(commit: str) -> RepoVerification:
    """A record verified before the null-setup check: no null setup, no runtime requirements."""
    return RepoVerification(
        repository="o/calc",
        revision=commit,
        status="verified",
        test_command="python -m pytest tests",
        test_tools=["pytest"],
        test_requirements=["requests", "pytest-mock"],
        reference_setup="pip install .\n",
        reference_source="recipe",
        pass_set=PASS_SET,
        pass_share=1.0,
        attempts=["recipe: 2 of 2 tests passed in both runs"],
        timings={"recipe_setup_s": 12.0, "total_s": 40.0},
        verified_at="2026-11-01T00:00:00+00:00",
    )


def _sidecar(tmp_path: Path, *records: RepoVerification) -> Path:
    out = tmp_path / "sidecar.json"
    write_sidecar(out, Sidecar(repositories={record.repository: record for record in records}))
    return out


def _recheck(
    tmp_path: Path,
    data: Path,
    mirror: Path,
    out: Path,
    alone: list[str],
    redo: bool = False,
    **box: Any,
) -> tuple[Sidecar, _Tests, list[str]]:
    tests = _Tests(alone, **box)
    backend = FakeBackend(tmp_path / "fake", responder=tests.respond)
    lines: list[str] = []
    sidecar = recheck_dataset(
        VerifyOptions(dataset=data, out=out, logs=tmp_path / "logs", repo_mirror=mirror, redo=redo),
        lines.append,
        backend=backend,
    )
    return sidecar, tests, lines


def test_the_recheck_proves_the_checkout_measures_the_null_setup_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    data, mirror, commit = _world(tmp_path)
    old = _verified(commit)
    gone = RepoVerification(repository="o/gone", revision="1", status="unverified", reason="x")
    out = _sidecar(tmp_path, old, gone)
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET[:1])
    written = read_sidecar(out)
    record = written.repositories["o/calc"]
    assert record.null_setup is not None
    found = record.null_setup
    assert (found.passed, found.pass_set, found.share, found.trivial) == (1, 2, 0.5, False)
    assert found.step_sha256 == step_digest(record)
    # Read from the checkout: the graded step leaves the project's own runtime need to the
    # setup, and says so, while the test-only requirement still installs.
    assert record.runtime_requirements == ["requests"]
    (step,) = [command for command in tests.commands if "--junitxml" in command]
    assert "left to the setup" in step and "pytest-mock" in step
    installs = [line for line in step.splitlines() if "pip install" in line]
    assert installs and not any("requests" in line for line in installs)
    # The record's own reference setup ran, then the current probe, looking for the checkout's
    # package and the declared distribution; no test run but the null setup's.
    assert tests.setups == [("pip install .\n", 2400)]
    (probe,) = [command for command in tests.commands if "checkout_proof.py" in command]
    assert "--distribution=calc -- calc" in probe
    proof = record.checkout_proof
    assert proof is not None and proof.verdict == "checkout" and proof.modules[0].from_checkout
    assert proof.probe_sha256 == probe_digest() and record.verified
    assert proof.modules[0].under_checkout
    changed = {"null_setup", "runtime_requirements", "timings", "checkout_proof"}
    assert record.model_dump(exclude=changed) == old.model_dump(exclude=changed)
    assert {"recipe_setup_s": 12.0, "total_s": 40.0}.items() <= record.timings.items()
    assert {"null_setup_s", "recheck_s", "recheck_setup_s"} <= set(record.timings)
    assert written.repositories["o/gone"] == gone
    assert lines[0].startswith("verify --recheck: 1 of 1 verified repositories to recheck")
    assert "1 checkout proofs to make with probe " in lines[0] and "1 null setups" in lines[0]
    said = next(line for line in lines if line.startswith("o/calc: checkout proof"))
    assert "'checkout': calc imported from the checkout" in said
    assert said.endswith("not trivial: an empty setup passes 1 of 2 PASS-set tests (50%)")
    assert lines[-1] == (
        "verify --recheck: 1 checkout proofs made: 1 keep their record verified (checkout 1); "
        "verified -> unverified: 0 (none)"
    )
    logs = tmp_path / "logs" / "o__calc"
    for name in ("null-setup-test.log", "recheck-setup.log", "recheck-checkout.json"):
        assert (logs / name).is_file(), name


def test_a_current_record_is_skipped_and_a_part_out_of_date_is_made_alone(
    tmp_path: Path,
) -> None:
    data, mirror, commit = _world(tmp_path)
    out = _sidecar(tmp_path, _verified(commit))
    _recheck(tmp_path, data, mirror, out, PASS_SET)
    first = read_sidecar(out).repositories["o/calc"]
    assert first.null_setup is not None and first.null_setup.trivial
    assert proof_current(first)

    _, tests, lines = _recheck(tmp_path, data, mirror, out, [])
    assert tests.commands == [] and lines[0].startswith("verify --recheck: 0 of 1")
    assert read_sidecar(out).repositories["o/calc"] == first

    _, tests, _ = _recheck(tmp_path, data, mirror, out, [], redo=True)
    again = read_sidecar(out).repositories["o/calc"]
    assert again.null_setup is not None and (again.null_setup.passed, again.null_setup.trivial) == (
        0,
        False,
    )
    assert (tests.ran("setup.sh"), tests.ran("checkout_proof.py"), tests.ran("--junitxml")) == (
        1,
        1,
        1,
    )

    # Measured with another graded step (an older harness installed something else): the null
    # setup alone is measured again, the proof stays.
    sidecar = read_sidecar(out)
    assert sidecar.repositories["o/calc"].null_setup is not None
    sidecar.repositories["o/calc"].null_setup.step_sha256 = "0" * 64
    write_sidecar(out, sidecar)
    _, tests, _ = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert (tests.ran("setup.sh"), tests.ran("checkout_proof.py"), tests.ran("--junitxml")) == (
        0,
        0,
        1,
    )
    latest = read_sidecar(out).repositories["o/calc"]
    assert latest.null_setup is not None and latest.null_setup.trivial
    assert latest.checkout_proof == again.checkout_proof

    # A proof made by another probe (or before the probe was recorded): the proof alone.
    for digest in ("0" * 64, None):
        sidecar = read_sidecar(out)
        proof = sidecar.repositories["o/calc"].checkout_proof
        assert proof is not None
        proof.probe_sha256 = digest
        write_sidecar(out, sidecar)
        _, tests, lines = _recheck(tmp_path, data, mirror, out, [])
        assert (tests.ran("setup.sh"), tests.ran("checkout_proof.py")) == (1, 1)
        assert tests.ran("--junitxml") == 0, lines
        now = read_sidecar(out).repositories["o/calc"]
        assert proof_current(now) and now.null_setup == latest.null_setup


def test_a_record_that_cannot_be_rechecked_stays_as_it_was(tmp_path: Path) -> None:
    data, _mirror, commit = _world(tmp_path)
    old = _verified(commit)
    out = _sidecar(tmp_path, old)
    _, tests, lines = _recheck(tmp_path, data, tmp_path / "no-mirror", out, PASS_SET)
    assert read_sidecar(out).repositories["o/calc"] == old
    assert not any("--junitxml" in command for command in tests.commands)
    assert any(line.startswith("o/calc: not rechecked: ") for line in lines), lines


def test_the_summary_counts_trivial_records_and_spreads_the_shares() -> None:
    def record(name: str, passed: int | None, size: int = 4) -> RepoVerification:
        found = None
        if passed is not None:
            share, trivial = passed / size, passed == size
            found = NullSetup(passed=passed, pass_set=size, share=share, trivial=trivial)
        tests = [f"t::{i}" for i in range(size)]
        return RepoVerification(
            repository=name, revision="r", status="verified", pass_set=tests, null_setup=found
        )

    records = [record("a/0", 0), record("a/1", 1), record("a/2", 2), record("a/4", 4)]
    records.append(record("a/none", None))
    sidecar = Sidecar(repositories={record.repository: record for record in records})
    line = recheck_summary(sidecar)
    assert "4 of 5 verified repositories have a null setup; 1 trivial" in line
    assert "none 1, under half 1, half or more 1, all 1" in line


def test_the_recheck_needs_a_sidecar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, _, _ = _world(tmp_path)
    code = main(["verify", str(data), "--recheck", "--out", str(tmp_path / "none.json")])
    assert code == 2
    assert "--recheck: --out" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.docker
def test_the_recheck_in_real_boxes(tmp_path: Path, sandbox, base_image) -> None:
    """On the real engine: a repository whose test of the package needs its runtime requirement
    (tomli-w, which the base lacks) and whose other test needs nothing. Its record lists tomli-w
    among the test requirements too; the graded step leaves it to the setup, so an empty setup
    passes only the test that needs nothing. Its reference setup, run again, is proven to
    install the checkout."""
    from verifyfake import fake_context

    from pytest_enconda.backends.docker import DockerBackend
    from pytest_enconda.verify.recheck import recheck_repository

    origin = tmp_path / "origin"
    (origin / "calc").mkdir(parents=True)
    (origin / "tests").mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "1"\ndependencies = ["tomli-w"]\n'
    )
    (origin / "calc" / "__init__.py").write_text(
        "import tomli_w\n\ndef dump(value):\n    return tomli_w.dumps(value)\n"
    )
    (origin / "tests" / "test_calc.py").write_text(
        "def test_plain():\n    assert 1 + 1 == 2\n\n"
        "def test_dump():\n    import calc\n    assert calc.dump({'a': 1}) == 'a = 1\\n'\n"
    )
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(mirror / "o+calc" / "repo"))
    record = RepoVerification(
        repository="o/calc",
        revision=git(origin, "rev-parse", "HEAD"),
        status="verified",
        test_command="python -m pytest tests",
        test_tools=["pytest"],
        test_requirements=["tomli-w"],
        reference_setup="pip install .\n",
        pass_set=["tests.test_calc::test_dump", "tests.test_calc::test_plain"],
    )
    lines: list[str] = []
    backend = DockerBackend(sandbox=sandbox)
    ctx = fake_context(tmp_path, mirror, lines, backend=backend, logs=tmp_path / "logs")
    rechecked, failure = recheck_repository(ctx, record)
    log = (tmp_path / "logs" / "o__calc" / "null-setup-test.log").read_text()
    assert failure == "", lines
    assert rechecked.runtime_requirements == ["tomli-w"]
    found = rechecked.null_setup
    assert found is not None, log[-3000:]
    assert (found.passed, found.pass_set, found.trivial) == (1, 2, False)
    assert "recheck_s" in rechecked.timings
    assert "left to the setup" in log and "No module named 'tomli_w'" in log, log[-3000:]
    # The proof by the current probe: ``pip install .`` copied the package into site-packages,
    # and its PEP 610 record says it was installed from the checkout.
    proof = rechecked.checkout_proof
    assert proof is not None and proof.verdict == "checkout", proof
    assert proof.probe_sha256 == probe_digest() and rechecked.verified
    (origin_of,) = proof.modules
    assert origin_of.under_checkout is False and origin_of.from_checkout
    assert origin_of.direct_url == "file:///data/project"
