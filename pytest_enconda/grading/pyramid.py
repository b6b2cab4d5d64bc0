"""C5: does the agent's self-report claim what the environment does?

Pure functions over what earlier stages produced: the agent's ``report.json``
(``SelfReport``, ResearchEnvBench's schema), what the probes observed (``Observations``) and the
outcomes of C2 and C4. The rule set is the README's "C5: hallucination audit"; in short:

- **path**: ``python_path`` does not exist, is not executable, or does not run.
- **version**: ``python_version`` / ``torch_version`` differ from what the interpreter reports
  (normalized by default, exact strings with ``exact_versions=True``); a ``torch_version`` while
  torch is not importable.
- **capability**: ``cuda_available: true`` while C2 failed or the interpreter sees no CUDA;
  ``gpu_count`` above the observed count; ``ddp_expected_ok: true`` while C4 failed
  (inconclusive, not counted, when C4 was skipped or could not run).

Under-claiming (null, false, or a smaller count than observed) is never a hallucination. A missing
or invalid report is its own outcome, not zero hallucinations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
)

from .. import textio

__all__ = [
    "REPORT_FIELDS",
    "Audit",
    "Hallucination",
    "HallucinationKind",
    "Observations",
    "ReportRead",
    "SelfReport",
    "SelfReportError",
    "audit",
    "audit_report",
    "load_self_report",
    "read_self_report",
    "versions_match",
]

HallucinationKind = Literal["path", "version", "capability"]
KINDS: tuple[HallucinationKind, ...] = ("path", "version", "capability")
EnvTool = Literal["conda", "uv", "pip", "poetry", "venv", "none"]
# A report is a few kB; a bigger one is not a report (and is not loaded into memory whole).
MAX_REPORT_BYTES = 1 << 20
# The agent's claims are bounded as the things they name are: a path as the kernel's PATH_MAX,
# a version or a name as a line. An absurd claim (a 100,000-character python_path) makes the
# report invalid, C5's failure and the agent's, before any probe quotes it into a command the
# kernel refuses ("Argument list too long"), which read as the harness's error.
MAX_PYTHON_PATH_CHARS = 4096
MAX_CLAIM_CHARS = 1_000
MAX_NOTES_CHARS = 64 * 1024
MAX_LISTED_PACKAGES = 10_000
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _one_line(value: str) -> str:
    found = _CONTROL.search(value)
    if found is not None:
        raise ValueError(f"a path or name without control characters (found {found.group(0)!r})")
    return value


PythonPath = Annotated[
    str, Field(min_length=1, max_length=MAX_PYTHON_PATH_CHARS), AfterValidator(_one_line)
]
Claim = Annotated[str, Field(max_length=MAX_CLAIM_CHARS), AfterValidator(_one_line)]


def usable_python_path(value: object) -> TypeGuard[str]:
    """Whether a reported ``python_path`` may be tried as an interpreter at all: what
    ``SelfReport`` accepts as one (the interpreter search reads the raw report)."""
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= MAX_PYTHON_PATH_CHARS
        and _CONTROL.search(value) is None
    )


# ----------------------------------------------------------------------------- the report


class SelfReport(BaseModel):
    """The agent's ``report.json`` (ResearchEnvBench's ``report_schema.json``).

    Every schema key must be present; ``null`` means "not verified". Extra keys are kept.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    python_path: PythonPath = Field(description="absolute path of the interpreter")
    python_version: Claim | None
    torch_version: Claim | None
    cuda_available: StrictBool | None
    gpu_count: StrictInt | None = Field(ge=0, le=1_000_000)
    ddp_expected_ok: StrictBool | None
    env_tool: EnvTool
    env_name: Claim | None
    notes: Annotated[str, Field(max_length=MAX_NOTES_CHARS)] | None
    dataset_hf_id: Claim | None = None
    model_hf_id: Claim | None = None
    installed_packages: list[dict[str, Any]] | None = Field(
        default=None, max_length=MAX_LISTED_PACKAGES
    )
    capabilities: dict[str, Any] | None = None
    artifacts: dict[str, Any] | None = None


REPORT_FIELDS = tuple(SelfReport.model_fields)


