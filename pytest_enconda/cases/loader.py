"""Read a shipped case folder (``case.toml`` and the files it names) into a ``Case``.

Case folders are data people download and run, so every path a case names is resolved (symlinks
followed) and must stay inside the case's folder or one of the *roots* it was collected from:
a case cannot put a host file into an image or a prompt. Files are UTF-8 (a byte-order mark is
allowed); anything else is refused with the file, the field and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from .. import textio
from ..errors import CaseFormatError
from ..textio import decode_utf8, read_bounded
from .models import README_FROM_REPOSITORY, Case, CaseSpec, GoldenAnswer
from .operands import option_shaped

CASE_FILE = "case.toml"
# A case's text files are READMEs, scripts and small JSON: far larger is a mistake or an attack.
MAX_FILE_BYTES = 8 * 1024 * 1024
# A case file is a page of TOML (bounded before parsing: tomllib's cost can be quadratic).
MAX_CASE_BYTES = 1 << 20


def _problems(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "<root>"
        message = err["msg"]
        if err["type"] == "missing":
            message = "required field is missing"
        elif "input" in err and err["input"] is None:
            message = f"got null; expected a value ({err['msg'].lower()})"
        elif err["type"] == "literal_error":
            message = f"{err['msg']} (got {err.get('input')!r})"
        elif err["type"] == "extra_forbidden":
            message = "unknown field"
        out.append((prefix + field, message))
    return out


def decode_text(data: bytes, path: Path) -> str:
    """UTF-8 with an optional byte-order mark; ``ValueError`` names the file and says why not."""
    try:
        return decode_utf8(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def read_text(path: Path) -> str:
    """A case's text file: bounded in size, regular, UTF-8; ``ValueError`` or ``OSError``."""
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return decode_text(data, path)


