"""``pytest-enconda verify --recheck``: the null-setup check and the checkout proof made again on
records verified before either existed in its current form, or before the graded test step or the
probe last changed.

A full ``verify`` of one repository takes minutes to half an hour (the reference's setup and two
test runs). The recheck needs the task image of the checkout and, per part out of date:

- the null setup: one run of the graded test step after an empty setup script
  (``attempt.null_setup``);
- the checkout proof: the record's own ``reference_setup`` run as verify runs a reference
  (``attempt.run_setup``: the same shell, budget and, in the script, the package cutoff of a
  ``recipe:as-of`` reference), then the current probe (``checkout.checkout_proof``), and no test
  run.

The PASS set, the test command and the attempts stay as they were. A proof that refuses the
reference (``release``: an installed release imported instead of the checkout; ``no-packages``:
nothing proves it) or a reference setup that now fails makes the record ``unverified`` with a
reason naming what was found; the rest of the record stays for audit. ``not-importable`` is
kept, as verify keeps it: the tests import the checkout from the folder they run in.

A record whose null setup was measured by this harness version with the graded step as it is now
(its digest), and whose proof was made by the probe as it is now (its digest), is skipped unless
``--redo``; one current in a part only has the other part made: an interrupted recheck resumes
where it stopped.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..cases.models import RepoSource
from ..cases.sidecar import RepoVerification, Sidecar, read_sidecar
from ..errors import EncondaError, InputError
from .attempt import null_setup, run_setup, setup_budget, step_digest
from .checkout import checkout_proof, judge_checkout, probe_digest
from .context import Progress, VerifyContext, VerifyOptions
from .ladder import checkout_repository, selected
from .runner import run_repositories

if TYPE_CHECKING:
    from ..backends.base import Backend
    from ..repo.checkout import CheckoutProof

__all__ = [
    "RECHECK",
    "RECHECK_PROOF",
    "RECHECK_SETUP",
    "fresh",
    "null_setup_current",
    "proof_current",
    "recheck_dataset",
    "recheck_repository",
    "recheck_summary",
]

# The reasons a recheck gives a record it makes unverified begin so; the summary counts them.
RECHECK = "recheck: "
RECHECK_PROOF = f"{RECHECK}checkout proof "
RECHECK_SETUP = f"{RECHECK}the reference setup now fails"
SETUP_FAILS = "setup fails"


def null_setup_current(record: RepoVerification) -> bool:
    """Whether the record's null setup was measured by this harness version with the graded
    test step the record now gives."""
    found = record.null_setup
    return found is not None and found.step_sha256 == step_digest(record)


def proof_current(record: RepoVerification) -> bool:
    """Whether the record's checkout proof was made by the probe as it is now."""
    proof = record.checkout_proof
    return proof is not None and proof.probe_sha256 == probe_digest()


def fresh(record: RepoVerification) -> bool:
    """Whether both parts of the recheck are current: nothing to do without ``--redo``."""
    return null_setup_current(record) and proof_current(record)


def _candidate(record: RepoVerification | None) -> bool:
    """A record verify verified: those that load as unverified only because an older proof
    refuses them (``no-packages`` made before verify refused it) too, for the current probe to
    prove or refuse."""
    if record is None or record.status != "verified" or not record.pass_set:
        return False
    proof = record.checkout_proof
    return record.verified or (proof is not None and proof.refuses and not record.below_share)


def _refused_by_another_probe(record: RepoVerification) -> bool:
    """A record an earlier recheck made unverified by its proof, made by a probe since changed:
    the current probe looks again (a probe that could not name a distribution on Python 3.9
    called checkouts that ``pip install .`` copied into site-packages releases)."""
    return (
        record.status == "unverified"
        and bool(record.pass_set)
        and record.reason.startswith(RECHECK_PROOF)
        and not proof_current(record)
    )