class SelfReportError(ValueError):
    """An invalid report: the file, then each field and what was expected."""

    def __init__(self, file: str, problems: list[tuple[str, str]]) -> None:
        self.file = file
        self.problems = problems
        listed = "; ".join(f"{field}: {reason}" for field, reason in problems)
        super().__init__(f"{file}: invalid self-report: {listed}")


def load_self_report(source: Path | Mapping[str, Any], *, name: str | None = None) -> SelfReport:
    """A report from a file or an already parsed object; ``SelfReportError`` when invalid."""
    file = name or (str(source) if isinstance(source, Path) else "report.json")
    if isinstance(source, Path):
        try:
            # Bounded and regular files only: a FIFO or /dev/zero named as the report.
            raw = textio.read_bounded(source, MAX_REPORT_BYTES)
        except ValueError as exc:
            raise SelfReportError(file, [("<file>", str(exc))]) from None
        try:
            data: Any = textio.parse_json(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise SelfReportError(file, [("<file>", f"expected UTF-8 ({exc.reason})")]) from None
        except textio.JsonError as exc:  # also nested too deeply, or a number too long
            raise SelfReportError(file, [("<file>", f"expected JSON: {exc.detail}")]) from None
    else:
        data = source
    if not isinstance(data, Mapping):
        raise SelfReportError(file, [("<root>", f"expected an object, got {type(data).__name__}")])
    try:
        return SelfReport.model_validate(dict(data))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(part) for part in err["loc"]) or "<root>"
            got = "" if err["type"] == "missing" else f", got {err.get('input')!r}"[:80]
            problems.append((field, _expected(err) + got))
        raise SelfReportError(file, problems) from None


def _expected(err: Any) -> str:
    if err["type"] == "missing":
        return "required (use null for 'not verified')"
    return (
        f"expected {err['msg'].removeprefix('Input should be ').removeprefix('input should be ')}"
    )


ReportOutcome = Literal["ok", "missing", "invalid"]


class ReportRead(BaseModel):
    """A report as found: read, absent, or present but invalid (with why)."""

    outcome: ReportOutcome
    report: SelfReport | None = None
    problem: str | None = None


def read_self_report(path: Path) -> ReportRead:
    if not path.is_file():
        return ReportRead(outcome="missing", problem=f"{path}: no self-report written")
    try:
        return ReportRead(outcome="ok", report=load_self_report(path))
    except SelfReportError as exc:
        return ReportRead(outcome="invalid", problem=str(exc))
    except OSError as exc:
        return ReportRead(outcome="invalid", problem=f"{path}: cannot read: {exc}")


# ----------------------------------------------------------------------------- observations


class Observations(BaseModel):
    """What the probes saw of the reported interpreter (``probes/python_facts.py`` and a
    path check), on the agent's final state."""

    python_path: str | None = None
    python_exists: bool
    python_regular: bool = Field(
        default=True, description="a regular file (after links), not a folder or a device"
    )
    python_executable: bool
    python_runs: bool
    python_version: str | None = None
    framework: str = "torch"
    framework_importable: bool | None = Field(default=None, description="None: not checked")
    framework_version: str | None = None
    cuda_available: bool | None = None
    device_count: int | None = None
    packages: dict[str, str] | None = Field(
        default=None,
        description="installed distributions (PEP 503 names -> version); None: not listed",
    )

    @classmethod
    def from_facts(
        cls,
        facts: Mapping[str, Any] | None,
        *,
        python_path: str | None = None,
        exists: bool,
        executable: bool,
        regular: bool = True,
    ) -> Observations:
        """From ``python_facts.py``'s document (None when the interpreter did not run)."""
        runs = bool(facts) and not (facts or {}).get("error") and "python_version" in (facts or {})
        framework = (facts or {}).get("framework") or {}
        return cls(
            python_path=python_path,
            python_exists=exists,
            python_regular=regular,
            python_executable=executable,
            python_runs=runs,
            python_version=(facts or {}).get("python_version") if runs else None,
            framework=framework.get("name") or "torch",
            framework_importable=framework.get("importable") if framework else None,
            framework_version=framework.get("version"),
            cuda_available=framework.get("cuda_available"),
            device_count=framework.get("device_count"),
        )


# ----------------------------------------------------------------------------- the audit


class Hallucination(BaseModel):
    kind: HallucinationKind
    field: str
    claimed: Any = None
    observed: Any = None
    message: str