def parse_json(text: str, path: Path) -> Any:
    """JSON whose failure (syntax or absurd nesting) is a ``ValueError`` naming the file."""
    try:
        return textio.parse_json(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def contained(path: Path, roots: Sequence[Path]) -> Path | None:
    """``path`` with symlinks resolved, if it lies inside one of ``roots``; else ``None``."""
    resolved = path.resolve()
    for root in roots:
        root = root.resolve()
        if resolved == root or root in resolved.parents:
            return resolved
    return None


def _outside(field: str, path: Path, roots: Sequence[Path]) -> tuple[str, str]:
    where = ", ".join(str(root.resolve()) for root in roots)
    return (field, f"resolves to {path.resolve()}, outside the case's folder and roots ({where})")


def _read_named(
    case_dir: Path,
    rel: str,
    field: str,
    roots: Sequence[Path],
    problems: list[tuple[str, str]],
) -> str | None:
    path = case_dir / rel
    if contained(path, [case_dir, *roots]) is None:
        problems.append(_outside(field, path, [case_dir, *roots]))
        return None
    try:
        return read_text(path)
    except FileNotFoundError:
        problems.append((field, f"file not found: {path}"))
    except IsADirectoryError:
        problems.append((field, f"expected a file, found a directory: {path}"))
    except (OSError, ValueError) as exc:
        problems.append((field, f"cannot read {path}: {exc}"))
    return None


# Remote transports git clones over; anything else (ext::, fd::, a helper's scheme) is refused.
_REMOTE_URL = re.compile(r"^(?:(?:https?|ssh|git|git\+ssh)://[^/\s]|[\w.-]+@[\w.-]+:)")


def local_url_path(url: str, case_dir: Path) -> Path | None:
    """The host path a repository URL names (``file://`` or a bare path), else ``None``: git
    clones a local path as readily as a remote, so such a URL is held to the case's roots.
    An option-shaped URL names no path (``load_case`` refuses it before asking)."""
    if option_shaped(url):
        return None
    if url.startswith("file://"):
        return Path(unquote(urlsplit(url).path) or "/")
    if "://" in url or "::" in url or _REMOTE_URL.match(url):
        return None
    return case_dir / url


def load_golden(path: Path) -> GoldenAnswer:
    """Load a golden file; ``CaseFormatError`` names the file and each invalid field."""
    try:
        data = parse_json(read_text(path), path)
    except (OSError, ValueError) as exc:
        raise CaseFormatError(str(path), [("<json>", str(exc))]) from None
    if isinstance(data, dict) and "errors" not in data:
        # ``{}`` would grade every case as "no error to find": a golden file lists its errors.
        raise CaseFormatError(str(path), [("errors", "required field is missing")])
    try:
        golden = GoldenAnswer.model_validate(data)
    except ValidationError as exc:
        raise CaseFormatError(str(path), _problems(exc)) from None
    if golden.level is not None and golden.level != len(golden.errors):
        raise CaseFormatError(
            str(path),
            [
                (
                    "level",
                    f"expected the number of errors ({len(golden.errors)}), got {golden.level}",
                )
            ],
        )
    return golden


def load_case(case_file: Path, roots: Sequence[Path] = ()) -> Case:
    """Load ``case.toml``; every problem found is reported together in one ``CaseFormatError``.

    ``roots`` are the folders the case was collected from (the project's root, the benchmark
    folder given on the command line, folders allowed by ``--allow-path``): files and
    repositories the case names must resolve inside them or inside the case's own folder.
    """
    case_dir = case_file.parent
    try:
        data = read_bounded(case_file, MAX_CASE_BYTES)
    except (OSError, ValueError) as exc:
        raise CaseFormatError(str(case_file), [("<file>", f"cannot read: {exc}")]) from None
    try:
        raw = textio.parse_toml(decode_text(data, case_file))
    except ValueError as exc:  # syntax, depth, and integers past Python's digit limit
        raise CaseFormatError(str(case_file), [("<toml>", f"not valid TOML: {exc}")]) from None
    try:
        spec = CaseSpec.model_validate(raw)
    except ValidationError as exc:
        raise CaseFormatError(str(case_file), _problems(exc)) from None

    problems: list[tuple[str, str]] = []
    readme = (
        _read_named(case_dir, spec.readme, "readme", roots, problems)
        if spec.readme is not None
        else ""
    )
    original = (
        _read_named(case_dir, spec.original_readme, "original_readme", roots, problems)
        if spec.original_readme
        else None
    )
    setup = (
        _read_named(case_dir, spec.golden_setup, "golden_setup", roots, problems)
        if spec.golden_setup
        else None
    )
    golden = GoldenAnswer()
    if spec.golden:
        golden_path = case_dir / spec.golden
        if contained(golden_path, [case_dir, *roots]) is None:
            problems.append(_outside("golden", golden_path, [case_dir, *roots]))
        elif not golden_path.is_file():
            problems.append(("golden", f"file not found: {golden_path}"))
        else:
            try:
                golden = load_golden(golden_path)
            except CaseFormatError as exc:
                problems += [(f"golden ({golden_path.name}): {f}", m) for f, m in exc.problems]
    if spec.repository.kind in ("folder", "git"):
        repo_path = case_dir / str(spec.repository.path)
        if contained(repo_path, [case_dir, *roots]) is None:
            problems.append(_outside("repository.path", repo_path, [case_dir, *roots]))
        elif not repo_path.is_dir():
            problems.append(("repository.path", f"directory not found: {repo_path}"))
    revision = spec.repository.revision
    if revision is not None and option_shaped(str(revision)):
        problems.append(
            ("repository.revision", f"{revision!r}: a revision cannot begin with '-' (git option)")
        )
    layer = spec.environment
    for index, package in enumerate(layer.apt_packages if layer is not None else []):
        if option_shaped(package):
            problems.append(
                (
                    f"environment.apt_packages.{index}",
                    f"{package!r}: a package name cannot begin with '-' (apt-get option)",
                )
            )
    if spec.repository.kind == "url" and spec.repository.url:
        local = local_url_path(spec.repository.url, case_dir)
        if option_shaped(spec.repository.url):
            # git would read it as an option: --upload-pack=CMD runs CMD on this host.
            problems.append(
                (
                    "repository.url",
                    f"{spec.repository.url!r}: a URL cannot begin with '-' (git would read it "
                    "as an option)",
                )
            )
        elif local is not None and contained(local, [case_dir, *roots]) is None:
            problems.append(_outside("repository.url", local, [case_dir, *roots]))
        elif local is None and not _REMOTE_URL.match(spec.repository.url):
            problems.append(
                (
                    "repository.url",
                    f"{spec.repository.url!r}: expected an https, http, ssh or git URL "
                    "(or user@host:path)",
                )
            )
    if problems:
        raise CaseFormatError(str(case_file), problems)
    assert readme is not None
    if spec.readme is None and README_FROM_REPOSITORY not in spec.tags:
        # A kind that needs no README file (aec): the agent reads the repository's own.
        spec = spec.model_copy(update={"tags": [*spec.tags, README_FROM_REPOSITORY]})
    return Case(
        spec=spec,
        case_dir=case_dir,
        readme_text=readme,
        original_readme_text=original,
        golden=golden,
        golden_setup_text=setup,
    )
