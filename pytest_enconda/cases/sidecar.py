"""The verification sidecar: execution ground truth of an imported dataset, one record a repository.

``pytest-enconda verify`` writes it once (``verify.sidecar_writer``); ``--cases`` reads it
(beside the dataset, or the path given with ``--verification``), so every later run grades Pass@1
against the same PASS sets. It holds data only: commands, scripts, test ids and timings, never
repository code.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import textio
from ..repo.checkout import CheckoutProof
from ..repo.ci_services import CiService

# A verification sidecar lists repositories and tests: far beyond this is not one.
MAX_SIDECAR_BYTES = 64 << 20

__all__ = [
    "SIDECAR_NAME",
    "RepoVerification",
    "Sidecar",
    "SidecarError",
    "TestRun",
    "find_sidecar",
    "read_sidecar",
]

SIDECAR_NAME = "enconda-verification.json"
# A reference passing 7 of 56 tests describes a broken environment, not the repository: at least
# half of the tests that ran (skips left out) must pass in both runs. Records made before the
# share was recorded are held to it too, from their first run's counts.
MIN_PASS_SHARE = 0.5
FORMAT = 1
# A snapshot lacking thousands of files (test data, images) must not bloat the sidecar: the
# count is kept whole, the paths up to this many.
ABSENT_FILES_KEPT = 200


class SidecarError(ValueError):
    """A sidecar file that cannot be used; the message names the file and the field."""


class NullSetup(BaseModel):
    """The graded test step after an empty setup script: what the task image passes alone."""

    model_config = ConfigDict(extra="forbid")

    passed: int = Field(ge=0, description="PASS-set tests passed")
    pass_set: int = Field(ge=0, description="the PASS set's size")
    share: float = Field(ge=0, le=1)
    trivial: bool = Field(description="the empty setup reached the whole PASS set")
    step_sha256: str = Field(default="", description="the harness and graded step it ran")


class TestRun(BaseModel):
    """One run of the test command in a fresh container, counted from its JUnit XML report."""

    __test__ = False
    model_config = ConfigDict(extra="forbid")

    exit_code: int | None
    timed_out: bool = False
    duration: float = 0.0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    report: bool = Field(default=True, description="whether the runner wrote its JUnit report")


def timing_tag(label: str) -> str:
    """A strategy's label as its timings' keys spell it (``agent:readme`` → ``agent-readme``)."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower())


# A UTC time to the second as verify writes it (2019-05-01T10:00:00Z), or empty.
_UTC_SECOND = r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)?$"