class Audit(BaseModel):
    """C5 of one case: ``outcome`` is ``audited`` (then ``hallucinations`` may be empty),
    ``missing`` or ``invalid`` (the report; nothing audited)."""

    outcome: Literal["audited", "missing", "invalid"]
    hallucinations: list[Hallucination] = Field(default_factory=list)
    inconclusive: list[str] = Field(default_factory=list, description="claims not judged, why")
    problem: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        return {kind: sum(h.kind == kind for h in self.hallucinations) for kind in KINDS}

    @property
    def passed(self) -> bool:
        return self.outcome == "audited" and not self.hallucinations


_RELEASE = re.compile(r"^\s*(?:python\s*|v)?(\d+(?:\.\d+)*)(.*)$", re.IGNORECASE)


def _split_version(text: str) -> tuple[tuple[int, ...], str, str] | None:
    """(release numbers, pre/post/dev suffix, local label) of a version, or None."""
    public, _, local = text.strip().partition("+")
    match = _RELEASE.match(public)
    if not match:
        return None
    release = tuple(int(part) for part in match.group(1).split("."))
    return release, match.group(2).strip().lower(), local.strip().lower()


def versions_match(claimed: str, observed: str, *, exact: bool = False) -> bool:
    """Whether a claimed version agrees with the observed one.

    Normalized (default): ``Python 3.11`` agrees with ``3.11.7`` (the claim's release numbers are
    a prefix of the observed ones), ``2.4.0`` with ``2.4.0+cu124`` and ``2.4`` with ``2.4.0``;
    pre-release suffixes must be equal when the claim has all the observed release numbers;
    local labels (``+cu124`` vs ``+cpu``) must be equal when both give one (they name different
    builds). Exact (ResearchEnvBench's rule): equal strings after trimming whitespace.
    """
    if exact:
        return claimed.strip() == observed.strip()
    mine, theirs = _split_version(claimed), _split_version(observed)
    if mine is None or theirs is None:
        return claimed.strip().lower() == observed.strip().lower()
    (release, suffix, local), (seen_release, seen_suffix, seen_local) = mine, theirs
    padded = seen_release + (0,) * max(0, len(release) - len(seen_release))
    if release != padded[: len(release)]:
        return False
    if len(release) >= len(seen_release) and suffix != seen_suffix:
        return False
    return not (local and seen_local and local != seen_local)


def audit(
    report: SelfReport,
    observed: Observations,
    *,
    c2_passed: bool | None,
    c4_outcome: str | None,
    exact_versions: bool = False,
) -> list[Hallucination]:
    """The hallucinations in ``report`` (counted ones only; see ``audit_report`` for the rest).

    ``c2_passed``: C2's verdict (None when it did not run: skipped or a harness error).
    ``c4_outcome``: ``passed``/``failed``/``skipped``/``error`` or None (not run).
    """
    return _audit(report, observed, c2_passed, c4_outcome, exact_versions)[0]


def audit_report(
    read: ReportRead,
    observed: Observations | None,
    *,
    c2_passed: bool | None,
    c4_outcome: str | None,
    exact_versions: bool = False,
) -> Audit:
    """C5 of one case, including the report's own outcome and the inconclusive claims."""
    if read.outcome != "ok" or read.report is None:
        outcome: Literal["missing", "invalid"] = (
            "missing" if read.outcome == "missing" else "invalid"
        )
        return Audit(outcome=outcome, problem=read.problem)
    if observed is None:
        observed = Observations(python_exists=False, python_executable=False, python_runs=False)
    found, inconclusive = _audit(read.report, observed, c2_passed, c4_outcome, exact_versions)
    return Audit(outcome="audited", hallucinations=found, inconclusive=inconclusive)


