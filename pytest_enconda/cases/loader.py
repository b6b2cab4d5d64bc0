"""Read a shipped case folder (``case.toml`` and the files it names) into a ``Case``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pydantic import ValidationError

from ..errors import CaseFormatError
from .models import Case, CaseSpec, GoldenAnswer

CASE_FILE = "case.toml"


def _problems(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "<root>"
        message = err["msg"]
        if err["type"] == "missing":
            message = "required field is missing"
        elif err["type"] == "literal_error":
            message = f"{err['msg']} (got {err.get('input')!r})"
        elif err["type"] == "extra_forbidden":
            message = "unknown field"
        out.append((prefix + field, message))
    return out


def _read_text(case_dir: Path, rel: str, field: str, problems: list[tuple[str, str]]) -> str | None:
    path = case_dir / rel
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append((field, f"file not found: {path}"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append((field, f"cannot read {path}: {exc}"))
    return None


def load_golden(path: Path) -> GoldenAnswer:
    """Load a golden file; ``CaseFormatError`` names the file and each invalid field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseFormatError(str(path), [("<json>", f"not valid JSON: {exc}")]) from None
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


def load_case(case_file: Path) -> Case:
    """Load ``case.toml``; every problem found is reported together in one ``CaseFormatError``."""
    case_dir = case_file.parent
    try:
        raw = tomllib.loads(case_file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CaseFormatError(str(case_file), [("<toml>", f"not valid TOML: {exc}")]) from None
    try:
        spec = CaseSpec.model_validate(raw)
    except ValidationError as exc:
        raise CaseFormatError(str(case_file), _problems(exc)) from None

    problems: list[tuple[str, str]] = []
    readme = _read_text(case_dir, spec.readme, "readme", problems)
    original = (
        _read_text(case_dir, spec.original_readme, "original_readme", problems)
        if spec.original_readme
        else None
    )
    setup = (
        _read_text(case_dir, spec.golden_setup, "golden_setup", problems)
        if spec.golden_setup
        else None
    )
    golden = GoldenAnswer()
    if spec.golden:
        golden_path = case_dir / spec.golden
        if not golden_path.is_file():
            problems.append(("golden", f"file not found: {golden_path}"))
        else:
            try:
                golden = load_golden(golden_path)
            except CaseFormatError as exc:
                problems += [(f"golden ({golden_path.name}): {f}", m) for f, m in exc.problems]
    if spec.repository.kind in ("folder", "git"):
        repo_path = case_dir / str(spec.repository.path)
        if not repo_path.is_dir():
            problems.append(("repository.path", f"directory not found: {repo_path}"))
    if problems:
        raise CaseFormatError(str(case_file), problems)
    assert readme is not None
    return Case(
        spec=spec,
        case_dir=case_dir,
        readme_text=readme,
        original_readme_text=original,
        golden=golden,
        golden_setup_text=setup,
    )
