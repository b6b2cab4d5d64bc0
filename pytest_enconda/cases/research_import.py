"""Import ResearchEnvBench's released metadata as research cases.

Layout (``--cases PATH`` names the folder)::

    researchenvbench/
        manifest.json                        repositories: URL, pinned commit, id
        scripts_repos_test_categories.csv    which stages apply: supports_cpu/single_gpu/multi_gpu,
                                             skip reasons, category

One case per repository, id ``owner/name``, repository ``kind="url"`` at the manifest's commit
(``--repo-mirror`` is consulted first). Applicability maps onto the pyramid: ``supports_cpu`` is
C1, ``supports_single_gpu`` C3, ``supports_multi_gpu`` C4, and C2 (CUDA visible) applies when
either GPU stage does. The data holds no entry points, so ``entry_point`` and
``ddp_entry_point`` are None (C1/C3/C4 then skip as "no entry point declared" until a case adds
them) and no README: the agent reads the repository's own, so ``readme_text`` is empty and the
case carries the tag ``readme:repository`` (nothing is written over the repository's README).

Decisions, from the 44 repositories of the released data:

- A skip reason is kept only for a stage the table marks unsupported; for supported stages the
  table's ``unknown``/``not_applicable`` say nothing.
- A manifest repository without a table row is a problem (its denominators would be guesses); a
  table row without a manifest entry is loaded from the table's own commit, with a note; the two
  files giving different commits for one repository is a problem.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import textio
from .enconda_import import DatasetLoad, ImportReport
from .loader import MAX_FILE_BYTES
from .models import README_FROM_REPOSITORY, Case, CaseSpec, RepoSource, ResearchSpec

__all__ = ["CATEGORIES_FILE", "MANIFEST_FILE", "README_FROM_REPOSITORY", "load_research_dataset"]

MANIFEST_FILE = "manifest.json"
CATEGORIES_FILE = "scripts_repos_test_categories.csv"
_FULL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")
_REASONS = {
    "repo_not_supported": "the repository does not support it",
    "not_applicable": "not applicable",
    "unknown": "unsupported, reason unknown",
}


class _ManifestRepo(BaseModel):
    model_config = ConfigDict(extra="allow")

    repo_full_name: str = Field(pattern=_FULL_NAME.pattern)
    repo_url: str = Field(min_length=1)
    commit_sha: str = Field(pattern=_COMMIT.pattern)
    repo_id: str | None = None
    hardware_bucket: str | None = None


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="allow")

    schema_version: int
    repos: list[dict[str, Any]]


YesNo = Literal["yes", "no"]


class _CategoryRow(BaseModel):
    model_config = ConfigDict(extra="allow")

    repo: str = Field(pattern=_FULL_NAME.pattern)
    git_link: str = ""
    commit: str = Field(pattern=_COMMIT.pattern)
    supports_cpu: YesNo
    supports_single_gpu: YesNo
    supports_multi_gpu: YesNo
    cpu_skip_reason: str = ""
    single_gpu_skip_reason: str = ""
    multi_gpu_skip_reason: str = ""
    category: str = ""


def _errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        field = ".".join(str(p) for p in err["loc"]) or "<root>"
        parts.append(f"{field}: {err['msg']} (got {str(err.get('input'))[:60]!r})")
    return "; ".join(parts)


def load_research_dataset(root: Path) -> DatasetLoad:
    """The research cases of a ResearchEnvBench folder; unreadable entries are ``problems``."""
    root = Path(root)
    report = ImportReport()
    load = DatasetLoad(root=root)
    manifest = _read_manifest(root / MANIFEST_FILE, report)
    rows = _read_categories(root / CATEGORIES_FILE, report)
    if manifest is None or rows is None:
        load.problems, load.notes = report.problems, report.notes
        return load
    seen: set[str] = set()
    for index, repo in enumerate(manifest):
        where = f"{root / MANIFEST_FILE}: repos[{index}]"
        if repo.repo_full_name in seen:
            report.problem(where, f"{repo.repo_full_name} is listed twice")
            continue
        seen.add(repo.repo_full_name)
        row = rows.get(repo.repo_full_name)
        if row is None:
            report.problem(
                where,
                f"{repo.repo_full_name} has no row in {CATEGORIES_FILE}: applicability unknown",
            )
            continue
        if row.commit.lower() != repo.commit_sha.lower():
            report.problem(
                where,
                f"{repo.repo_full_name}: commit {repo.commit_sha} in {MANIFEST_FILE} but "
                f"{row.commit} in {CATEGORIES_FILE}",
            )
            continue
        case = _case(root, repo.repo_full_name, repo.repo_url, repo.commit_sha, row, where, report)
        if case is not None:
            load.cases.append(case)
    for name, row in rows.items():
        if name not in seen:
            report.note(root / CATEGORIES_FILE, f"{name} is not in {MANIFEST_FILE}: table's commit")
            url = row.git_link or f"https://github.com/{name}"
            where = f"{root / CATEGORIES_FILE}: {name}"
            case = _case(root, name, url, row.commit, row, where, report)
            if case is not None:
                load.cases.append(case)
    load.problems, load.notes = report.problems, report.notes
    return load


def _read(path: Path) -> str:
    """The file's text: bounded, a regular file (a FIFO or ``/dev/zero`` is refused, not read),
    and when it is a link, one that stays inside the dataset's folder."""
    try:
        root = path.parent.resolve()
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        raise ValueError(f"cannot be resolved: {exc}") from None
    if target.parent != root and root not in target.parents:
        raise ValueError(f"resolves to {target}, outside the dataset's folder {root}")
    return textio.read_text(path, MAX_FILE_BYTES)


