"""``verify --recheck``'s checkout proof (issue 47 item 3): a record whose proof the current probe
refuses, or whose reference setup now fails, becomes unverified with what was found, its PASS set
and attempts kept for audit; ``no-packages`` records are proven another way or unverified; a probe
that did not run changes nothing; a proof made before a failure stays. On the fake backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_verify_recheck import (
    PASS_SET,
    RELEASE,
    _recheck,
    _sidecar,
    _verified,
    _world,
    probe_report,
)

from pytest_enconda.cases.sidecar import NullSetup, RepoVerification, Sidecar, read_sidecar
from pytest_enconda.repo.checkout import CheckoutProof
from pytest_enconda.verify.checkout import NO_PACKAGES, probe_digest
from pytest_enconda.verify.recheck import (
    RECHECK_PROOF,
    RECHECK_SETUP,
    proof_current,
    recheck_summary,
)


def test_a_proof_the_current_probe_refuses_makes_the_record_unverified(tmp_path: Path) -> None:
    """progressbar's case: the reference imports an installed release; the old probe, run from
    the project folder, found the checkout's folder first and said ``checkout``."""
    data, mirror, commit = _world(tmp_path)
    old = _verified(commit)
    old.checkout_proof = CheckoutProof(verdict="checkout", detail="calc imported from the checkout")
    out = _sidecar(tmp_path, old)
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET, probe=RELEASE)
    record = read_sidecar(out).repositories["o/calc"]
    assert record.status == "unverified" and not record.verified
    assert record.reason.startswith(f"{RECHECK_PROOF}'release' (current probe): calc is imported")
    assert "calc-release" in record.reason
    assert record.why_unverified == record.reason
    proof = record.checkout_proof
    assert proof is not None and proof.verdict == "release"
    assert proof.probe_sha256 == probe_digest()
    # Kept for audit: what the reference was and what it passed.
    assert (record.pass_set, record.attempts) == (old.pass_set, old.attempts)
    assert record.reference_setup == old.reference_setup
    # An unverified record grades nothing: its null setup is not measured.
    assert record.null_setup is None and tests.ran("--junitxml") == 0
    assert f"o/calc: unverified: {record.reason}" in lines
    assert lines[-1].endswith("verified -> unverified: 1 (release 1)")
    summary = recheck_summary(read_sidecar(out))
    assert "1 checkout proofs by the current probe (release 1)" in summary
    assert "made unverified by the recheck: 1 (release 1)" in summary
    # Not rechecked again: it is no longer verified.
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert tests.commands == [] and lines[0].startswith("verify --recheck: 0 of 0")


def test_a_record_a_former_probe_refused_is_proven_again_by_the_current_one(
    tmp_path: Path,
) -> None:
    """compserv/hknweb on Python 3.9: ``pip install .`` copied the checkout into site-packages
    and a probe that could not name its distribution there said ``release``. A changed probe
    looks again; its proof makes the record verified, and its null setup is measured."""
    data, mirror, commit = _world(tmp_path)
    out = _sidecar(tmp_path, _verified(commit))
    _recheck(tmp_path, data, mirror, out, PASS_SET, probe=RELEASE)

    def made_by_a_former_probe() -> None:
        refused = read_sidecar(out)
        record = refused.repositories["o/calc"]
        assert record.status == "unverified" and record.checkout_proof is not None
        record.checkout_proof.probe_sha256 = "0" * 64
        out.write_text(refused.model_dump_json())

    made_by_a_former_probe()
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET, probe=RELEASE)
    assert read_sidecar(out).repositories["o/calc"].status == "unverified"
    assert tests.ran("--junitxml") == 0
    assert lines[-1].endswith("verified now: 0 (none), refused again: 1 (release 1)")
    made_by_a_former_probe()
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert lines[0].startswith(
        "verify --recheck: 0 of 0 verified repositories to recheck (0 already current; "
        "1 a former probe refused, to prove again)"
    )
    record = read_sidecar(out).repositories["o/calc"]
    assert record.status == "verified" and record.reason == "" and record.verified
    proof = record.checkout_proof
    assert proof is not None and proof.verdict == "checkout" and proof_current(record)
    assert record.null_setup is not None and tests.ran("--junitxml") == 1
    assert lines[-1].endswith(
        "verified -> unverified: 0 (none); of those a former probe refused, verified now: "
        "1 (checkout 1), refused again: 0 (none)"
    )
    # Once the current probe has spoken, the record is current: nothing to do.
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert tests.commands == [] and lines[0].startswith("verify --recheck: 0 of 1")


