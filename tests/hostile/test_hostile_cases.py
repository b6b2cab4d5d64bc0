"""Case files, golden files, budgets, sidecars and subset files, as an attacker or a careless
user writes them: each is refused naming the file (and the field), or documented as accepted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dataset_factory import GOLDEN_ERROR
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_enconda import discovery
from pytest_enconda.artifacts import MAX_NAME_CHARS, safe_name
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Budgets
from pytest_enconda.cases.sidecar import SidecarError, read_sidecar
from pytest_enconda.errors import CaseFormatError
from pytest_enconda.report.audit_files import read_subset

EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
GOOD_TOML = (
    'id = "{id}"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
    'test_command = "true"\n[repository]\nkind = "folder"\npath = "repo"\n'
)


def case_folder(root: Path, name: str, toml: bytes | None = None) -> Path:
    folder = root / name
    (folder / "repo").mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text("# readme\n")
    (folder / "golden.json").write_text(json.dumps({"errors": [GOLDEN_ERROR]}))
    body = toml if toml is not None else GOOD_TOML.format(id=name).encode()
    (folder / "case.toml").write_bytes(body)
    return folder / "case.toml"


def check_case(attempt, root: Path, data: bytes, kind: str = "case.toml") -> None:
    """The bad file is collected and refused by name, or is another tool's file; the good case
    beside it still loads."""
    bad = case_folder(root, "bad", data)
    good = case_folder(root, "good")
    collected, _ = attempt(kind, lambda: discovery.is_case_file(bad), ())
    if collected:
        _, error = attempt(kind, lambda: load_case(bad, [root]), (CaseFormatError,))
        assert error is None or str(bad) in str(error)
    attempt(kind, lambda: discovery.case_repository_dirs([root]), ())
    assert load_case(good, [root]).id == "good"


ADVERSARIAL_TOML = [
    b"",
    b"\x00\x00\x00",
    "suite = 'diagnosis'".encode("utf-16"),
    b'"suite" = "diagnosis"\n',
    b"# " + b"x" * 70_000 + b"\nsuite = 'diagnosis'\n",
    b"suite = 'diagnosis'\ntitle = " + b"9" * 5000 + b"\n",
    b"suite = 'diagnosis'\n[budgets]\nagent_seconds = " + b"1" * 4400 + b"\n",
    b"suite = 'diagnosis'\n" + b"a." * 20_000 + b"b = 1\n",
    b"suite = 'diagnosis'\n[" + b"a." * 20_000 + b"b]\n",
    b"suite = 'diagnosis'\nx = " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
    b"suite = 'diagnosis'\nx = " + b"{a=" * 5_000 + b"1" + b"}" * 5_000 + b"\n",
    b"suite = 'diagnosis'\n" + b"x" * (2 << 20),
    b"\xff\xfe\xfd suite =",
]


@pytest.mark.parametrize("data", ADVERSARIAL_TOML, ids=range(len(ADVERSARIAL_TOML)))
def test_adversarial_case_toml(attempt, tmp_path: Path, data: bytes) -> None:
    check_case(attempt, tmp_path, data)


@EXAMPLES
@given(data=st.binary(max_size=2000))
def test_random_bytes_as_case_toml(attempt, tmp_path_factory, data: bytes) -> None:
    check_case(attempt, tmp_path_factory.mktemp("c"), b"suite = 'diagnosis'\n" + data)


@EXAMPLES
@given(extra=st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=5))
def test_random_tables_in_case_toml(attempt, tmp_path_factory, extra: dict[str, str]) -> None:
    lines = "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in extra.items())
    root = tmp_path_factory.mktemp("c")
    check_case(
        attempt, root, (GOOD_TOML.format(id="bad").replace("[repo", lines + "[repo")).encode()
    )


def test_a_fifo_as_case_toml_or_readme_is_refused(attempt, tmp_path: Path) -> None:
    fifo_case = case_folder(tmp_path, "bad")
    fifo_case.unlink()
    os.mkfifo(fifo_case)
    assert discovery.is_case_file(fifo_case)
    _, error = attempt("case.toml", lambda: load_case(fifo_case, [tmp_path]), (CaseFormatError,))
    assert error is not None and "not a regular file" in str(error)
    readme_case = case_folder(tmp_path, "readme")
    (readme_case.parent / "README.md").unlink()
    os.mkfifo(readme_case.parent / "README.md")
    _, error = attempt("README", lambda: load_case(readme_case, [tmp_path]), (CaseFormatError,))
    assert error is not None and "readme" in str(error) and "not a regular file" in str(error)


def test_a_folder_link_loop_in_a_case_folder_is_not_walked(tmp_path: Path) -> None:
    case = case_folder(tmp_path, "one")
    loop = case.parent / "repo" / "loop"
    loop.symlink_to(case.parent)
    assert discovery.is_link_loop(loop)
    assert not discovery.is_link_loop(case.parent / "repo")


@pytest.mark.parametrize(
    ("golden", "field"),
    [
        ({}, "errors"),
        ({"errors": [GOLDEN_ERROR, GOLDEN_ERROR]}, "errors.1: the same error as errors.0"),
        ({"errors": [{**GOLDEN_ERROR, "error_type": "E99"}]}, "errors.0.error_type"),
        ({"errors": "E4"}, "errors"),
    ],
)
def test_labelling_faults_in_golden_json_are_refused(
    attempt, tmp_path: Path, golden: dict, field: str
) -> None:
    case = case_folder(tmp_path, "bad")
    (case.parent / "golden.json").write_text(json.dumps(golden))
    _, error = attempt("golden.json", lambda: load_case(case, [tmp_path]), (CaseFormatError,))
    assert error is not None and "golden.json" in str(error) and field in str(error)


@EXAMPLES
@given(seconds=st.floats(allow_nan=True, allow_infinity=True))
@example(0.001)
@example(1e-300)
@example(0.0)
@example(-1.0)
def test_budgets_below_a_second_or_absurd_are_refused(attempt, seconds: float) -> None:
    budgets, error = attempt(
        "budget", lambda: Budgets.model_validate({"setup_seconds": seconds}), (ValidationError,)
    )
    if 1 <= seconds <= 7 * 24 * 3600:
        assert error is None and budgets.setup_seconds == seconds
    else:
        assert error is not None and "setup_seconds" in str(error)


@pytest.mark.parametrize("url", ["file:///etc", "/etc", "../../../../../etc", "ext::sh -c id"])
def test_a_local_or_odd_repository_url_is_refused(attempt, tmp_path: Path, url: str) -> None:
    toml = GOOD_TOML.format(id="bad").replace(
        'kind = "folder"\npath = "repo"',
        f'kind = "url"\nurl = {json.dumps(url)}\nrevision = "main"',
    )
    case = case_folder(tmp_path, "bad", toml.encode())
    _, error = attempt("repository url", lambda: load_case(case, [tmp_path]), (CaseFormatError,))
    assert error is not None and "repository.url" in str(error)


def test_a_local_repository_url_inside_an_allowed_root_is_accepted(tmp_path: Path) -> None:
    allowed = tmp_path / "mirror"
    allowed.mkdir()
    toml = GOOD_TOML.format(id="ok").replace(
        'kind = "folder"\npath = "repo"', f'kind = "url"\nurl = "file://{allowed}"\nrevision = "m"'
    )
    case = case_folder(tmp_path / "cases", "ok", toml.encode())
    assert load_case(case, [tmp_path / "cases", allowed]).spec.repository.url


@EXAMPLES
@given(case_id=st.text(min_size=1, max_size=600))
def test_long_case_ids_give_short_distinct_folder_names(case_id: str) -> None:
    name = safe_name(case_id)
    assert len(name.encode()) <= MAX_NAME_CHARS and "/" not in name
    assert safe_name(case_id + "x") != name


HOSTILE_JSON_FILES = [
    b"",
    b"\xff\xfe{\x00}\x00",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"format": ' * 3000 + b"1" + b"}" * 3000,
    b"not json",
    b'{"verified_subset": [1, 2]}',
]


@pytest.mark.parametrize("data", HOSTILE_JSON_FILES, ids=range(len(HOSTILE_JSON_FILES)))
def test_hostile_sidecars_and_subsets_are_refused(attempt, tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(data)
    _, error = attempt("sidecar", lambda: read_sidecar(path), (SidecarError,))
    assert error is not None and str(path) in str(error)
    _, error = attempt("subset", lambda: read_subset(path), (ValueError,))
    assert error is None or str(path) in str(error)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_special_files_as_sidecar_subset_or_report(attempt, tmp_path: Path, special: str) -> None:
    from pytest_enconda.grading.pyramid import SelfReportError, load_self_report

    path = tmp_path / "special"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path(special)
    _, error = attempt("sidecar", lambda: read_sidecar(path), (SidecarError,))
    assert error is not None and "not a regular file" in str(error)
    _, error = attempt("subset", lambda: read_subset(path), (ValueError,))
    assert error is not None and "not a regular file" in str(error)
    _, error = attempt("self-report", lambda: load_self_report(path), (SelfReportError,))
    assert error is not None and "not a regular file" in str(error)
    from pytest_enconda.pipeline import read_report

    report, _ = attempt("self-report", lambda: read_report(path), ())  # --report
    assert report is not None and "not a regular file" in report["__invalid__"]


@pytest.mark.parametrize(("took", "scale", "refused"), [(1200.0, 1.0, True), (1200.0, 2.0, False)])
def test_a_budget_shorter_than_the_golden_setup_took_is_a_harness_error(
    attempt, tmp_path: Path, took: float, scale: float, refused: bool
) -> None:
    """The sidecar records how long the reference setup took; a case budget below it would
    time out a correct script, so the execution item is the harness's error, not the agent's."""
    from dataset_factory import one_instance_dataset

    from pytest_enconda.cases.enconda_import import load_dataset
    from pytest_enconda.cases.sidecar import SIDECAR_NAME, RepoVerification
    from pytest_enconda.errors import HarnessError
    from pytest_enconda.probing.execution import run_execution, setup_budget_problem
    from pytest_enconda.records import CaseDir

    record = RepoVerification(
        repository="o/a",
        revision="abc",
        status="verified",
        test_command="pytest",
        reference_setup="pip install .\n",
        reference_source="agent:readme",
        pass_set=["t::a"],
        timings={"agent-readme_setup_s": took, "recipe_setup_s": 5000.0},
    )
    data = one_instance_dataset(tmp_path, record)
    (case,) = load_dataset(data).cases
    assert case.reference is not None and case.reference.setup_seconds == took
    assert case.spec.budgets.setup_seconds == 900
    problem = setup_budget_problem(case, scale)
    if not refused:
        assert problem is None
        return
    assert problem is not None and "budgets.setup_seconds (900 s)" in problem
    assert f"({took:g} s, {data / SIDECAR_NAME})" in problem
    # Refused before any box is started: no backend is needed to say so.
    case_dir = CaseDir(tmp_path / "run", case.id)
    _, error = attempt(
        "budget", lambda: run_execution(None, "img", case, "", case_dir), (HarnessError,)
    )
    assert error is not None and str(error) == problem


# Values of every TOML type (and absurd ones) for the fields a case.toml names.
TOML_SCALARS = (
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | st.booleans()
)
TOML_VALUES = TOML_SCALARS | st.lists(TOML_SCALARS, max_size=3)
TOP_FIELDS = ["id", "suite", "title", "readme", "readme_target", "golden", "golden_setup",
              "test_command", "base_image", "tags", "original_readme"]  # fmt: skip
TABLE_FIELDS = {
    "budgets": ["agent_seconds", "setup_seconds", "test_seconds", "agent_steps"],
    "repository": ["kind", "path", "url", "revision"],
    "research": ["entry_point", "frameworks", "gpus"],
}


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if value != value
            else ("inf" if value > 0 else "-inf")
            if abs(value) == float("inf")
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    # A TOML basic string: JSON's escapes, minus surrogate pairs and a raw DEL.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


@EXAMPLES
@given(
    top=st.dictionaries(st.sampled_from(TOP_FIELDS), TOML_VALUES, max_size=4),
    table=st.sampled_from(sorted(TABLE_FIELDS)),
    fields=st.data(),
)
def test_wrong_types_in_known_fields_name_the_field(
    attempt, tmp_path_factory, top: dict, table: str, fields
) -> None:
    """Generated case.toml files with any value in any known field: each is accepted or refused
    naming the file and a field it changed, and the good case beside it still loads."""
    inner = fields.draw(
        st.dictionaries(st.sampled_from(TABLE_FIELDS[table]), TOML_VALUES, max_size=3)
    )
    base = {"id": "bad", "suite": "diagnosis", "readme": "README.md", "golden": "golden.json",
            "test_command": "true", **top}  # fmt: skip
    tables = {"repository": {"kind": "folder", "path": "repo"}, table: {}}
    tables[table] = {**tables.get(table, {}), **inner}
    text = "".join(f"{key} = {toml_value(value)}\n" for key, value in base.items())
    for name, values in tables.items():
        text += f"[{name}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in values.items())
    root = tmp_path_factory.mktemp("c")
    bad = case_folder(root, "bad", text.encode())
    good = case_folder(root, "good")
    _, error = attempt("case.toml (generated)", lambda: load_case(bad, [root]), (CaseFormatError,))
    if error is not None:
        message = str(error)
        assert str(bad) in message
        # Problems are lines under the file's name, "  FIELD...: why" (a table's "table.field"),
        # or for a rule across fields "  <root>: ... 'FIELD'": one names a field the example set.
        problems = "\n".join(message.splitlines()[1:])
        assert any(field in problems for field in {*top, table}), message
    assert load_case(good, [root]).id == "good"