def recheck_dataset(
    options: VerifyOptions, progress: Progress = print, *, backend: Backend | None = None
) -> Sidecar:
    """The recheck of every verified record of ``options.out`` that ``--repo`` names and that
    is not ``fresh`` (all of them with ``redo``); the sidecar is rewritten after each."""
    if not options.out.is_file():
        raise InputError(f"--recheck: {options.out}: no sidecar to recheck (verify writes it)")
    sidecar = read_sidecar(options.out)
    chosen = [sidecar.record(name, revision) for name, revision in selected(options)]
    verified = [record for record in chosen if record is not None and _candidate(record)]
    stale = [record for record in verified if options.redo or not fresh(record)]
    again = [r for r in chosen if r is not None and _refused_by_another_probe(r)]
    todo = stale + again
    proofs = sum(1 for record in todo if options.redo or not proof_current(record))
    nulls = sum(1 for record in todo if options.redo or not null_setup_current(record))
    progress(
        f"verify --recheck: {len(stale)} of {len(verified)} verified repositories to recheck "
        f"({len(verified) - len(stale)} already current; {len(again)} a former "
        f"probe refused, to prove again): {proofs} checkout proofs to make with "
        f"probe {probe_digest()[:12]}, {nulls} null setups to measure; writing {options.out}"
    )
    records = {record.repository: record for record in todo}
    failures: dict[str, str] = {}
    made: set[str] = set()
    # Of the proofs made: the verdicts of those that keep their record verified, and why the
    # others' records are not.
    kept: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    # Of those a former probe refused: verified now, by verdict, or refused again.
    restored: Counter[str] = Counter()
    refused: Counter[str] = Counter()

    def work(ctx: VerifyContext, name: str, _revision: str) -> RepoVerification:
        outcome = _recheck(ctx, records[name])
        record = outcome.record
        with ctx.lock:
            if outcome.failure:
                failures[name] = outcome.failure
            if outcome.proved:
                made.add(name)
                was_verified = records[name].status == "verified"
                if record.status != "verified":
                    (dropped if was_verified else refused)[_dropped_as(record)] += 1
                elif record.checkout_proof is not None:
                    (kept if was_verified else restored)[record.checkout_proof.verdict] += 1
        return record

    def said(record: RepoVerification) -> str:
        failure = failures.get(record.repository)
        proof = record.checkout_proof
        if failure and proof is not None and record.repository in made:
            return (
                f"{record.repository}: checkout proof '{proof.verdict}': {proof.detail}; "
                f"the null setup not measured: {failure}"
            )
        if failure:
            return f"{record.repository}: not rechecked: {failure}"
        if record.status != "verified":
            return f"{record.repository}: unverified: {record.reason}"
        parts = [] if record.verified else [f"unverified: {record.why_unverified}"]
        old = records[record.repository]
        if proof is not None and record.repository in made:
            parts.append(f"checkout proof '{proof.verdict}': {proof.detail}")
        found = record.null_setup
        if found is not None and found != old.null_setup:
            word = "trivial" if found.trivial else "not trivial"
            parts.append(
                f"{word}: an empty setup passes {found.passed} of {found.pass_set} PASS-set "
                f"tests ({found.share:.0%})"
            )
        return f"{record.repository}: " + ("; ".join(parts) or "nothing to do")

    pairs = [(record.repository, record.revision) for record in todo]
    done = run_repositories(options, progress, sidecar, pairs, work, said, backend)
    former = (
        f"; of those a former probe refused, verified now: {restored.total()} "
        f"({_counted(restored)}), refused again: {refused.total()} ({_counted(refused)})"
        if again
        else ""
    )
    progress(
        f"verify --recheck: {len(made)} checkout proofs made: {kept.total()} keep their record "
        f"verified ({_counted(kept)}); verified -> unverified: {dropped.total()} "
        f"({_counted(dropped)}){former}"
    )
    return done


def recheck_repository(ctx: VerifyContext, old: RepoVerification) -> tuple[RepoVerification, str]:
    """``old`` with its out-of-date parts (all with ``redo``) made again on a fresh task image of
    its checkout, and why it could not be ("" when it was). A proof finished before a failure
    stays; a record in which nothing was finished is returned as it was."""
    outcome = _recheck(ctx, old)
    return outcome.record, outcome.failure


