"""``import-msb`` on Multi-SWE-bench records as a broken download or an attacker writes them:
each bad record costs only itself, named by file and line; every case written loads; a file
of any size costs a line's memory; nothing the loader refuses is left in OUT."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_command
from pytest_enconda.aec import msb_import
from pytest_enconda.aec.msb_import import MAX_LINE_BYTES, import_instances
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import MAX_PASS_SET
from pytest_enconda.cli import main

EXAMPLES = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def record(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "org": "acme",
        "repo": "calc",
        "number": 12,
        "base": {"label": "acme:main", "ref": "main", "sha": "0" * 40},
        "title": "divide truncates",
        "fix_patch": "",
        "p2p_tests": {"TestAdd": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
    }
    base.update(overrides)
    return base


def line(value: object) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def check_import(attempt, folder: Path, bad: bytes, kind: str = "msb record") -> list[str]:
    """``bad`` between two good records: both good ones are imported, whatever ``bad`` is; a
    problem for it names its line; every case folder in OUT loads; no staging folder is left."""
    source = folder / "go" / "i.jsonl"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(b"\n".join([line(record(number=1)), bad, line(record(number=2))]) + b"\n")
    out = folder / "out"
    (imported, problems), _ = attempt(kind, lambda: import_instances(source, out), ())
    ids = [item.case_id for item in imported]
    assert ids[0] == "acme__calc-1" and ids[-1] == "acme__calc-2", problems
    assert all(problem.startswith(f"{source}:2: ") for problem in problems), problems
    folders = sorted(path for path in out.iterdir())
    assert [path.name for path in folders] == sorted(ids)  # no staging left, no stray folder
    for path in folders:
        assert load_case(path / "case.toml").id == path.name
    return problems


HUGE_NUMBER = (
    b'{"org": "a", "repo": "b", "number": ' + b"9" * 5000 + b', "base": {"sha": "0abcdef"}}'
)
BAD_RECORDS: list[tuple[bytes, str]] = [
    (HUGE_NUMBER, "not JSON: "),
    (line(record(number=10**40)), "number:"),
    (line(record(number=-1)), "number:"),
    (line(record(number=1.5)), "number:"),
    (line(record(number=True)), ""),  # a bool is 1 to pydantic's lax int: a case, or refused
    (line(record(org="a" * 300)), "org:"),
    (line(record(org="../../x")), "org:"),
    (line(record(org="-x")), "org:"),
    (line(record(repo="calc/../../etc")), "repo:"),
    (line(record(base={"sha": "-x"})), "base.sha:"),
    (line(record(base={"sha": "z" * 40})), "base.sha:"),
    (line(record(base=None)), "base:"),
    (line(record(p2p_tests=["a", "b"])), "p2p_tests:"),
    (line(record(p2p_tests={"bad\x7fname": {}})), "p2p_tests."),
    (line(record(p2p_tests={"nul\x00name": {}})), "p2p_tests."),
    (line(record(p2p_tests={"": {}})), "a test name must not be empty"),
    (line(record(p2p_tests={"   ": {}})), "a test name must not be empty"),
    (line(record(p2p_tests={"t" * 70_000: {}})), "p2p_tests."),
    (
        b'{"org": "acme", "repo": "calc", "number": 7, "base": {"sha": "0abcdef"}, '
        b'"p2p_tests": {"x\\ud800": {}}}',
        "p2p_tests.",
    ),
    (
        b'{"org": "acme", "repo": "calc", "number": 7, "base": {"sha": "0abcdef"}, '
        b'"language": "\\udfff"}',
        "language",
    ),
    (line(record(language="cobol")), ""),  # the folder (go) decides
    (b"[" * 100_000, "not JSON: nested too deeply"),
    (b"{" * 50_000, "not JSON: "),
    (b"\xff\xfe\x00 not utf-8", "not UTF-8"),
    (b"\xc0\xaf", "not UTF-8"),
    (b"[]", "Input should be"),
    (b'"a string"', "Input should be"),
    (b"null", "Input should be"),
    (b"5", "Input should be"),
    (b"garbage", "not JSON: "),
    (b'{"org": "acme", "repo": "calc", "number": 1, "base": {"sha": "0abcdef"}}', "listed twice"),
    (line(record(number=7, fix_patch=json.loads("[" * 900 + "]" * 900))), ""),
    (line(record(number=7, title="\ud800 is not text")), ""),  # not used: imported as it is
]


@pytest.mark.parametrize(("bad", "said"), BAD_RECORDS, ids=range(len(BAD_RECORDS)))
def test_a_bad_record_costs_only_itself(attempt, tmp_path: Path, bad: bytes, said: str) -> None:
    problems = check_import(attempt, tmp_path, bad)
    if said:
        assert len(problems) == 1 and said in problems[0], problems


def test_a_pass_set_over_the_loaders_limit_is_refused_with_its_field(
    attempt, tmp_path: Path
) -> None:
    tests = {f"T{number}": {} for number in range(MAX_PASS_SET + 1)}
    (problem,) = check_import(attempt, tmp_path, line(record(number=7, p2p_tests=tests)))
    assert "p2p_tests: Dictionary should have at most 100000 items" in problem


def test_a_line_over_the_cap_is_skipped_unread(attempt, tmp_path: Path) -> None:
    long = b'{"org": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}'
    (problem,) = check_import(attempt, tmp_path, long)
    assert f"longer than {MAX_LINE_BYTES} bytes" in problem


def test_a_case_the_loader_would_refuse_never_reaches_out(
    attempt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staging guard itself: a case file the model let through but the loader refuses (a
    future field, a writer bug) is a problem, and OUT keeps only cases that load."""
    written = msb_import.case_toml

    def broken(instance, language, reference=None):  # type: ignore[no-untyped-def]
        text = written(instance, language, reference)
        return text.replace('suite = "aec"', 'suite = "nonsense"') if instance.number == 7 else text

    monkeypatch.setattr(msb_import, "case_toml", broken)
    (problem,) = check_import(attempt, tmp_path, line(record(number=7)))
    assert "the case it makes would be refused: suite:" in problem


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=()), max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=8), inner, max_size=3
        )
    ),
    max_leaves=8,
)
FIELDS = ["org", "repo", "number", "base", "language", "p2p_tests", "title"]