def test_a_reference_setup_that_now_fails_makes_the_record_unverified(tmp_path: Path) -> None:
    """The setup runs as verify ran it: the record's own script (an as-of one sets its cutoff
    itself), within its strategy's budget (the agent's attempt is bounded apart)."""
    data, mirror, commit = _world(tmp_path)
    old = _verified(commit)
    old.reference_source = "agent:readme"
    old.reference_setup = "export PIP_UPLOADED_PRIOR_TO=2020-01-01T00:00:00Z\npip install .\n"
    out = _sidecar(tmp_path, old)
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET, setup_exit=1)
    assert tests.setups == [(old.reference_setup, 900)]
    assert tests.ran("checkout_proof.py") == 0 and tests.ran("--junitxml") == 0
    record = read_sidecar(out).repositories["o/calc"]
    assert record.status == "unverified"
    assert record.reason == (
        f"{RECHECK_SETUP} (agent:readme): exited with 1: "
        "ERROR: No matching distribution found for calc-core==9"
    )
    assert record.checkout_proof == old.checkout_proof and record.pass_set == old.pass_set
    assert "recheck_setup_s" in record.timings
    assert lines[-1].endswith("verified -> unverified: 1 (setup fails 1)")
    assert "made unverified by the recheck: 1 (setup fails 1)" in recheck_summary(read_sidecar(out))


def _no_packages(commit: str) -> RepoVerification:
    """A record verified before verify refused ``no-packages``: it loads as unverified."""
    record = _verified(commit)
    record.checkout_proof = CheckoutProof(verdict="no-packages", detail="no top-level package")
    assert not record.verified
    return record


def test_a_no_packages_record_the_current_probe_proves_stays_verified(tmp_path: Path) -> None:
    """censys: a Poetry package without ``__init__.py``, found now, imported from the checkout;
    here the project's distribution installed from the checkout proves it."""
    data, mirror, commit = _world(tmp_path)
    out = _sidecar(tmp_path, _no_packages(commit))
    dist = {"name": "calc", "direct_url": "file:///data/project", "from_checkout": True}
    report = probe_report(distribution={**dist, "error": None})
    _, tests, lines = _recheck(tmp_path, data, mirror, out, [], probe=report)
    record = read_sidecar(out).repositories["o/calc"]
    proof = record.checkout_proof
    assert proof is not None and proof.verdict == "checkout", proof
    assert record.verified and record.status == "verified"
    assert record.null_setup is not None and tests.ran("--junitxml") == 1
    assert lines[0].startswith("verify --recheck: 1 of 1 verified repositories to recheck")
    assert "keep their record verified (checkout 1)" in lines[-1]


def test_a_no_packages_record_with_nothing_to_look_for_is_unverified_without_a_box(
    tmp_path: Path,
) -> None:
    files = {"run.sh": "echo hi\n", "tests/test_run.py": "def test_run():\n    pass\n"}
    data, mirror, commit = _world(tmp_path, files)
    out = _sidecar(tmp_path, _no_packages(commit))
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert tests.commands == []
    record = read_sidecar(out).repositories["o/calc"]
    assert record.status == "unverified"
    assert record.reason == f"{RECHECK_PROOF}'no-packages' (current probe): {NO_PACKAGES}"
    assert proof_current(record)
    assert "verified -> unverified: 1 (no-packages 1)" in lines[-1]


def test_a_probe_that_did_not_run_changes_nothing(tmp_path: Path) -> None:
    data, mirror, commit = _world(tmp_path)
    old = _verified(commit)
    out = _sidecar(tmp_path, old)
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET, probe="Traceback")
    assert read_sidecar(out).repositories["o/calc"] == old
    assert tests.ran("checkout_proof.py") == 1 and tests.ran("--junitxml") == 0
    said = next(line for line in lines if line.startswith("o/calc: not rechecked: "))
    assert "the checkout probe did not run: the probe did not run" in said
    assert lines[-1].startswith("verify --recheck: 0 checkout proofs made")