@dataclass
class _Outcome:
    record: RepoVerification
    failure: str = ""
    # The proof part was done: a new proof, or the reference setup found failing.
    proved: bool = False


@dataclass
class _Proved:
    """What the proof part found, kept apart from the record so that a failure after it (the
    null setup's) does not lose it."""

    done: bool = False
    proof: CheckoutProof | None = None
    # Why the record is no longer verified ("" while it is).
    reason: str = ""
    seconds: float | None = None

    def apply(self, record: RepoVerification) -> None:
        if not self.done:
            return
        if self.proof is not None:
            record.checkout_proof = self.proof.model_copy(deep=True)
        if self.reason:
            record.status, record.reason = "unverified", self.reason
        elif self.proof is not None and record.reason.startswith(RECHECK_PROOF):
            # The current probe proves what an earlier one refused.
            record.status, record.reason = "verified", ""
        if self.seconds is not None:
            record.timings["recheck_setup_s"] = self.seconds


def _recheck(ctx: VerifyContext, old: RepoVerification) -> _Outcome:
    record = old.model_copy(deep=True)
    started = time.monotonic()
    logs = ctx.options.logs / record.repository.replace("/", "__")
    logs.mkdir(parents=True, exist_ok=True)
    proved = _Proved()
    try:
        _measure(ctx, record, proved, logs)
    except EncondaError as exc:
        return _partial(old, proved, str(exc))
    except Exception as exc:  # one repository's surprise must not end the others' recheck
        return _partial(old, proved, f"harness failure: {type(exc).__name__}: {exc}")
    # Said in the record: its proof and null setup came later than its reference, which was
    # not made again.
    record.timings["recheck_s"] = round(time.monotonic() - started, 1)
    return _Outcome(record, "", proved.done)


def _partial(old: RepoVerification, proved: _Proved, failure: str) -> _Outcome:
    """``old`` with what the proof part found where it was done, and the failure after it."""
    if not proved.done:
        return _Outcome(old, failure)
    record = old.model_copy(deep=True)
    proved.apply(record)
    return _Outcome(record, failure, True)


def _measure(ctx: VerifyContext, record: RepoVerification, proved: _Proved, logs: Path) -> None:
    from ..repo.facts import read_repository
    from ..repo.runtime_requirements import runtime_names, runtime_requirements
    from ..sandbox.git_deps import mirrored_dependencies

    redo = ctx.options.redo
    prove = redo or not proof_current(record)
    measure = redo or not null_setup_current(record)
    source = RepoSource(
        kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
    )
    with tempfile.TemporaryDirectory(prefix="enconda-recheck-") as tmp:
        repo_dir = Path(tmp) / "repo"
        # The checkout writes what it found (submodules, absent files, the commit's date) on the
        # record it is given: a scratch copy, so the verified record keeps its own.
        scratch = record.model_copy(deep=True)
        digest = checkout_repository(ctx, scratch, source, Path(tmp), repo_dir)
        if digest is None:
            raise EncondaError(scratch.reason)
        facts = read_repository(repo_dir)
        packages, name = facts.packages, facts.name
        if prove and not packages and not name:
            # Nothing to look for: no setup could be proven to use the checkout.
            _judged(record, proved, judge_checkout([], None))
            return
        if measure and record.runtime_requirements is None:
            # Made before verify read them: the graded step of such a record installs every
            # test requirement, the project's own runtime needs too, unless the record names
            # them. Read from the checkout as verify reads them now.
            python = ctx.recipe(record.base_image).python
            record.runtime_requirements = runtime_names(runtime_requirements(repo_dir), python)
        git_deps = mirrored_dependencies(repo_dir, ctx.options.repo_mirror)
        ctx.progress(f"{record.repository}: building its image")
        image = ctx.task_image(record, repo_dir, tree_hash=digest, git_deps=git_deps)
    if prove:
        _prove(ctx, record, proved, image, logs, packages, name)
    if measure and record.status == "verified":
        null_setup(ctx, record, image, logs)