def _read_manifest(path: Path, report: ImportReport) -> list[_ManifestRepo] | None:
    try:
        data = textio.parse_json(_read(path))
    except FileNotFoundError:
        report.problem(path, "missing: a ResearchEnvBench folder holds manifest.json")
        return None
    except (OSError, ValueError) as exc:
        report.problem(path, f"expected a JSON object: {exc}")
        return None
    try:
        manifest = _Manifest.model_validate(data)
    except ValidationError as exc:
        report.problem(path, f"not a ResearchEnvBench manifest: {_errors(exc)}")
        return None
    repos = []
    for index, entry in enumerate(manifest.repos):
        try:
            repos.append(_ManifestRepo.model_validate(entry))
        except ValidationError as exc:
            report.problem(f"{path}: repos[{index}]", _errors(exc))
    return repos


def _read_categories(path: Path, report: ImportReport) -> dict[str, _CategoryRow] | None:
    try:
        text = _read(path)
    except FileNotFoundError:
        report.problem(path, f"missing: a ResearchEnvBench folder holds {CATEGORIES_FILE}")
        return None
    except (OSError, ValueError) as exc:
        report.problem(path, f"cannot read: {exc}")
        return None
    try:
        return _category_rows(path, text, report)
    except csv.Error as exc:  # a field past the csv module's limit, a NUL byte
        report.problem(path, f"not a readable CSV table: {exc}")
        return None


def _category_rows(path: Path, text: str, report: ImportReport) -> dict[str, _CategoryRow] | None:
    reader = csv.DictReader(text.splitlines())
    needed = set(_CategoryRow.model_fields) - {"git_link", "category"}
    absent = needed - set(reader.fieldnames or [])
    if absent:
        report.problem(path, f"expected the columns {sorted(needed)}; missing {sorted(absent)}")
        return None
    rows: dict[str, _CategoryRow] = {}
    for line, raw in enumerate(reader, start=2):
        cleaned = {key: (value or "").strip().lower() if key.startswith("supports_") else
                   (value or "").strip() for key, value in raw.items() if key}  # fmt: skip
        try:
            row = _CategoryRow.model_validate(cleaned)
        except ValidationError as exc:
            report.problem(f"{path}: line {line}", _errors(exc))
            continue
        if row.repo in rows:
            report.problem(f"{path}: line {line}", f"{row.repo} has a second row")
            continue
        rows[row.repo] = row
    return rows


def _reason(raw: str, column: str) -> str:
    readable = _REASONS.get(raw, raw or "no reason given")
    return f"ResearchEnvBench: {readable} ({column}={raw or '-'})"


def _case(
    root: Path,
    full_name: str,
    url: str,
    commit: str,
    row: _CategoryRow,
    where: str,
    report: ImportReport,
) -> Case | None:
    cpu = row.supports_cpu == "yes"
    single = row.supports_single_gpu == "yes"
    multi = row.supports_multi_gpu == "yes"
    reasons: dict[str, str] = {}
    if not cpu:
        reasons["C1"] = _reason(row.cpu_skip_reason, "cpu_skip_reason")
    if not single:
        reasons["C3"] = _reason(row.single_gpu_skip_reason, "single_gpu_skip_reason")
    if not multi:
        reasons["C4"] = _reason(row.multi_gpu_skip_reason, "multi_gpu_skip_reason")
    if not single and not multi:
        reasons["C2"] = "ResearchEnvBench: no GPU stage applies to this repository"
    tags = ["researchenvbench", README_FROM_REPOSITORY]
    if row.category:
        tags.append(row.category)
    try:
        spec = CaseSpec(
            id=full_name,
            suite="research",
            title=f"{full_name} ({row.category or 'uncategorised'})",
            repository=RepoSource(kind="url", url=url, revision=commit),
            readme="README.md",
            research=ResearchSpec(
                supports_cpu=cpu,
                supports_single_gpu=single,
                supports_multi_gpu=multi,
                skip_reasons=reasons,  # type: ignore[arg-type]
            ),
            tags=tags,
        )
    except ValidationError as exc:
        report.problem(where, f"cannot make a case: {_errors(exc)}")
        return None
    return Case(spec=spec, case_dir=root, readme_text="")