@EXAMPLES
@given(field=st.sampled_from(FIELDS), value=json_values)
def test_any_value_of_a_field_costs_only_its_record(
    attempt, tmp_path_factory, field: str, value: object
) -> None:
    folder = tmp_path_factory.mktemp("msb")
    bad = json.dumps(record(**{"number": 7, field: value})).encode()  # ascii: surrogates escaped
    check_import(attempt, folder, bad, "msb generated record")


@EXAMPLES
@given(name=st.text(st.characters(exclude_categories=()), max_size=40))
def test_any_test_name_is_imported_loadable_or_refused(
    attempt, tmp_path_factory, name: str
) -> None:
    folder = tmp_path_factory.mktemp("msb")
    bad = json.dumps(record(number=7, p2p_tests={name: {}})).encode()
    problems = check_import(attempt, folder, bad, "msb generated record")
    imported = (folder / "out" / "acme__calc-7" / "case.toml").exists()
    assert imported != bool(problems)
    if imported:
        reference = load_case(folder / "out" / "acme__calc-7" / "case.toml").spec.aec.reference  # type: ignore[union-attr]
        assert reference is not None and reference.pass_set == [name]


@EXAMPLES
@given(data=st.binary(max_size=200))
def test_any_bytes_cost_only_their_line(attempt, tmp_path_factory, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("msb")
    check_import(attempt, folder, data.replace(b"\n", b" ").replace(b"\r", b" "), "msb bytes")


def test_a_huge_sparse_file_costs_a_line_of_memory(attempt, tmp_path: Path) -> None:
    source = tmp_path / "go" / "sparse.jsonl"
    source.parent.mkdir()
    with source.open("wb") as handle:
        handle.seek(1 << 30)  # a gigabyte of NULs (sparse: no disk), then a good record
        handle.write(b"\n" + line(record()) + b"\n")
    (imported, problems), _ = attempt(
        "msb file", lambda: import_instances(source, tmp_path / "out"), (), attempt.whole_run
    )
    assert [item.case_id for item in imported] == ["acme__calc-12"]
    assert problems == [
        f"{source}:1: longer than {MAX_LINE_BYTES} bytes; expected one instance per line"
    ]


def test_a_million_bad_lines_are_counted_past_the_first_thousand(attempt, tmp_path: Path) -> None:
    source = tmp_path / "go" / "noise.jsonl"
    source.parent.mkdir()
    source.write_bytes(b"x\n" * 200_000)
    (imported, problems), _ = attempt(
        "msb file", lambda: import_instances(source, tmp_path / "out"), (), attempt.whole_run
    )
    assert imported == [] and len(problems) == 1_001
    assert problems[-1] == "... and 199000 more problem(s)"


# --- the command, as its own process ------------------------------------------------------


@pytest.fixture
def msb_inputs(tmp_path: Path, canary: Path) -> dict[str, Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    paths = {
        "fifo": folder / "fifo.jsonl",
        "dangling": folder / "dangling.jsonl",
        "canary": folder / "canary.jsonl",
        "folder": folder / "dir.jsonl",
        "utf16": folder / "utf16.jsonl",
        "good": folder / "go" / "good.jsonl",
        "bad": folder / "go" / "bad.jsonl",
        "deep_toml": folder / "deep.toml",
        "huge_toml": folder / "huge.toml",
        "option": folder / "-x.jsonl",
    }
    os.mkfifo(paths["fifo"])
    paths["dangling"].symlink_to(folder / "nowhere")
    paths["canary"].symlink_to(canary)
    paths["folder"].mkdir()
    paths["utf16"].write_bytes(json.dumps(record()).encode("utf-16"))
    paths["good"].parent.mkdir()
    paths["good"].write_bytes(line(record()) + b"\n")
    paths["bad"].write_bytes(b"\n".join(bad for bad, _ in BAD_RECORDS[:12]) + b"\n")
    paths["deep_toml"].write_text("a = " + "[" * 50_000)
    paths["huge_toml"].write_text("[[reference]]\norg = " + "9" * 5000 + "\n")
    paths["option"].write_bytes(line(record()) + b"\n")
    return paths


def test_the_command_on_hostile_files_exits_2_naming_them(
    tmp_path: Path, msb_inputs: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    for name in ("fifo", "dangling", "canary", "folder", "utf16"):
        argv = ["import-msb", str(msb_inputs[name]), "--out", str(out)]
        done = run_command("import-msb", argv, returncodes=(1, 2))
        if name == "canary":
            # The user's own file, named on the command line: read, and refused line by line
            # without its text being echoed.
            assert done.returncode == 1 and "not JSON" in done.stderr
            continue
        assert done.returncode == 2, done.stderr
        assert f"pytest-enconda import-msb: error: {msb_inputs[name]}" in done.stderr
    devices = run_command("import-msb", ["import-msb", "/dev/zero", "--out", str(out)])
    assert devices.returncode == 2 and "/dev/zero: not a regular file" in devices.stderr
    # A bad file among good ones: nothing is written before every file was checked.
    mixed = [str(msb_inputs["good"]), str(msb_inputs["fifo"])]
    done = run_command("import-msb", ["import-msb", *mixed, "--out", str(tmp_path / "mixed")])
    assert done.returncode == 2 and not (tmp_path / "mixed" / "acme__calc-12").exists()


def test_the_command_on_bad_options_exits_2(tmp_path: Path, msb_inputs: dict[str, Path]) -> None:
    good = str(msb_inputs["good"])
    out = str(tmp_path / "out")
    for option in ("deep_toml", "huge_toml", "fifo", "dangling", "folder"):
        done = run_command(
            "import-msb",
            ["import-msb", good, "--out", out, "--references", str(msb_inputs[option])],
        )
        assert done.returncode == 2
        assert f"--references {msb_inputs[option]}: cannot read the references" in done.stderr
    for argv in (
        ["--out", str(msb_inputs["fifo"])],
        ["--out", str(msb_inputs["good"])],
        ["--out", out, "--language", "-x"],
        ["--out", out, "--language", "cobol"],
    ):
        done = run_command("import-msb", ["import-msb", good, *argv])
        assert done.returncode == 2 and "pytest-enconda import-msb: error:" in done.stderr


def test_the_command_imports_what_it_can_and_exits_1_for_the_rest(
    tmp_path: Path, msb_inputs: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    bad = run_command(
        "import-msb", ["import-msb", str(msb_inputs["bad"]), "--out", str(out)], returncodes=(1,)
    )
    assert bad.stderr.count("problem: ") >= 10
    for path in out.iterdir():
        assert load_case(path / "case.toml").id == path.name
    # An option-shaped file name after --: a file, read as one.
    argv = ["import-msb", "--out", str(out), "--language", "go", "--", msb_inputs["option"].name]
    done = run_command("import-msb", argv, cwd=msb_inputs["option"].parent, returncodes=(0,))
    assert "acme__calc-12: go" in done.stdout


def test_exit_codes_in_process(tmp_path: Path, msb_inputs: dict[str, Path]) -> None:
    out = str(tmp_path / "out")
    assert main(["import-msb", str(msb_inputs["good"]), "--out", out]) == 0
    assert main(["import-msb", str(msb_inputs["bad"]), "--out", out]) == 1
    assert main(["import-msb", str(msb_inputs["fifo"]), "--out", out]) == 2