def _prove(
    ctx: VerifyContext,
    record: RepoVerification,
    proved: _Proved,
    image: str,
    logs: Path,
    packages: list[str],
    distribution: str,
) -> None:
    """The record's reference setup in a box of ``image`` as verify ran it (its label's budget;
    an ``as-of`` script sets its own cutoff), then the current probe: the proof on ``record``,
    which becomes unverified where the setup now fails or the proof refuses it. A probe that did
    not run (``unmeasured``) is no finding: the record stays as it was, to be rechecked again."""
    label = record.reference_source or "recipe"
    started = time.monotonic()
    with ctx.box(record, image, "verify-recheck") as box:
        budget = setup_budget(ctx.options, label)
        log = logs / "recheck-setup.log"
        why = run_setup(
            ctx, record, box, f"recheck of {label}", record.reference_setup, log, budget
        )
        proof = None
        if not why:
            proof = checkout_proof(box, packages, logs / "recheck-checkout.json", distribution)
    if proof is not None and proof.verdict == "unmeasured":
        raise EncondaError(f"the checkout probe did not run: {proof.detail}")
    proved.seconds = round(time.monotonic() - started, 1)
    if proof is None:
        proved.done, proved.reason = True, f"{RECHECK_SETUP} ({label}): {why}"
        proved.apply(record)
        return
    _judged(record, proved, proof)


def _judged(record: RepoVerification, proved: _Proved, proof: CheckoutProof) -> None:
    """``proof``, made by the current probe, on ``record``; unverified where it refuses."""
    # The verdict of the probe as it is now, or (nothing to look for) without it.
    proved.done, proved.proof = True, proof.model_copy(update={"probe_sha256": probe_digest()})
    if proof.refuses:
        proved.reason = f"{RECHECK_PROOF}'{proof.verdict}' (current probe): {proof.detail}"
    proved.apply(record)


def _dropped_as(record: RepoVerification) -> str:
    """What made a record the recheck made unverified so: its proof's verdict, or the setup."""
    if record.reason.startswith(RECHECK_PROOF) and record.checkout_proof is not None:
        return record.checkout_proof.verdict
    return SETUP_FAILS


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"{key} {count}" for key, count in sorted(counts.items())) or "none"


def recheck_summary(sidecar: Sidecar) -> str:
    """One line: the checkout proofs the current probe made and their verdicts, the records the
    recheck made unverified and why (by verdict, or the setup), then how many verified records
    have a null setup, how many of those are trivial, and how their shares of the PASS set spread
    (none, under half, half or more, all)."""
    records = list(sidecar.repositories.values())
    verified = [record for record in records if record.verified]
    current = Counter(
        record.checkout_proof.verdict
        for record in records
        if record.checkout_proof is not None and proof_current(record)
    )
    dropped = Counter(
        _dropped_as(record)
        for record in records
        if record.status == "unverified" and record.reason.startswith(RECHECK)
    )
    measured = [record.null_setup for record in verified if record.null_setup is not None]
    spread = (
        f"none {sum(1 for found in measured if found.passed == 0)}, "
        f"under half {sum(1 for found in measured if 0 < 2 * found.passed < found.pass_set)}, "
        "half or more "
        f"{sum(1 for f in measured if f.pass_set <= 2 * f.passed and not f.trivial and f.passed)}, "
        f"all {sum(1 for found in measured if found.trivial)}"
    )
    return (
        f"verify --recheck: {current.total()} checkout proofs by the current probe "
        f"({_counted(current)}); made unverified by the recheck: {dropped.total()} "
        f"({_counted(dropped)}); {len(measured)} of {len(verified)} verified repositories have a "
        f"null setup; {sum(1 for found in measured if found.trivial)} trivial (an empty setup "
        f"passes the whole PASS set); share of the PASS set an empty setup passes: {spread}"
    )