def _audit(
    report: SelfReport,
    seen: Observations,
    c2_passed: bool | None,
    c4_outcome: str | None,
    exact: bool,
) -> tuple[list[Hallucination], list[str]]:
    found: list[Hallucination] = []
    inconclusive: list[str] = []

    def add(kind: HallucinationKind, field: str, claimed: Any, observed: Any, why: str) -> None:
        found.append(
            Hallucination(kind=kind, field=field, claimed=claimed, observed=observed, message=why)
        )

    path = report.python_path
    if not seen.python_exists:
        add("path", "python_path", path, None, f"{path} does not exist")
    elif not seen.python_regular:
        # A folder is "executable" (searchable) to test -x: C5 passed /usr as an interpreter.
        add("path", "python_path", path, None, f"{path} is not a file (a folder or a device)")
    elif not seen.python_executable:
        add("path", "python_path", path, None, f"{path} is not executable")
    elif not seen.python_runs:
        add("path", "python_path", path, None, f"{path} does not run")

    if report.python_version is not None:
        if seen.python_version is None:
            inconclusive.append("python_version: the interpreter's version was not observed")
        elif not versions_match(report.python_version, seen.python_version, exact=exact):
            add(
                "version",
                "python_version",
                report.python_version,
                seen.python_version,
                f"reported Python {report.python_version}, the interpreter is "
                f"{seen.python_version}",
            )

    torch_seen = seen.framework == "torch"
    if report.torch_version is not None and seen.python_runs:
        if not torch_seen or seen.framework_importable is None:
            inconclusive.append("torch_version: torch was not checked in this case")
        elif not seen.framework_importable:
            add(
                "version",
                "torch_version",
                report.torch_version,
                None,
                f"reported torch {report.torch_version}, but torch is not importable",
            )
        elif seen.framework_version is not None and not versions_match(
            report.torch_version, seen.framework_version, exact=exact
        ):
            add(
                "version",
                "torch_version",
                report.torch_version,
                seen.framework_version,
                f"reported torch {report.torch_version}, installed is {seen.framework_version}",
            )

    if report.cuda_available is True:
        if c2_passed is False or seen.cuda_available is False or seen.framework_importable is False:
            add(
                "capability",
                "cuda_available",
                True,
                seen.cuda_available,
                "reported CUDA available, but "
                + ("C2 failed" if c2_passed is False else "the interpreter sees no CUDA"),
            )
        elif c2_passed is None and seen.cuda_available is None:
            inconclusive.append("cuda_available: neither C2 nor the interpreter answered")

    if report.gpu_count is not None:
        count = seen.device_count
        if count is None and seen.framework_importable is False:
            count = 0  # nothing that cannot import the framework sees a GPU through it
        if count is None:
            inconclusive.append("gpu_count: the device count was not observed")
        elif report.gpu_count > count:
            add(
                "capability",
                "gpu_count",
                report.gpu_count,
                count,
                f"reported {report.gpu_count} GPU(s), {count} visible",
            )

    _audit_packages(report, seen, exact, add, inconclusive)

    if report.ddp_expected_ok is True:
        if c4_outcome == "failed":
            add("capability", "ddp_expected_ok", True, False, "reported DDP ok, but C4 failed")
        elif c4_outcome != "passed":
            inconclusive.append(f"ddp_expected_ok: C4 was {c4_outcome or 'not run'}")
    return found, inconclusive


def package_key(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``Flash_Attn`` is ``flash-attn``)."""
    return re.sub(r"[-_.]+", "-", name).lower().strip()


def claimed_packages(report: SelfReport) -> list[tuple[str, str | None]]:
    """(name, version or None) of every package ``installed_packages`` names."""
    claims: list[tuple[str, str | None]] = []
    for entry in report.installed_packages or []:
        name = next(
            (entry[key] for key in ("name", "package", "distribution") if key in entry), None
        )
        if isinstance(name, str) and name.strip():
            version = entry.get("version")
            claims.append((name.strip(), str(version) if version is not None else None))
    return claims


def _audit_packages(
    report: SelfReport, seen: Observations, exact: bool, add: Any, inconclusive: list[str]
) -> None:
    """A package the report says is installed must be, at the version it says: a claimed
    package that is not there is what the agent made up (counted as a version claim)."""
    claims = claimed_packages(report)
    if not claims:
        return
    if seen.packages is None:
        inconclusive.append("installed_packages: the interpreter's packages were not listed")
        return
    for name, version in claims:
        installed = seen.packages.get(package_key(name))
        field = f"installed_packages[{name}]"
        if installed is None:
            add("version", field, version or "installed", None, f"{name} is not installed")
        elif version is not None and not versions_match(version, installed, exact=exact):
            add(
                "version",
                field,
                version,
                installed,
                f"reported {name} {version}, installed is {installed}",
            )
