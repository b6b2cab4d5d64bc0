"""Multi-SWE-bench instances as AEC cases: the repository at the instance's base commit.

An instance (one JSON object per line, the dataset's ``PullRequest`` fields) names ``org``,
``repo``, ``number`` and ``base.sha`` (SWE-bench's ``base_commit`` is read as ``base.sha``),
which is all it needs; a record without a base commit is a problem naming the field, unless
``--repo-mirror`` resolves its ``base.ref`` there (the branch's commit in the snapshot, said in
the problems, as it may be later than the PR's base). Its language comes from the record
(``language``), else ``--language``, else the folder its file sits in (the dataset groups
files by language: ``go/cli__cli_dataset.jsonl``). Each becomes
``<out>/<org>__<repo>-<number>/case.toml``:
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
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, BinaryIO

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from ..artifacts import atomic_write_text
from ..cases.models import MAX_PASS_SET, Budgets, Name, TestName
from ..ecosystems import canonical_language, languages, of_language
from ..errors import CaseFormatError
from ..textio import decode_utf8, open_regular, parse_json, parse_toml, read_bounded

# Read a line at a time, so a file's size costs time, not memory; a Multi-SWE-bench file is
# tens of megabytes, its largest records (patches, test lists) a few.
MAX_FILE_BYTES = 16 << 30
# A line's parse costs several times its size (a line of empty objects, ten times): 16 MiB
# keeps one record's cost far under a gigabyte.
MAX_LINE_BYTES = 16 << 20
MAX_LISTED_PROBLEMS = 1_000
# A references file is a page per repository; a setup script of a few kilobytes.
MAX_REFERENCES_BYTES = 1 << 20
MAX_SETUP_CHARS = 64 * 1024
MAX_REFERENCES = 1_000


class _TestCommands(Mapping[str, str]):
    """The usual verbose test command per language (what the harness runs for most
    repositories): each ecosystem's ``test_command``, read when asked, so that one registered
    after this import (a conftest's, an entry point's) counts too."""

    def __getitem__(self, language: str) -> str:
        return of_language(language).test_command

    def __iter__(self) -> Iterator[str]:
        return iter(languages())

    def __len__(self) -> int:
        return len(languages())


TEST_COMMANDS: Mapping[str, str] = _TestCommands()

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


# A branch or tag name as git allows it, never an option (no leading "-").
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]*$")


class MsbBase(BaseModel):
    """The PR's target branch: ``sha`` is the base commit; ``ref`` (``master``) and ``label``
    (``org:master``) name the branch, whose commit has moved since."""

    model_config = ConfigDict(extra="allow")

    label: str = Field(default="", max_length=255)
    ref: str = Field(default="", max_length=255)
    sha: str = Field(default="", pattern=f"^$|{_SHA.pattern}")

    def branch(self) -> str | None:
        """The branch ``ref`` or ``label`` names, where it is a name git reads as one."""
        for name in (self.ref, self.label.rpartition(":")[2]):
            if name and _REF.match(name) and ".." not in name:
                return name
        return None


def _test_name(value: str) -> str:
    if not value.strip():
        raise ValueError("a test name must not be empty")
    return value


class MsbInstance(BaseModel):
    """The fields of a Multi-SWE-bench instance this importer reads (others are kept aside),
    bounded as the case loader bounds what they become: a case id that is a folder name, a
    PASS set of test names."""

    model_config = ConfigDict(extra="allow")

    # GitHub's own limits (39 and 100): the case id is a folder name of at most 255 bytes.
    org: str = Field(pattern=_NAME.pattern, max_length=100)
    repo: str = Field(pattern=_NAME.pattern, max_length=100)
    number: int = Field(ge=0, le=2**31 - 1)
    base: MsbBase
    title: str = ""
    language: Name | None = None
    p2p_tests: dict[Annotated[TestName, AfterValidator(_test_name)], Any] = Field(
        default_factory=dict, max_length=MAX_PASS_SET
    )

    @model_validator(mode="before")
    @classmethod
    def _base_commit(cls, data: Any) -> Any:
        # SWE-bench's records (and some Multi-SWE-bench derivatives) give the base commit as
        # base_commit, with no base table.
        if (
            isinstance(data, dict)
            and "base" not in data
            and isinstance(data.get("base_commit"), str)
        ):
            return {**data, "base": {"sha": data["base_commit"]}}
        return data

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
    return canonical_language(value)


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


def _in_mirror(mirror: Path, instance: MsbInstance, revision: str) -> str | None:
    """The commit ``revision`` names in the repository's mirror, or None."""
    from ..sandbox.repo import mirror_candidates

    if revision.startswith("-"):
        return None  # never an option, whatever the patterns upstream allow
    url = f"https://github.com/{instance.org}/{instance.repo}.git"
    for candidate in [mirror, *mirror_candidates(mirror, url)]:
        if not candidate.exists():
            continue
        found = subprocess.run(
            [
                "git",
                "-C",
                str(candidate),
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{revision}^{{commit}}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if found.returncode == 0 and _SHA.match(found.stdout.strip()):
            return found.stdout.strip()
    return None


def _mirror_has(mirror: Path, instance: MsbInstance) -> bool:
    return _in_mirror(mirror, instance, instance.base.sha) is not None


def _missing_sha(instance: MsbInstance, repo_mirror: Path | None) -> tuple[str | None, str]:
    """For a record without ``base.sha``: (the commit its branch has in the mirror, the note
    saying so) or (None, why the record cannot be imported)."""
    branch = instance.base.branch()
    if branch is None:
        return None, (
            "base.sha: missing, and neither base.ref nor base.label names a branch; expected "
            "the base commit's hex sha (a Multi-SWE-bench record's base.sha)"
        )
    if repo_mirror is None:
        return None, (
            f"base.sha: missing; expected the base commit's hex sha (a Multi-SWE-bench "
            f"record's base.sha), or --repo-mirror to resolve base.ref {branch!r} there"
        )
    sha = _in_mirror(repo_mirror, instance, branch)
    if sha is None:
        return None, f"base.sha: missing, and the mirror {repo_mirror} has no branch {branch!r}"
    return sha, (
        f"base.sha: missing; base.ref {branch!r} resolved in the mirror to {sha}: the branch's "
        "commit in the snapshot, later than the PR's base if the branch moved since"
    )


def check_instances_file(path: Path) -> None:
    """``ValueError`` (or ``OSError``) when ``path`` cannot be an instance file at all: not a
    regular file (a FIFO would block, a device never end), too large, or UTF-16."""
    with open_regular(path, MAX_FILE_BYTES) as handle:
        if handle.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            raise ValueError("UTF-16 text; expected UTF-8 JSON Lines")


def _lines(handle: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(number, the line's bytes) of each line, ``None`` for one longer than
    ``MAX_LINE_BYTES``, which is skipped unread: a file of any size costs one line's memory."""
    number = 0
    while line := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield number, None
            continue
        yield number, line


def _shown(part: object) -> str:
    """A location part as a problem shows it: a hostile test name (control characters, 64 KiB)
    is printed escaped and cut."""
    text = str(part)
    if text.isprintable() and len(text) <= 80:
        return text
    return repr(text[:80]) + ("..." if len(text) > 80 else "")


def _details(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(_shown(p) for p in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors()[:5]
    )


def _instance(number: int, raw: bytes | None) -> MsbInstance | str:
    """The line's instance, or why it is not one."""
    if raw is None:
        return f"longer than {MAX_LINE_BYTES} bytes; expected one instance per line"
    if number == 1:
        raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        data = parse_json(text)
    except ValueError as exc:
        # Syntax, nesting past the parser's recursion, and integers past Python's digit limit.
        return "not JSON: " + str(exc).removeprefix("not valid JSON: ")[:300]
    try:
        return MsbInstance.model_validate(data)
    except ValidationError as exc:
        return _details(exc)


class _Problems(list[str]):
    """The problems of one import, listed up to ``MAX_LISTED_PROBLEMS`` and counted beyond: a
    file of a million bad lines must not be a million messages held in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.more = 0

    def add(self, problem: str) -> None:
        if len(self) < MAX_LISTED_PROBLEMS:
            self.append(problem)
        else:
            self.more += 1

    def closed(self) -> list[str]:
        more = [f"... and {self.more} more problem(s)"] if self.more else []
        return [*self, *more]


def _staged(
    staging: Path, instance: MsbInstance, language: str, reference: RepoReference | None
) -> Path:
    """The case written into ``staging`` and loaded back as ``pytest`` will load it; the
    loader's ``CaseFormatError`` (or ``ValueError``, ``OSError``) when it would refuse it."""
    from ..cases.loader import load_case

    folder = staging / instance.case_id
    folder.mkdir()
    if reference is not None:
        atomic_write_text(folder / "golden_setup.sh", reference.setup)
    atomic_write_text(folder / "case.toml", case_toml(instance, language, reference))
    load_case(folder / "case.toml")
    return folder


def _put_in_place(staged: Path, target: Path) -> None:
    """The staged case's files moved over the target's; case.toml last, so a case file never
    names a setup that is not there yet, and an earlier import's setup that no case file names
    any more is removed."""
    target.mkdir(parents=True, exist_ok=True)
    setup = staged / "golden_setup.sh"
    has_setup = setup.exists()
    if has_setup:
        os.replace(setup, target / "golden_setup.sh")
    os.replace(staged / "case.toml", target / "case.toml")
    if not has_setup:
        # A setup left by an earlier import with references would be read by no case.toml
        # but would mislead whoever reads the folder.
        (target / "golden_setup.sh").unlink(missing_ok=True)


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
    gets its golden setup (``golden_setup.sh``) and test command.

    A bad record costs only itself. Each case is written into a hidden staging folder of
    ``out`` and loaded back there with the case loader: one the loader would refuse is a
    problem and never reaches ``out``, so nothing written there looks valid and is not.
    ``ValueError`` or ``OSError`` only when the file cannot be read at all."""
    folder_language = language_of(path.parent.name)
    imported: list[ImportedInstance] = []
    problems = _Problems()
    seen: set[str] = set()
    check_instances_file(path)
    out.mkdir(parents=True, exist_ok=True)
    # Hidden: a staging folder left by a killed import is never collected as cases.
    staging = Path(tempfile.mkdtemp(prefix=".import-msb-", dir=out))
    try:
        with open_regular(path, MAX_FILE_BYTES) as handle:
            for number, raw in _lines(handle):
                if raw is not None and not raw.strip():
                    continue
                where = f"{path}:{number}"
                instance = _instance(number, raw)
                if isinstance(instance, str):
                    problems.add(f"{where}: {instance}")
                    continue
                lang = language_of(instance.language) or language_of(language) or folder_language
                if lang is None:
                    given = instance.language or language or path.parent.name
                    problems.add(
                        f"{where}: language: cannot tell the language ({_shown(given)}); give "
                        f"--language, one of {', '.join(sorted(TEST_COMMANDS))}"
                    )
                    continue
                result = _import_one(
                    instance, where, out, staging, lang, seen, problems, repo_mirror, references
                )
                if result is not None:
                    imported.append(result)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return imported, problems.closed()


def _import_one(
    instance: MsbInstance,
    where: str,
    out: Path,
    staging: Path,
    lang: str,
    seen: set[str],
    problems: _Problems,
    repo_mirror: Path | None,
    references: References | None,
) -> ImportedInstance | None:
    if instance.case_id in seen:
        problems.add(f"{where}: {instance.case_id} is listed twice; the first is kept")
        return None
    seen.add(instance.case_id)
    problem = ""
    if not instance.base.sha:
        sha, problem = _missing_sha(instance, repo_mirror)
        problems.add(f"{where}: {problem}")
        if sha is None:
            return None
        instance = instance.model_copy(
            update={"base": instance.base.model_copy(update={"sha": sha})}
        )
    elif repo_mirror is not None and not _mirror_has(repo_mirror, instance):
        problem = f"the mirror {repo_mirror} has no commit {instance.base.sha}"
        problems.add(f"{where}: base.sha: {problem}")
    reference = references.find(instance) if references is not None else None
    try:
        staged = _staged(staging, instance, lang, reference)
    except CaseFormatError as exc:
        listed = "; ".join(f"{field}: {message}" for field, message in exc.problems[:5])
        problems.add(f"{where}: the case it makes would be refused: {listed}")
        return None
    except (OSError, ValueError) as exc:
        problems.add(f"{where}: cannot write its case: {str(exc)[:300]}")
        return None
    case_dir = out / instance.case_id
    try:
        _put_in_place(staged, case_dir)
    except OSError as exc:
        problems.add(f"{where}: cannot write {case_dir}: {exc.strerror or exc}")
        return None
    return ImportedInstance(
        case_id=instance.case_id,
        case_dir=str(case_dir),
        language=lang,
        pass_set=len(instance.p2p_tests),
        reference=reference.source if reference is not None else "",
        problem=problem,
    )