def test_a_proof_made_before_a_failure_stays_and_the_next_recheck_does_the_rest(
    tmp_path: Path,
) -> None:
    """Resumable: the null setup's box fails after the proof was made; the proof is written,
    and the next recheck measures the null setup alone."""
    data, mirror, commit = _world(tmp_path)
    old = _verified(commit)
    out = _sidecar(tmp_path, old)
    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET, step_error=True)
    record = read_sidecar(out).repositories["o/calc"]
    said = next(line for line in lines if line.startswith("o/calc: checkout proof 'checkout'"))
    assert said.endswith("; the null setup not measured: the engine went away")
    assert proof_current(record) and record.verified
    assert record.null_setup is None and record.runtime_requirements is None
    assert "recheck_s" not in record.timings and "recheck_setup_s" in record.timings
    assert "1 checkout proofs made" in lines[-1]

    _, tests, lines = _recheck(tmp_path, data, mirror, out, PASS_SET)
    assert "0 checkout proofs to make" in lines[0] and "1 null setups to measure" in lines[0]
    assert (tests.ran("setup.sh"), tests.ran("--junitxml")) == (0, 1)
    done = read_sidecar(out).repositories["o/calc"]
    assert done.null_setup is not None and done.null_setup.trivial
    assert done.checkout_proof == record.checkout_proof


def test_the_summary_counts_current_proofs_and_records_made_unverified() -> None:
    digest = probe_digest()

    def record(name: str, verdict: str, *, current: bool, reason: str = "") -> RepoVerification:
        proof = CheckoutProof.model_validate(
            {"verdict": verdict, "probe_sha256": digest if current else None}
        )
        status = "unverified" if reason else "verified"
        return RepoVerification(
            repository=name,
            revision="r",
            status=status,
            reason=reason,
            pass_set=["t::0"],
            checkout_proof=proof,
            null_setup=NullSetup(passed=0, pass_set=1, share=0.0, trivial=False),
        )

    records = [
        record("a/old", "checkout", current=False),
        record("a/new", "checkout", current=True),
        record("a/kept", "not-importable", current=True),
        record("a/rel", "release", current=True, reason=f"{RECHECK_PROOF}'release': x"),
        record("a/set", "checkout", current=False, reason=f"{RECHECK_SETUP} (recipe): y"),
        record("a/other", "checkout", current=False, reason="no test passed"),
    ]
    line = recheck_summary(Sidecar(repositories={r.repository: r for r in records}))
    assert (
        "3 checkout proofs by the current probe (checkout 1, not-importable 1, release 1)" in line
    )
    assert "made unverified by the recheck: 2 (release 1, setup fails 1)" in line
    assert "3 of 3 verified repositories have a null setup; 0 trivial" in line


@pytest.mark.slow
@pytest.mark.docker
def test_a_shadowed_proof_in_real_boxes(tmp_path: Path, sandbox, base_image) -> None:
    """On the real engine: the reference puts a package named like the checkout's into
    site-packages (as ``pip install progressbar2`` did), and the record carries the ``checkout``
    proof of the old probe, which ran from the project folder and found ``calc/`` there first.
    The current probe, from a folder of its own, finds the installed one: the record becomes
    unverified, and no test step runs."""
    from verifyfake import fake_context

    from pytest_enconda.backends.docker import DockerBackend
    from pytest_enconda.verify.recheck import recheck_repository

    files = {"pyproject.toml": '[project]\nname = "calc"\nversion = "1"\n'}
    files["calc/__init__.py"] = "CHECKOUT = True\n"
    data, mirror, commit = _world(tmp_path, files)
    del data
    old = _verified(commit)
    old.checkout_proof = CheckoutProof(verdict="checkout", detail="calc imported from the checkout")
    old.reference_setup = (
        "site=$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\n"
        'mkdir -p "$site/calc" && echo "RELEASE = True" > "$site/calc/__init__.py"\n'
    )
    lines: list[str] = []
    backend = DockerBackend(sandbox=sandbox)
    ctx = fake_context(tmp_path, mirror, lines, backend=backend, logs=tmp_path / "logs")
    rechecked, failure = recheck_repository(ctx, old)
    logs = tmp_path / "logs" / "o__calc"
    assert failure == "", lines
    proof = rechecked.checkout_proof
    report = (logs / "recheck-checkout.json").read_text()
    assert proof is not None and proof.verdict == "release", report
    (found,) = proof.modules
    assert found.file is not None and not found.file.startswith("/data/project"), report
    assert found.under_checkout is False and not found.from_checkout
    assert rechecked.status == "unverified" and rechecked.why_unverified == rechecked.reason
    assert rechecked.reason.startswith(f"{RECHECK_PROOF}'release' (current probe): calc is ")
    assert rechecked.null_setup is None and not (logs / "null-setup-test.log").exists()
    assert rechecked.pass_set == old.pass_set
