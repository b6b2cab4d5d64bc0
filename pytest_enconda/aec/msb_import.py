"""Multi-SWE-bench instances as AEC cases: the repository at the instance's base commit.

An instance (one JSON object per line, the dataset's ``PullRequest`` fields) names ``org``,
``repo``, ``number`` and ``base.sha``; its language comes from the record (``language``), else
``--language``, else the folder its file sits in (the dataset groups files by language:
``go/cli__cli_dataset.jsonl``). Each becomes ``<out>/<org>__<repo>-<number>/case.toml``:
``suite = "aec"``, the repository as a URL at the base commit (``--repo-mirror`` is consulted
before the network when the case runs), the language hint, and a reference:

- the test command is the language's usual verbose command (as the Multi-SWE-bench harness runs
  most repositories of that language: ``go test -v -count=1 ./...``, ``cargo test``, ...), not a
  per-repository one: it may need adjusting, and the case says so in its title;
- the PASS set is the instance's pass-to-pass tests (``p2p_tests``: passing before and after the
  fix, so at the base commit), named as the harness's log parsers name them, which for go, cargo
  and pytest are the names ``aec.testnames`` reads.

Without references no golden setup is written: the oracle refuses such a case (a harness error),
real agents run it. With ``--references FILE`` (``References``: TOML, bounded and validated) an
instance whose repository (and PR number range) has a reference gets that golden setup and test
command instead, as the Multi-SWE-bench harness keeps one per repository (its per-repository
Dockerfile and ``run.sh``), so the oracle can run it. With ``--repo-mirror`` the importer checks
that the mirror holds each base commit and reports the instances whose commit it lacks.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..artifacts import atomic_write_text
from ..cases.models import AEC_LANGUAGES, Budgets
from ..textio import decode_utf8, parse_toml, read_bounded

MAX_FILE_BYTES = 1 << 30
# A references file is a page per repository; a setup script of a few kilobytes.
MAX_REFERENCES_BYTES = 1 << 20
MAX_SETUP_CHARS = 64 * 1024
MAX_REFERENCES = 1_000

# The usual verbose test command per language (what the harness runs for most repositories).
TEST_COMMANDS = {
    "go": "go test -v -count=1 ./...",
    "rust": "cargo test",
    "python": "python -m pytest -rA",
    "java": "mvn -B test",
    "javascript": "npm test",
    "typescript": "npm test",
    "c": "cmake -S . -B build && cmake --build build && ctest --test-dir build",
    "c++": "cmake -S . -B build && cmake --build build && ctest --test-dir build",
    "php": "vendor/bin/phpunit",
}
_ALIASES = {"golang": "go", "js": "javascript", "ts": "typescript", "cpp": "c++", "c/c++": "c++"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


class MsbBase(BaseModel):
    model_config = ConfigDict(extra="allow")

    label: str = ""
    ref: str = ""
    sha: str = Field(pattern=_SHA.pattern)


class MsbInstance(BaseModel):
    """The fields of a Multi-SWE-bench instance this importer reads (others are kept aside)."""

    model_config = ConfigDict(extra="allow")

    org: str = Field(pattern=_NAME.pattern)
    repo: str = Field(pattern=_NAME.pattern)
    number: int = Field(ge=0)
    base: MsbBase
    title: str = ""
    language: str | None = None
    p2p_tests: dict[str, Any] = Field(default_factory=dict)

    @property
    def case_id(self) -> str:
        return f"{self.org}__{self.repo}-{self.number}"


class RepoReference(BaseModel):
    """A repository's golden setup and test command, for its PRs numbered ``from_number`` to
    ``to_number`` (inclusive; absent: unbounded), as the harness splits a repository whose
    build changed over time (``ripgrep_772_to_406``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    org: str = Field(pattern=_NAME.pattern, max_length=100)
    repo: str = Field(pattern=_NAME.pattern, max_length=100)
    from_number: int | None = Field(default=None, ge=0)
    to_number: int | None = Field(default=None, ge=0)
    setup: str = Field(min_length=1, max_length=MAX_SETUP_CHARS)
    test_command: str = Field(min_length=1, max_length=4_000)
    source: str = Field(min_length=1, max_length=2_000, description="where the recipe is from")
    budgets: Budgets | None = None

    @model_validator(mode="after")
    def _checked(self) -> RepoReference:
        if not self.setup.strip() or not self.test_command.strip():
            raise ValueError("setup and test_command must not be blank")
        if "\x00" in self.setup or "\x00" in self.test_command:
            raise ValueError("setup and test_command must not contain NUL")
        low, high = self.from_number, self.to_number
        if low is not None and high is not None and low > high:
            raise ValueError(f"from_number {low} is above to_number {high}")
        return self

    def covers(self, instance: MsbInstance) -> bool:
        return (
            (self.org.lower(), self.repo.lower()) == (instance.org.lower(), instance.repo.lower())
            and (self.from_number is None or instance.number >= self.from_number)
            and (self.to_number is None or instance.number <= self.to_number)
        )


class References(BaseModel):
    """A references file: ``[[reference]]`` tables; two of one repository must not overlap."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reference: list[RepoReference] = Field(max_length=MAX_REFERENCES)

    @model_validator(mode="after")
    def _no_overlap(self) -> References:
        spans: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for ref in self.reference:
            low = ref.from_number if ref.from_number is not None else 0
            high = ref.to_number if ref.to_number is not None else float("inf")
            key = (ref.org.lower(), ref.repo.lower())
            for other_low, other_high in spans.get(key, []):
                if low <= other_high and other_low <= high:
                    raise ValueError(
                        f"two references for {ref.org}/{ref.repo} cover the same PR numbers"
                    )
            spans.setdefault(key, []).append((low, high))
        return self

    def find(self, instance: MsbInstance) -> RepoReference | None:
        return next((ref for ref in self.reference if ref.covers(instance)), None)


def load_references(path: Path) -> References:
    """``ValueError`` naming the file and each field that is wrong."""
    text = decode_utf8(read_bounded(path, MAX_REFERENCES_BYTES))
    try:
        data = parse_toml(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not TOML: {exc}") from None
    try:
        return References.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValueError(f"{path}: {details}") from None


class ImportedInstance(BaseModel):
    case_id: str
    case_dir: str
    language: str
    pass_set: int
    reference: str = Field(default="", description="the reference's source, where one applied")
    problem: str = ""


def language_of(value: str | None) -> str | None:
    if not value:
        return None
    lowered = value.strip().lower()
    lowered = _ALIASES.get(lowered, lowered)
    return lowered if lowered in AEC_LANGUAGES else None


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def case_toml(instance: MsbInstance, language: str, reference: RepoReference | None = None) -> str:
    """The case file; with a reference, its golden setup (``golden_setup.sh`` beside it), test
    command and budgets, else the language's default test command and no golden setup."""
    pass_set = sorted(instance.p2p_tests)
    if reference is not None:
        where, test_command = f"reference: {reference.source}", reference.test_command
    else:
        where = f"reference: the {language} default test command"
        test_command = TEST_COMMANDS[language]
    title = (
        f"{instance.org}/{instance.repo}#{instance.number} at its base commit "
        f"(Multi-SWE-bench; {where})"
    )
    golden = 'golden_setup = "golden_setup.sh"\n' if reference is not None else ""
    budgets = ""
    if reference is not None and reference.budgets is not None:
        given = reference.budgets.model_dump(include=reference.budgets.model_fields_set)
        budgets = "\n[budgets]\n" + "".join(f"{key} = {value}\n" for key, value in given.items())
    return (
        f"id = {_toml_string(instance.case_id)}\n"
        'suite = "aec"\n'
        f"title = {_toml_string(title)}\n"
        f"{golden}"
        'tags = ["multi-swe-bench"]\n\n'
        "[repository]\n"
        'kind = "url"\n'
        f"url = {_toml_string(f'https://github.com/{instance.org}/{instance.repo}.git')}\n"
        f"revision = {_toml_string(instance.base.sha)}\n\n"
        "[aec]\n"
        f"language = {_toml_string(language)}\n\n"
        "[aec.reference]\n"
        f"test_command = {_toml_string(test_command)}\n"
        f"pass_set = [{', '.join(_toml_string(name) for name in pass_set)}]\n"
        f"{budgets}"
    )


def _mirror_has(mirror: Path, instance: MsbInstance) -> bool:
    from ..sandbox.repo import mirror_candidates

    url = f"https://github.com/{instance.org}/{instance.repo}.git"
    for candidate in [mirror, *mirror_candidates(mirror, url)]:
        if not candidate.exists():
            continue
        found = subprocess.run(
            # base.sha is pattern-checked hex; --end-of-options keeps it an operand regardless.
            [
                "git",
                "-C",
                str(candidate),
                "cat-file",
                "-e",
                "--end-of-options",
                f"{instance.base.sha}^{{commit}}",
            ],
            capture_output=True,
            timeout=60,
        )
        if found.returncode == 0:
            return True
    return False


def import_instances(
    path: Path,
    out: Path,
    *,
    language: str | None = None,
    repo_mirror: Path | None = None,
    references: References | None = None,
) -> tuple[list[ImportedInstance], list[str]]:
    """Write one AEC case per instance of ``path``; returns (imported, problems), each problem
    naming the file, the line and the field. An instance with a reference in ``references``
    gets its golden setup (``golden_setup.sh``) and test command."""
    text = read_bounded(path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    folder_language = language_of(path.parent.name)
    imported: list[ImportedInstance] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            instance = MsbInstance.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON: {exc.msg} (column {exc.colno})")
            continue
        except ValidationError as exc:
            details = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
                for err in exc.errors()
            )
            problems.append(f"{where}: {details}")
            continue
        lang = language_of(instance.language) or language_of(language) or folder_language
        if lang is None:
            given = instance.language or language or path.parent.name
            problems.append(
                f"{where}: language: cannot tell the language ({given!r}); give --language, one "
                f"of {', '.join(sorted(TEST_COMMANDS))}"
            )
            continue
        if instance.case_id in seen:
            problems.append(f"{where}: {instance.case_id} is listed twice; the first is kept")
            continue
        seen.add(instance.case_id)
        case_dir = out / instance.case_id
        problem = ""
        if repo_mirror is not None and not _mirror_has(repo_mirror, instance):
            problem = f"the mirror {repo_mirror} has no commit {instance.base.sha}"
            problems.append(f"{where}: base.sha: {problem}")
        reference = references.find(instance) if references is not None else None
        case_dir.mkdir(parents=True, exist_ok=True)
        if reference is not None:
            atomic_write_text(case_dir / "golden_setup.sh", reference.setup)
        elif (case_dir / "golden_setup.sh").exists():
            # A setup left by an earlier import with references would be read by no case.toml
            # but would mislead whoever reads the folder.
            (case_dir / "golden_setup.sh").unlink()
        atomic_write_text(case_dir / "case.toml", case_toml(instance, lang, reference))
        imported.append(
            ImportedInstance(
                case_id=instance.case_id,
                case_dir=str(case_dir),
                language=lang,
                pass_set=len(instance.p2p_tests),
                reference=reference.source if reference is not None else "",
                problem=problem,
            )
        )
    return imported, problems
