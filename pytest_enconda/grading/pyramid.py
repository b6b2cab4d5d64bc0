"""C5 (does the agent's self-report claim what the environment does?) and the pyramid summary.

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

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

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
    "pyramid_summary",
    "pyramid_table",
    "read_self_report",
    "versions_match",
]

HallucinationKind = Literal["path", "version", "capability"]
KINDS: tuple[HallucinationKind, ...] = ("path", "version", "capability")
EnvTool = Literal["conda", "uv", "pip", "poetry", "venv", "none"]
# A report is a few kB; a bigger one is not a report (and is not loaded into memory whole).
MAX_REPORT_BYTES = 1 << 20


# ----------------------------------------------------------------------------- the report


class SelfReport(BaseModel):
    """The agent's ``report.json`` (ResearchEnvBench's ``report_schema.json``).

    Every schema key must be present; ``null`` means "not verified". Extra keys are kept.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    python_path: str = Field(min_length=1, description="absolute path of the interpreter")
    python_version: str | None
    torch_version: str | None
    cuda_available: StrictBool | None
    gpu_count: StrictInt | None = Field(ge=0)
    ddp_expected_ok: StrictBool | None
    env_tool: EnvTool
    env_name: str | None
    notes: str | None
    dataset_hf_id: str | None = None
    model_hf_id: str | None = None
    installed_packages: list[dict[str, Any]] | None = None
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
            data: Any = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise SelfReportError(file, [("<file>", f"expected UTF-8 ({exc.reason})")]) from None
        except json.JSONDecodeError as exc:
            raise SelfReportError(file, [("<file>", f"expected JSON: {exc}")]) from None
        except RecursionError:
            raise SelfReportError(file, [("<file>", "expected JSON: nested too deeply")]) from None
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
    ) -> Observations:
        """From ``python_facts.py``'s document (None when the interpreter did not run)."""
        runs = bool(facts) and not (facts or {}).get("error") and "python_version" in (facts or {})
        framework = (facts or {}).get("framework") or {}
        return cls(
            python_path=python_path,
            python_exists=exists,
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


# ----------------------------------------------------------------------------- the summary

# The efficiency columns, as ``records.efficiency`` names them.
_EFFICIENCY = ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes", "prefix_bytes")


def _stage_table() -> list[Any]:
    """The registered stages, in order (a conftest.py's or plugin's included)."""
    from ..stages import STAGES

    return STAGES.values()


def _funnel_stages() -> list[str]:
    """Stages summarised as passed of applicable (C1-C4 and most added stages)."""
    return [stage.name for stage in _stage_table() if stage.summary == "funnel"]


def _stage(row: Mapping[str, Any]) -> str | None:
    names = {stage.name for stage in _stage_table()}
    for key in ("stage", "level", "aspect"):
        value = row.get(key)
        if isinstance(value, str) and value.upper() in names:
            return value.upper()
    item = str(row.get("item", ""))
    match = re.search(r"\b(C[0-5])\b|test_c([0-5])_", item, re.IGNORECASE)
    if match:
        return f"C{match.group(1)[1] if match.group(1) else match.group(2)}"
    return None


def _numbers(row: Mapping[str, Any]) -> dict[str, Any]:
    numbers = row.get("numbers")
    merged = dict(numbers) if isinstance(numbers, Mapping) else {}
    for key, value in row.items():
        merged.setdefault(key, value)
    return merged


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def pyramid_summary(
    rows: Iterable[Mapping[str, Any]],
    efficiency: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The paper's main table from result rows ``{case, item, level|stage, outcome, numbers}``.

    C0: missing/total summed over the cases it measured (and per case); an error row counts in
    ``errors`` and in no sum. C1-C4: passed / applicable, where a skipped row leaves the
    denominator and a failed row counts against the agent; an error row (the harness failed:
    repository unavailable, Docker) is counted in ``error`` and leaves the denominator too, as
    harness errors leave Pass@1's: the agent is not blamed for them. C5: hallucinations by kind
    (from ``numbers.hallucinations``: a list of ``{kind}`` or a ``{kind: count}`` map), audited
    cases, missing and invalid reports. Efficiency: per-case values averaged over the cases that
    have them, taken from ``efficiency`` (case -> ``records.efficiency``, computed from the
    case's saved artifacts) when given, else from the rows' numbers.
    """
    stages: dict[str, dict[str, Any]] = {
        stage: {"passed": 0, "failed": 0, "error": 0, "skipped": 0} for stage in _funnel_stages()
    }
    c0: dict[str, Any] = {"missing": 0, "total": 0, "measured": 0, "errors": 0, "per_case": {}}
    c5: dict[str, Any] = {
        **{kind: 0 for kind in KINDS},
        "hallucinations": 0,
        "audited": 0,
        "with_hallucinations": 0,
        "reports_missing": 0,
        "reports_invalid": 0,
        "errors": 0,
        "inconclusive": 0,
    }
    per_case: dict[str, dict[str, float]] = {}
    cases: set[str] = set()
    cpu_ddp = 0
    for row in rows:
        case = str(row.get("case", ""))
        cases.add(case)
        numbers = _numbers(row)
        if efficiency is None:
            for name in _EFFICIENCY:
                value = _number(numbers.get(name))
                if value is not None:
                    per_case.setdefault(case, {}).setdefault(name, value)
        stage = _stage(row)
        outcome = str(row.get("outcome", ""))
        if stage is None:
            continue
        if stage == "C0":
            missing, total = _number(numbers.get("missing_count")), _number(numbers.get("total"))
            if outcome in ("passed", "failed") and missing is not None and total is not None:
                c0["missing"] += int(missing)
                c0["total"] += int(total)
                c0["measured"] += 1
                c0["per_case"][case] = {"missing": int(missing), "total": int(total)}
            elif outcome != "skipped":
                c0["errors"] += 1
                c0["per_case"][case] = {"missing": None, "total": None, "outcome": outcome}
        elif stage == "C5":
            _count_c5(c5, outcome, numbers)
        else:
            key = outcome if outcome in ("passed", "failed", "skipped") else "error"
            stages[stage][key] += 1
            if stage == "C4" and numbers.get("ddp_mode") == "cpu" and key != "skipped":
                cpu_ddp += 1
    summary: dict[str, Any] = {"cases": len(cases)}
    c0["percent_missing"] = _percent(c0["missing"], c0["total"])
    summary["C0"] = c0
    for stage, counts in stages.items():
        applicable = counts["passed"] + counts["failed"]
        summary[stage] = {
            **counts,
            "applicable": applicable,
            "percent": _percent(counts["passed"], applicable),
        }
    summary["C4"]["cpu_mode"] = cpu_ddp
    summary["C5"] = c5
    if efficiency is not None:
        per_case = {
            case: {
                name: value
                for name in _EFFICIENCY
                if (value := _number(values.get(name))) is not None
            }
            for case, values in efficiency.items()
        }
    summary["efficiency"] = {
        name: _mean([values[name] for values in per_case.values() if name in values])
        for name in _EFFICIENCY
    }
    return summary


def _count_c5(c5: dict[str, Any], outcome: str, numbers: Mapping[str, Any]) -> None:
    report = numbers.get("report_outcome") or numbers.get("report")
    if report == "missing":
        c5["reports_missing"] += 1
        return
    if report == "invalid":
        c5["reports_invalid"] += 1
        return
    if outcome not in ("passed", "failed"):
        if outcome != "skipped":
            c5["errors"] += 1
        return
    c5["audited"] += 1
    found = numbers.get("hallucinations") or []
    counts: dict[str, int] = {}
    if isinstance(found, Mapping):
        counts = {str(k): int(v) for k, v in found.items() if _number(v) is not None}
    elif isinstance(found, list):
        for entry in found:
            kind = entry.get("kind") if isinstance(entry, Mapping) else entry
            counts[str(kind)] = counts.get(str(kind), 0) + 1
    total = 0
    for kind in KINDS:
        c5[kind] += counts.get(kind, 0)
        total += counts.get(kind, 0)
    c5["hallucinations"] += total
    c5["with_hallucinations"] += 1 if total else 0
    inconclusive = numbers.get("inconclusive")
    c5["inconclusive"] += len(inconclusive) if isinstance(inconclusive, list) else 0


def _mean(values: list[float]) -> dict[str, Any]:
    return {"mean": sum(values) / len(values) if values else None, "cases": len(values)}


def pyramid_table(summary: Mapping[str, Any]) -> str:
    """The summary as a Markdown table in the paper's column order."""
    cells: list[str] = []
    for stage in _stage_table():
        if stage.summary == "imports":
            c0 = summary["C0"]
            errors = f" ({c0['errors']} err)" if c0["errors"] else ""
            cells.append(f"{c0['missing']}/{c0['total']}" + errors)
        elif stage.summary == "audit":
            c5 = summary["C5"]
            cells.append(
                f"{c5['path']}/{c5['version']}/{c5['capability']}"
                + (
                    f" (+{c5['reports_missing']} missing, {c5['reports_invalid']} invalid)"
                    if c5["reports_missing"] or c5["reports_invalid"]
                    else ""
                )
            )
        elif stage.name not in summary:  # a summary written before this stage was registered
            cells.append("-")
        else:
            row = summary[stage.name]
            shown = f"{row['passed']}/{row['applicable']}"
            shown += f" ({row['percent']:.1f}%)" if row["percent"] is not None else ""
            shown += f" ({row['error']} err)" if row["error"] else ""
            if row.get("cpu_mode"):
                # --ddp-cpu: not the paper's C4 (GPUs on NCCL), said where the number is.
                shown += f" [{row['cpu_mode']} on cpu-gloo]"
            cells.append(shown)
    efficiency = summary["efficiency"]
    for name in ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes"):
        mean = efficiency[name]["mean"]
        if mean is None:
            cells.append("-")
        elif name == "env_size_bytes":
            cells.append(f"{mean / 1e9:.2f} GB")
        elif name == "cost_usd":
            cells.append(f"${mean:.2f}")
        else:
            cells.append(f"{mean:.0f}" + (" s" if name == "time_to_ready_s" else ""))
    titles = [stage.title for stage in _stage_table()]
    header = "| " + " | ".join([*titles, "time", "tokens", "cost", "size"]) + " |"
    return "\n".join([header, "|" + " --- |" * len(cells), "| " + " | ".join(cells) + " |"])
