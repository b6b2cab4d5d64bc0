"""Every command on bad input, as a user runs it: ``verify``, ``construct``, ``test-log``,
``audit``, ``regrade`` and ``compare`` given FIFOs, dangling links, links to a host file,
huge sparse files, deep JSON, bad UTF-8, lone surrogates, huge numbers, option-shaped
arguments, ``../`` owners, folders where files are expected and bad sidecars. Each exits 2
with ``pytest-enconda <cmd>: error: <input>: ...`` (or its documented code), never with a
traceback, a hang or the host file's text.

``run_command`` runs a representative set as processes; the generated bulk runs in process
(``attempt``), where a process start would cost a second each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import CANARY, run_command
from pytest_enconda.aec.testlogs import parse_test_log, read_log
from pytest_enconda.cases.sidecar import SidecarError, read_sidecar
from pytest_enconda.cli import build_parser, main
from pytest_enconda.construct.run import ConstructInputError, snapshot_folder
from pytest_enconda.construct.writer import repo_key

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
from runbuilder import build_run, standard_specs

EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture
def bad(tmp_path: Path, canary: Path) -> dict[str, Path]:
    """One of each kind of bad input file, by name."""
    folder = tmp_path / "bad"
    folder.mkdir()
    files: dict[str, bytes] = {
        "utf16": '{"format": 1}'.encode("utf-16"),
        "not_utf8": b"\xff\xfe\x00\xc0\xaf",
        "deep_json": b"[" * 100_000,
        "deep_object": b'{"a":' * 50_000,
        "huge_number": b'{"format": ' + b"9" * 5000 + b"}",
        "surrogate": b'{"format": 1, "dataset": "\\ud800", "repositories": {}}',
        "wrong_format": b'{"format": 99}',
        "not_object": b"[1, 2]",
        "empty": b"",
        "nul": b"\x00" * 64,
        "option": b"",
    }
    paths = {name: folder / f"{name}.json" for name in files}
    paths["option"] = folder / "-x.json"
    for name, data in files.items():
        paths[name].write_bytes(data)
    paths["fifo"] = folder / "fifo"
    os.mkfifo(paths["fifo"])
    paths["dangling"] = folder / "dangling"
    paths["dangling"].symlink_to(folder / "nowhere")
    paths["canary"] = folder / "canary"
    paths["canary"].symlink_to(canary)
    paths["folder"] = folder / "a-folder"
    paths["folder"].mkdir()
    paths["sparse"] = folder / "sparse"
    with paths["sparse"].open("wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB of NULs, no disk
    paths["device"] = Path("/dev/zero")
    return paths


def check(
    kind: str,
    argv: list[str],
    returncodes: tuple[int, ...] = (2,),
    *,
    error: bool = True,
    **kw: object,
) -> str:
    """The command as a process: an expected exit code, and with 2 for an ``error`` the rule's
    message (test-log's 2 is also "inconclusive")."""
    done = run_command(kind, argv, returncodes=returncodes, **kw)  # type: ignore[arg-type]
    if done.returncode == 2 and error:
        assert f"pytest-enconda {argv[0]}: error: " in done.stderr, done.stderr
    return done.stderr


def in_process(
    attempt,
    kind: str,
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    seconds: float | None = None,
) -> tuple[int, str]:
    """``main(argv)`` in this process: (its exit code, argparse's SystemExit being 2, and
    what it printed on standard error); the host file's text in neither stream."""
    run = (
        (lambda: attempt(kind, lambda: main(argv), (SystemExit,), seconds))
        if seconds
        else (lambda: attempt(kind, lambda: main(argv), (SystemExit,)))
    )
    code, error = run()
    printed = capsys.readouterr()
    assert CANARY not in printed.out + printed.err
    assert "Traceback" not in printed.err
    return (2 if error is not None else code), printed.err


def refused(attempt, capsys, argv: list[str], process: bool = False, **kw: object) -> str:
    """The command exits 2 with the rule's message: in this process, or (``process``) as its
    own, as a user runs it; what it printed on standard error."""
    if process:
        return check(argv[0], argv, **kw)  # type: ignore[arg-type]
    code, stderr = in_process(attempt, argv[0], argv, capsys)
    assert code == 2 and f"pytest-enconda {argv[0]}: error: " in stderr, stderr
    return stderr


# --- verify ---------------------------------------------------------------------------------

SIDECARS = [
    "utf16", "not_utf8", "deep_json", "deep_object", "huge_number", "surrogate",
    "wrong_format", "not_object", "empty", "nul", "canary", "sparse",
]  # fmt: skip
NOT_FILES = ["fifo", "folder", "dangling", "device"]


def test_verify_refuses_bad_sidecars_and_datasets_naming_them(
    attempt, capsys, tmp_path: Path, bad: dict[str, Path]
) -> None:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    for index, name in enumerate(SIDECARS):
        argv = ["verify", str(dataset), "--out", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=index % 4 == 0)
        assert f"error: --out {bad[name]}: " in stderr
    for index, name in enumerate(NOT_FILES):
        argv = ["verify", str(dataset), "--out", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=index == 0)
        assert f"error: --out {bad[name]}: expected a file, found " in stderr
    for index, name in enumerate(("fifo", "utf16", "dangling", "canary")):
        stderr = refused(attempt, capsys, ["verify", str(bad[name])], process=index == 0)
        assert f"error: {bad[name]}: expected a dataset folder" in stderr
    refused(attempt, capsys, ["verify", "--", "-x"], process=True)
    refused(attempt, capsys, ["verify", str(dataset), "--logs", str(bad["fifo"])])
    refused(attempt, capsys, ["verify", str(dataset), "--repo", "no/such"], process=True)
    for index, option in enumerate((
        ["-n", "0"], ["-n", "9" * 5000], ["--setup-timeout", "inf"], ["--test-timeout", "-1"],
        ["--agent-setup-timeout", "nan"], ["--min-pass-share", "2"], ["--agent-option", "=x"],
        ["--agent-option", "no-equals"], ["--start-at", "as-of", "--no-as-of"],
    )):  # fmt: skip
        refused(attempt, capsys, ["verify", str(dataset), *option], process=index == 0)


@EXAMPLES
@given(data=st.binary(max_size=300) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_verify_on_any_sidecar_bytes_exits_2(
    attempt, tmp_path_factory, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    folder = tmp_path_factory.mktemp("verify")
    sidecar = folder / "sidecar.json"
    sidecar.write_bytes(data)
    # --repo no/such: even a sidecar that reads stops there, before any container.
    argv = ["verify", str(folder), "--out", str(sidecar), "--repo", "no/such"]
    code, stderr = in_process(attempt, "verify sidecar", argv, capsys)
    assert code == 2 and stderr.startswith("pytest-enconda verify: error: --")
    _, error = attempt("verify sidecar", lambda: read_sidecar(sidecar), (SidecarError,))
    assert error is None or str(error).startswith(str(sidecar))


@EXAMPLES
@given(repositories=st.dictionaries(TEXT, JSON_VALUES, max_size=3))
def test_any_sidecar_record_is_read_or_refused_by_name(
    attempt, tmp_path_factory, repositories: dict[str, object]
) -> None:
    sidecar = tmp_path_factory.mktemp("sidecar") / "s.json"
    sidecar.write_text(json.dumps({"format": 1, "repositories": repositories}))
    _, error = attempt("verify sidecar", lambda: read_sidecar(sidecar), (SidecarError,))
    assert error is None or str(error).startswith(str(sidecar))


# --- construct ------------------------------------------------------------------------------


def readme_folder(root: Path, name: str = "proj", readme: bytes = b"# proj\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_bytes(readme)
    return folder


def test_construct_refuses_bad_sources_and_options_before_docker(
    attempt, capsys, tmp_path: Path, bad: dict[str, Path]
) -> None:
    good = readme_folder(tmp_path)
    out = str(tmp_path / "out")
    for index, name in enumerate(("fifo", "dangling", "canary", "utf16", "device")):
        argv = ["construct", str(bad[name]), "--out", out]
        stderr = refused(attempt, capsys, argv, process=index == 0)
        assert f"error: {bad[name]}: expected a repository folder" in stderr
    for index, name in enumerate(("fifo", "utf16", "dangling")):
        argv = ["construct", str(good), "--out", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=index == 0)
        assert f"error: --out {bad[name]}: expected a folder" in stderr
    for index, option in enumerate((
        ["--owner", "../../x"], ["--owner", "-x"], ["--owner", ""], ["--owner", "a/b"],
        ["--owner", "o" * 101], ["--levels", "0"], ["--levels", "x"], ["--levels", "9" * 5000],
        ["--types", "E9"], ["--types", "E1,,"], ["-n", "0"], ["--per-readme", "-1"],
        ["--setup-timeout", "nan"], ["--injector", "bogus"], ["--judge", "nope"],
        ["--logs", str(bad["fifo"])],
    )):  # fmt: skip
        argv = ["construct", str(good), "--out", out, *option]
        refused(attempt, capsys, argv, process=index in (0, 13))
    big = readme_folder(tmp_path, "big", b"x" * (9 << 20))
    argv = ["construct", str(big), "--out", str(tmp_path / "o-big")]
    stderr = refused(attempt, capsys, argv, process=True)
    assert f"error: {big}: its README: larger than allowed" in stderr
    spaced = readme_folder(tmp_path, "has space")
    argv = ["construct", str(spaced), "--out", str(tmp_path / "o-sp")]
    assert "cannot name a repository" in refused(attempt, capsys, argv)
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "repo_info.jsonl").write_bytes(b"[" * 100_000 + b"\n")
    refused(attempt, capsys, ["construct", str(dataset), "--out", str(tmp_path / "o-ds")])
    mirror = ["--repo-mirror", str(tmp_path)]
    argv = ["construct", str(dataset), "--out", str(tmp_path / "o-m"), *mirror]
    stderr = refused(attempt, capsys, argv, process=True)
    assert "repo_info.jsonl: line 1: expected repository and revision" in stderr
    report_out = tmp_path / "o-report"
    report_out.mkdir()
    (report_out / "construct-report.json").write_bytes(b"\xff\xfe")
    stderr = refused(attempt, capsys, ["construct", str(good), "--out", str(report_out)])
    assert "not a construct report" in stderr


def test_a_snapshot_leaves_special_files_out_and_links_unfollowed(
    attempt, tmp_path: Path, canary: Path
) -> None:
    folder = readme_folder(tmp_path)
    os.mkfifo(folder / "pipe")
    (folder / "secret").symlink_to(canary)
    (folder / "gone").symlink_to(tmp_path / "nowhere")
    (revision, notes), _ = attempt(
        "construct folder", lambda: snapshot_folder(folder, "local/proj", tmp_path / "mirror"), ()
    )
    assert len(revision) == 40 and notes == []
    git = ["git", "--git-dir", str(tmp_path / "mirror" / "local+proj" / "repo")]
    tree = subprocess.run([*git, "ls-tree", "HEAD"], capture_output=True, text=True, check=True)
    assert "pipe" not in tree.stdout and "secret" in tree.stdout
    blob = subprocess.run(
        [*git, "cat-file", "-p", "HEAD:secret"], capture_output=True, text=True, check=True
    )
    assert blob.stdout == str(canary)  # the link itself, never the host file's text


@EXAMPLES
@given(readme=st.binary(max_size=2_000) | TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_readme_is_snapshotted_or_refused_by_name(
    attempt, tmp_path_factory, readme: bytes
) -> None:
    root = tmp_path_factory.mktemp("construct")
    folder = readme_folder(root, readme=readme)
    _, error = attempt(
        "construct folder",
        lambda: snapshot_folder(folder, "local/proj", root / "mirror"),
        (ConstructInputError,),
    )
    assert error is None or str(folder) in str(error)


@EXAMPLES
@given(owner=TEXT)
@example(owner="local\n")  # `$` matches before a final newline: found by this test
def test_an_accepted_owner_is_a_safe_name(attempt, owner: str) -> None:
    parser = build_parser()
    argv = ["construct", "src", "--out", "o", "--owner", owner]
    args, error = attempt("construct owner", lambda: parser.parse_args(argv), (SystemExit,))
    if error is None:
        assert repo_key(f"{args.owner}/proj") and ".." not in args.owner


# --- test-log -------------------------------------------------------------------------------


def test_test_log_refuses_what_is_no_log_and_never_blocks(
    attempt, capsys, bad: dict[str, Path]
) -> None:
    for name in ("fifo", "folder", "dangling", "device"):
        # The FIFO as a process: it has no writer, and blocked the command for ever.
        argv = ["test-log", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=name in ("fifo", "device"))
        assert f"error: {bad[name]}: " in stderr
    # Logs of any content are read: the verdict is inconclusive (2), in a second.
    for name in ("sparse", "not_utf8", "nul", "empty", "utf16", "canary"):
        argv = ["test-log", str(bad[name]), "--json"]
        if name in ("sparse", "canary"):
            check("test-log", argv, error=False)
        else:
            code, _ = in_process(attempt, "test-log", argv, capsys)
            assert code == 2
    option = bad["option"]
    argv = ["test-log", "--json", "--", option.name]
    check("test-log", argv, cwd=option.parent, error=False)
    check("test-log", ["test-log", "-"], error=False)  # an empty standard input: inconclusive
    for code in ("9" * 5000, "-x", "1e3"):
        refused(attempt, capsys, ["test-log", str(bad["empty"]), "--exit-code", code])


@EXAMPLES
@given(
    log=st.binary(max_size=2_000),
    exit_code=st.none() | st.integers(min_value=-(2**63), max_value=2**63),
)
def test_any_log_bytes_give_a_verdict(
    attempt, tmp_path_factory, log: bytes, exit_code: int | None
) -> None:
    path = tmp_path_factory.mktemp("log") / "test.log"
    path.write_bytes(log)
    (text, truncated), _ = attempt("test-log", lambda: read_log(path), ())
    result, _ = attempt(
        "test-log", lambda: parse_test_log(text, exit_code, truncated=truncated), ()
    )
    assert result.verdict in ("success", "failure", "inconclusive")


# --- audit, regrade, compare ----------------------------------------------------------------


def test_audit_refuses_what_is_no_dataset(
    attempt, capsys, tmp_path: Path, bad: dict[str, Path]
) -> None:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    for name in ("fifo", "utf16", "dangling", "canary"):
        stderr = refused(attempt, capsys, ["audit", str(bad[name])], process=name == "fifo")
        assert f"error: {bad[name]}: expected a dataset folder" in stderr
    for name in ("fifo", "utf16", "dangling"):
        argv = ["audit", str(dataset), "--out", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=name == "fifo")
        assert f"error: --out {bad[name]}: expected a folder" in stderr
    # A dataset's own files are the loader's to refuse, each named: the audit goes on.
    for data in (b"[" * 100_000, b"\xff\xfe", b'{"repository": "' + b"a" * 100_000 + b'"}'):
        (dataset / "repo_info.jsonl").write_bytes(data)
        check("audit", ["audit", str(dataset), "--out", str(tmp_path / "audit")], (0, 2))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("runs") / "run"
    build_run(run, standard_specs())
    return run


def test_regrade_and_compare_refuse_what_is_no_run(
    attempt, capsys, tmp_path: Path, bad: dict[str, Path], run_dir: Path
) -> None:
    for name in ("fifo", "utf16", "dangling", "canary", "device"):
        process = name == "fifo"
        stderr = refused(attempt, capsys, ["regrade", str(bad[name])], process=process)
        assert f"error: {bad[name]}: expected a run directory" in stderr
        refused(attempt, capsys, ["compare", str(bad[name]), str(run_dir)], process=process)
    refused(attempt, capsys, ["regrade", str(bad["folder"])])
    for index, option in enumerate((
        ["--out", str(bad["fifo"])], ["--out", str(bad["utf16"])], ["--out", str(run_dir)],
        ["--judge", "nope"], ["--judge-concurrency", "0"], ["--judge-concurrency", "x"],
    )):  # fmt: skip
        refused(attempt, capsys, ["regrade", str(run_dir), *option], process=index == 3)
    refused(attempt, capsys, ["compare", str(run_dir)], process=True)
    for name in ("fifo", "utf16", "dangling"):
        argv = ["compare", str(run_dir), str(run_dir), "--out", str(bad[name])]
        stderr = refused(attempt, capsys, argv, process=name == "fifo")
        assert f"error: --out {bad[name]}: expected a folder" in stderr


@pytest.mark.parametrize(
    "damage",
    [
        lambda run: (run / "results.jsonl").write_bytes(b"[" * 100_000),
        lambda run: (run / "results.jsonl").write_bytes(b"\xff\xfe\xff"),
        lambda run: (run / "results.jsonl").unlink() or os.mkfifo(run / "results.jsonl"),
        lambda run: (run / "run.json").write_bytes(b'{"settings": ' + b"9" * 5000 + b"}"),
    ],
    ids=["deep results", "utf-16 results", "fifo results", "huge number run.json"],
)
def test_a_damaged_run_is_refused_in_process_and_as_a_command(
    attempt,
    tmp_path: Path,
    run_dir: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], object],
) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    damage(run)
    out = tmp_path / "out"
    for kind, argv in (
        ("regrade", ["regrade", str(run), "--out", str(out)]),
        ("compare", ["compare", str(run), str(run_dir), "--out", str(out)]),
    ):
        code, stderr = in_process(attempt, kind, argv, capsys, attempt.whole_run)
        assert code == 0 or stderr.startswith(f"pytest-enconda {kind}: error: "), stderr
        check(kind, argv, (0, 2))


# --- the rule itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "{fifo}"],
        ["construct", "{fifo}", "--out", "{out}"],
        ["test-log", "{fifo}"],
        ["audit", "{fifo}"],
        ["regrade", "{fifo}"],
        ["compare", "{fifo}", "{fifo}"],
        ["import-msb", "{fifo}", "--out", "{out}"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_command_exits_2_naming_the_input(
    attempt, tmp_path: Path, bad: dict[str, Path], capsys: pytest.CaptureFixture[str], argv
) -> None:
    filled = [part.format(fifo=bad["fifo"], out=tmp_path / "out") for part in argv]
    code, stderr = in_process(attempt, argv[0], filled, capsys)
    assert code == 2
    # The input first, then what was expected of it.
    assert stderr.startswith(f"pytest-enconda {argv[0]}: error: {bad['fifo']}: "), stderr