class RepoVerification(BaseModel):
    """The reference of one repository at one revision."""

    model_config = ConfigDict(extra="forbid")

    repository: str = Field(description="owner/name")
    revision: str
    status: Literal["verified", "unverified"]
    reason: str = Field(default="", description="why unverified (empty when verified)")
    base_image: str = Field(
        default="bookworm-py3.11",
        description="the base image recipe the reference was built on, chosen from the "
        "repository's declared Python range; the repository's cases run on it too (records made "
        "before the choice were all built on bookworm-py3.11)",
    )
    test_command: str = ""
    test_command_source: str = Field(default="", description="ci, tox, nox, pytest-config, ...")
    test_command_detail: str = Field(default="", description="the file (and line) it came from")
    test_tools: list[str] = Field(
        default_factory=list,
        description="pytest and its plugins, installed by the harness before the test command",
    )
    test_requirements: list[str] = Field(
        default_factory=list,
        description="the declared test dependencies (tox deps, test extras and groups, requirement "
        "files, nox, CI) but runtime ones, installed by the harness before the test command",
    )
    runtime_requirements: list[str] | None = Field(
        default=None,
        description="the project's runtime requirements (PEP 503 names), which the test step "
        "never installs (None: the record predates them; only the checkout's own are left out)",
    )
    test_requirement_sources: dict[str, str] = Field(
        default_factory=dict, description="where each test requirement is declared"
    )
    absent_files: list[str] = Field(
        default_factory=list,
        description="files the snapshot lacked (their contents were not in its object store; the "
        f"first {ABSENT_FILES_KEPT}, sorted); the reference was made and its PASS set measured "
        "without them",
    )
    absent_count: int = Field(
        default=0, ge=0, description="how many files the snapshot lacked, all of them counted"
    )
    git_dependencies: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="GitHub dependencies served from the repository mirror (their URLs) in the "
        "reference's boxes; a graded run needs the same mirror for them",
    )
    services: list[CiService] = Field(
        default_factory=list,
        max_length=10,
        description="services CI runs beside the tests (GitHub Actions `services:`), started in "
        "each test step from Debian's packages, in grading too",
    )
    unknown_services: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="CI service images no known kind matched: not started",
    )
    submodules: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="the checkout's git submodules: which came from the repository mirror (at "
        "the commit the tree records) and which were left empty; a graded run needs the same "
        "mirror for them",
    )
    reference_setup: str = Field(default="", description="the setup script that built it")
    checkout_proof: CheckoutProof | None = Field(
        default=None,
        description="where the reference imports the project's packages from (a release "
        "installed from an index is refused)",
    )
    pass_share: float | None = Field(
        default=None, description="PASS set over the tests that ran (skips left out), run 1"
    )
    min_pass_share: float | None = Field(
        default=None, description="the share it was held to (None: made before there was one)"
    )
    undeclared_programs: list[str] = Field(
        default_factory=list,
        description="programs the tests tried to run and the reference lacked (system packages "
        "nothing declares)",
    )
    reference_source: str = Field(
        default="",
        description="which strategy wrote it: 'agent:<name>', 'recipe' or 'recipe:as-of', with "
        "'+programs' when retried with the programs its tests lacked and '@<base>' when retried on "
        "an older base",
    )
    revision_date: str = Field(
        default="",
        pattern=_UTC_SECOND,
        description="the revision's commit time (ISO 8601, UTC), where known",
    )
    packages_before: str = Field(
        default="",
        # Exported to pip in every test step of the case's grading: a malformed time would fail
        # each install there, so the file is refused instead.
        pattern=_UTC_SECOND,
        description="pip considered only packages uploaded before this time (the revision's "
        "commit time) in the reference's setup and in the test step's installs: set where only "
        "the dependencies of its day made the tests pass ('recipe:as-of'); empty: today's",
    )
    attempts: list[str] = Field(
        default_factory=list, description="one line per strategy tried: what happened"
    )
    pass_set: list[str] = Field(
        default_factory=list, description="test ids (classname::name) passed in both runs"
    )
    runs: list[TestRun] = Field(default_factory=list)
    null_setup: NullSetup | None = Field(
        default=None, description="the graded step after an empty setup (None: not measured)"
    )
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per phase")
    harness_version: str = ""
    verified_at: str = ""

    def record_absent(self, paths: list[str]) -> None:
        """Keep the count of the files the checkout went without, and the first of their paths."""
        self.absent_count = len(paths)
        self.absent_files = sorted(paths)[:ABSENT_FILES_KEPT]

    @property
    def share(self) -> float | None:
        """``pass_share``, or for older records the PASS set over their first run's counts."""
        if self.pass_share is not None:
            return self.pass_share
        if not self.runs:
            return None
        first = self.runs[0]
        ran = first.passed + first.failed + first.errors
        return len(self.pass_set) / ran if ran else None

    @property
    def below_share(self) -> bool:
        threshold = MIN_PASS_SHARE if self.min_pass_share is None else self.min_pass_share
        share = self.share
        return share is not None and share < threshold

    @property
    def reference_setup_seconds(self) -> float | None:
        """How long the reference's setup took (``timings["<source>_setup_s"]``), if recorded."""
        tag = timing_tag(self.reference_source)
        seconds = self.timings.get(f"{tag}_setup_s") if tag else None
        return seconds if seconds is not None and math.isfinite(seconds) else None

    @property
    def verified(self) -> bool:
        return not self.why_unverified

    @property
    def why_unverified(self) -> str:
        """Why the record grades nothing ("" when verified): its reason, a PASS share below the
        threshold, or a checkout proof that proves nothing (``no-packages`` in a record made
        before verify refused it)."""
        if self.status != "verified" or not self.pass_set:
            return self.reason or "empty PASS set"
        if self.below_share:
            threshold = MIN_PASS_SHARE if self.min_pass_share is None else self.min_pass_share
            share = f"{self.share:.0%} of the tests that ran"
            return f"the reference passes {share}, below {threshold:.0%}"
        proof = self.checkout_proof
        if proof is not None and proof.refuses:
            return f"checkout proof '{proof.verdict}' proves nothing: {proof.detail}"
        return ""


class Sidecar(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    dataset: str = Field(default="", description="the dataset it was made for (informative)")
    harness_version: str = ""
    repositories: dict[str, RepoVerification] = Field(
        default_factory=dict, description="keyed by owner/name"
    )

    def record(self, repository: str, revision: str) -> RepoVerification | None:
        """The record of ``repository``, only if it was made at ``revision``."""
        found = self.repositories.get(repository)
        if found is None or found.revision != revision:
            return None
        return found

    def counts(self) -> dict[str, int]:
        verified = sum(1 for record in self.repositories.values() if record.verified)
        total = len(self.repositories)
        return {"repositories": total, "verified": verified, "unverified": total - verified}


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors()[:3]
    )


def read_sidecar(path: Path) -> Sidecar:
    path = Path(path)
    try:
        # --verification may name a FIFO or /dev/zero: bounded, regular files only.
        text = textio.read_text(path, MAX_SIDECAR_BYTES)
    except (OSError, ValueError) as exc:
        raise SidecarError(f"{path}: cannot read: {exc}") from None
    try:
        data = textio.parse_json(text)  # deep nesting is a ValueError, not a RecursionError
    except ValueError as exc:
        raise SidecarError(f"{path}: {exc}") from None
    # A lone surrogate would fail the next write of the sidecar, after hours of verify.
    if "\\ud" in text.lower() and (char := textio.lone_surrogate(data)) is not None:
        raise SidecarError(f"{path}: a lone surrogate {char!r} is not text; expected UTF-8 strings")
    try:
        sidecar = Sidecar.model_validate(data)
    except ValidationError as exc:
        raise SidecarError(f"{path}: {_describe(exc)}") from None
    if sidecar.format != FORMAT:
        raise SidecarError(f"{path}: format: expected {FORMAT}, got {sidecar.format}")
    for key, record in sidecar.repositories.items():
        if key != record.repository:
            raise SidecarError(
                f"{path}: repositories.{key}.repository: expected {key!r}, got "
                f"{record.repository!r}"
            )
    return sidecar


def find_sidecar(dataset: Path) -> Path | None:
    """The sidecar beside a dataset: in its folder (or the one holding ``repo_info.jsonl``)."""
    dataset = Path(dataset)
    for folder in (dataset, *dataset.parents[:3]):
        candidate = folder / SIDECAR_NAME
        if candidate.is_file():
            return candidate
        if (folder / "repo_info.jsonl").is_file():
            break
    return None
