"""Bounded parsing everywhere (issue 43.2): TOML with deep dotted keys, JSON nested deep or
with numbers of thousands of digits, mini-swe-agent trajectories that hung ``memory build``
or crashed it, answers of a model, and the output files of a box (a sparse 3 GiB ``setup.sh``
beside a dangling link). Each input costs only itself: the parser's own ``ValueError`` (or a
result), in seconds and without the memory a naive reader spends, never a traceback."""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from pytest_enconda import textio
from pytest_enconda.agents.output import DIAGNOSIS, MAX_FILE_BYTES, SETUP, collect_outputs
from pytest_enconda.agents.zero_shot import parse_response
from pytest_enconda.errors import HarnessError
from pytest_enconda.memory.extract import offline_triples, parse_json_answer
from pytest_enconda.memory.store import MemoryStore
from pytest_enconda.memory.trajectories import Trace, read_trace

EXAMPLES = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def command(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """This folder's ``run_command``, from its conftest as pytest loaded it (the one whose tally
    the figures report)."""
    conftest = request.config.pluginmanager.get_plugin(str(Path(__file__).with_name("conftest.py")))
    return conftest.run_command  # type: ignore[no-any-return,union-attr]


# ----------------------------------------------------------------------------- TOML


def escaped_key(parts: int, prefix: str = "z.") -> str:
    """The reported key: ``z."\\""."\\""...`` (each part a basic string of an escaped quote)."""
    return prefix + ".".join(['"\\""'] * parts)


HOSTILE_TOML = {
    "escaped dotted keys": escaped_key(20_000) + " = 1\n",
    "escaped dotted keys, 30,000 parts": escaped_key(30_000) + " = 1\n",
    "escaped dotted table header": "[" + escaped_key(20_000, "") + "]\n",
    "escaped dotted array-of-tables header": "[[" + escaped_key(20_000, "") + "]]\n",
    "inline table dotted keys": "x = {" + ".".join(["a"] * 40_000) + " = 1}\n",
    "inline table dotted keys after a comma": "x = {y = 1, " + ".".join(["'q'"] * 40_000) + "=1}\n",
    "dotted keys with blanks around the dots": " . ".join(["a"] * 40_000) + " = 1\n",
    "deep arrays": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "deep inline tables": "x = " + "{a=" * 50_000 + "1" + "}" * 50_000 + "\n",
    "huge integer": "x = " + "1" * 5_000 + "\n",
}


@pytest.mark.parametrize("name", HOSTILE_TOML)
def test_toml_refuses_what_would_hang_or_exhaust_it(attempt, name: str) -> None:
    _, error = attempt(
        f"toml: {name}", lambda: textio.parse_toml(HOSTILE_TOML[name]), (ValueError,)
    )
    assert error is not None, f"{name} was parsed"
    assert type(error) is ValueError  # not a TOMLDecodeError, RecursionError or MemoryError


BLANK_TOML = {
    "a megabyte of blanks": " " * (1 << 20),
    "a megabyte of blank lines": "\n" * (1 << 20),
    "commas and blanks": "x = [" + ", " * 200_000 + "]\n",
}


@pytest.mark.parametrize("name", BLANK_TOML)
def test_toml_guard_reads_long_blank_runs_in_linear_time(attempt, name: str) -> None:
    """Two blank runs side by side in the guard made one long blank line cost its square."""
    attempt(f"toml: {name}", lambda: textio.parse_toml(BLANK_TOML[name]), (ValueError,))


def _basic(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(text)


KEY_PARTS = st.one_of(
    st.from_regex(r"[A-Za-z0-9_-]{1,6}", fullmatch=True).map(lambda s: (s, s)),
    st.text(alphabet='ab "\\.', max_size=6).map(lambda s: (_basic(s), s)),
    st.text(alphabet='ab ".\\', max_size=6).map(lambda s: (f"'{s}'", s)),
)
BLANKS = st.sampled_from(["", " ", "\t", "  "])


@EXAMPLES
@given(
    parts=st.lists(KEY_PARTS, min_size=65, max_size=3_000),
    blank=BLANKS,
    where=st.sampled_from(["line", "table", "inline"]),
)
def test_toml_keys_past_the_bound_are_refused_however_spelled(
    attempt, parts: list[tuple[str, str]], blank: str, where: str
) -> None:
    key = f"{blank}.{blank}".join(spelled for spelled, _ in parts)
    text = {"line": f"{key} = 1\n", "table": f"[{key}]\n", "inline": f"x = {{ {key} = 1 }}\n"}
    _, error = attempt(
        "toml: dotted keys (generated)", lambda: textio.parse_toml(text[where]), (ValueError,)
    )
    assert error is not None and "dotted parts" in str(error)


@EXAMPLES
@given(parts=st.lists(KEY_PARTS, min_size=1, max_size=textio.MAX_KEY_PARTS), blank=BLANKS)
def test_toml_keys_within_the_bound_read_as_before(
    attempt, parts: list[tuple[str, str]], blank: str
) -> None:
    key = f"{blank}.{blank}".join(spelled for spelled, _ in parts)
    data, _ = attempt(
        "toml: dotted keys within the bound", lambda: textio.parse_toml(f"{key} = 1\n"), ()
    )
    for _, name in parts:
        data = data[name]
    assert data == 1


def test_import_msb_refuses_escaped_dotted_references(command, tmp_path: Path) -> None:
    """The reported ``--references`` file (4.09 GB before): refused, naming the file."""
    references = tmp_path / "references.toml"
    references.write_text("[[reference]]\n" + escaped_key(20_000) + " = 1\n")
    instances = tmp_path / "instances.jsonl"
    instances.write_text("")
    result = command(
        "toml: escaped dotted keys (import-msb --references)",
        ["import-msb", str(instances), "--out", str(tmp_path / "out"),
         "--references", str(references)],
        returncodes=(1, 2),
    )  # fmt: skip
    assert "dotted parts" in result.stderr and str(references) in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ----------------------------------------------------------------------------- JSON

HOSTILE_JSON = {
    "deep json": "[" * 100_000 + "]" * 100_000,
    "deep objects": '{"a": ' * 100_000 + "1" + "}" * 100_000,
    "huge number": "1" * 5_000,
    "huge negative number in an object": '{"a": -' + "9" * 5_000 + "}",
    "truncated": '{"a": [1, 2',
    "bytes that are not utf-8": b'{"a": "\xff"}',
}


@pytest.mark.parametrize("name", HOSTILE_JSON)
def test_json_is_a_clean_error(attempt, name: str) -> None:
    _, error = attempt(
        f"json: {name}", lambda: textio.parse_json(HOSTILE_JSON[name]), (textio.JsonError,)
    )
    assert error is not None and str(error).startswith("not valid JSON")


class _Line(BaseModel):
    a: int


def test_json_lines_report_each_bad_line_and_keep_the_good(attempt) -> None:
    lines = [json.dumps({"a": 1}), *(v for v in HOSTILE_JSON.values() if isinstance(v, str))]
    problems: list[str] = []
    found, _ = attempt(
        "json: lines",
        lambda: list(textio.validated_lines("\n".join(lines), _Line, problems)),
        (),
    )
    assert [number for number, _ in found] == [1]
    assert len(problems) == len(lines) - 1
    assert any("nested too deeply" in p for p in problems)
    assert any("digits" in p for p in problems)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


@EXAMPLES
@given(depth=st.integers(1, 50_000), opener=st.sampled_from(["[", '{"k": ', '[{"k": ']))
def test_json_nesting_of_any_depth(attempt, depth: int, opener: str) -> None:
    closer = {"[": "]", '{"k": ': "}", '[{"k": ': "}]"}[opener]
    text = opener * depth + "0" + closer * depth
    value, error = attempt(
        "json: nesting (generated)", lambda: textio.parse_json(text), (ValueError,)
    )
    assert (value is None) == (error is not None)
    assert error is None or isinstance(error, textio.JsonError)


@EXAMPLES
@given(digits=st.integers(1, 20_000), sign=st.sampled_from(["", "-"]), value=JSON_VALUES)
def test_json_numbers_of_any_length(attempt, digits: int, sign: str, value: Any) -> None:
    text = json.dumps([value, "NUMBER"]).replace('"NUMBER"', sign + "7" * digits)
    result, error = attempt(
        "json: long numbers (generated)", lambda: textio.parse_json(text), (textio.JsonError,)
    )
    assert (error is not None) == (digits > 4_300)
    assert error is not None or result[0] == value


# ----------------------------------------------------------------------------- trajectories


def mini(messages: list[Any], info: Any = None) -> str:
    """A mini-swe-agent ``.traj.json``."""
    default = {"config": {"model": {"model_name": "m"}}}
    return json.dumps({"messages": messages, "info": default if info is None else info})


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


CHECK = "python -c 'import yaml'"
INSTALL = json.dumps({"command": "pip install pyyaml"})
GOOD_MINI = mini(
    [
        assistant(f"Check it.\n```bash\n{CHECK}\n```"),
        user(
            "<returncode>1</returncode>\n<output>\nModuleNotFoundError: No module named 'yaml'"
            "\n</output>"
        ),
        assistant("", tool_calls=[{"function": {"name": "bash", "arguments": INSTALL}}]),
        {"role": "tool", "content": "<returncode>0</returncode><output>done</output>"},
        assistant(f"```bash\n{CHECK}\n```"),
        user("<returncode>0</returncode>\n<output>\n</output>"),
    ]
)

HOSTILE_TRAJECTORIES: dict[str, str] = {
    "<output> then 20,000 spaces": mini(
        [assistant("```bash\nls\n```"), user("<returncode>1</returncode><output>" + " " * 20_000)]
    ),
    "<output> then 20,000 spaces, closed late": mini(
        [assistant("```bash\nls\n```"), user("<output>" + " " * 20_000 + "x" + " " * 20_000)]
    ),
    "an open fence then 300,000 newlines": mini([assistant("```" + "\n" * 300_000)]),
    "a fence line of 300,000 backticks": mini([assistant("`" * 300_000)]),
    "deep json": '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep json in a message": mini([assistant("x", tool_calls=[])])[:-1]
    + ', "extra": '
    + "[" * 100_000
    + "]" * 100_000
    + "}",
    "a tool call that is a string": mini([assistant("x", tool_calls=["ls"])]),
    "a tool call whose function is a list": mini([assistant("x", tool_calls=[{"function": [1]}])]),
    "tool calls that are an object": mini([assistant("x", tool_calls={"function": {}})]),
    "tool call arguments that are a list": mini(
        [assistant("x", tool_calls=[{"function": {"arguments": "[1, 2]"}}])]
    ),
    "content that is a number": mini([assistant(5)]),  # type: ignore[arg-type]
    "a return code of 5,000 digits": mini(
        [assistant("```bash\nls\n```"), user("<returncode>" + "9" * 5_000 + "</returncode>")]
    ),
    "a command of 2 MB": mini([assistant("```bash\n" + "x" * 2_000_000 + "\n```")]),
    "json lines of the wrong type": json.dumps({"command": {"a": 1}}) + "\n",
    "json lines, deep": json.dumps({"command": "ls"}) + "\n" + "[" * 100_000 + "\n",
}


@pytest.fixture(scope="module")
def trajectories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("trajectories")
    paths = {}
    for number, (name, text) in enumerate({"good": GOOD_MINI, **HOSTILE_TRAJECTORIES}.items()):
        suffix = ".jsonl" if name.startswith("json lines") else ".traj.json"
        paths[name] = folder / f"t{number}{suffix}"
        paths[name].write_text(text)
    return paths


def test_a_good_mini_trajectory_reads_as_before(trajectories: dict[str, Path]) -> None:
    trace = read_trace(trajectories["good"])
    assert trace.format == "mini-swe-agent" and trace.model == "m"
    assert [(s.command, s.exit_code) for s in trace.steps] == [
        (CHECK, 1),
        ("pip install pyyaml", 0),
        (CHECK, 0),
    ]
    assert trace.steps[0].thought == "Check it."
    assert trace.steps[0].output == "ModuleNotFoundError: No module named 'yaml'"
    assert [t.action for t in offline_triples(trace)] == ["pip install pyyaml"]


@pytest.mark.parametrize("name", HOSTILE_TRAJECTORIES)
def test_a_hostile_trajectory_is_read_or_refused_quickly(
    attempt, trajectories: dict[str, Path], name: str
) -> None:
    trace, error = attempt(
        f"trajectory: {name}", lambda: read_trace(trajectories[name]), (ValueError,)
    )
    assert error is None or str(trajectories[name]) in str(error)
    if trace is not None:
        assert isinstance(trace, Trace)
        attempt(f"trajectory: {name} (extraction)", lambda: offline_triples(trace), ())


def test_memory_build_skips_each_bad_trajectory_and_learns_from_the_good(
    command, trajectories: dict[str, Path], tmp_path: Path
) -> None:
    memory = tmp_path / "memory.db"
    result = command(
        "trajectory: memory build",
        ["memory", "build", *map(str, trajectories.values()), "--out", str(memory)],
        returncodes=(0, 1, 2),
    )
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    for name in ("deep json", "a tool call that is a string", "json lines of the wrong type"):
        assert f"skipped: {trajectories[name]}" in said, name
    with MemoryStore(memory, readonly=True) as store:
        assert [h.action for h in store.all()] == ["pip install pyyaml"]


MESSAGE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="ab`<>/\n {}\"", max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "content", "tool_calls", "function", "arguments", "text",
                         "command", "type"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["assistant", "user", "tool", 3])},
        optional={"content": MESSAGE_VALUES, "tool_calls": MESSAGE_VALUES},
    )
    | MESSAGE_VALUES,
    max_size=6,
)


@EXAMPLES
@given(messages=MESSAGES, info=MESSAGE_VALUES)
def test_any_mini_trajectory_structure_is_read_or_refused(
    attempt, tmp_path_factory: pytest.TempPathFactory, messages: list[Any], info: Any
) -> None:
    path = tmp_path_factory.mktemp("mini") / "x.traj.json"
    path.write_text(mini(messages, info))
    trace, _ = attempt("trajectory: structure (generated)", lambda: read_trace(path), (ValueError,))
    if trace is not None:
        attempt("trajectory: structure (generated)", lambda: offline_triples(trace), ())


def test_a_run_trajectory_with_a_line_of_200_mb_is_read_line_by_line(
    attempt, tmp_path: Path
) -> None:
    """The report reads ``trajectory.jsonl`` line by line: a line without end (a sparse file)
    is passed over a chunk at a time, and the steps around it are still shown."""
    from pytest_enconda.records import CaseDir
    from pytest_enconda.report.evidence import trajectory_steps

    case = CaseDir(tmp_path / "run", "acme/x")
    case.trajectory.parent.mkdir(parents=True)
    with case.trajectory.open("wb") as handle:
        handle.write(json.dumps({"command": "ls"}).encode() + b"\n")
        handle.truncate(200 << 20)
        handle.seek(0, os.SEEK_END)
        handle.write(b"\n" + json.dumps({"command": "pwd"}).encode() + b"\n")
    steps, _ = attempt(
        "trajectory: a line of 200 MB (report)", lambda: trajectory_steps(case, None), ()
    )
    assert [step.command for step in steps] == ["ls", "pwd"]


# ----------------------------------------------------------------------------- model answers

HOSTILE_ANSWERS = {
    "a fence then a million blanks": "```" + " " * 1_000_000,
    "a million backticks": "`" * 1_000_000,
    "a fence then a million letters": "```" + "a" * 1_000_000,
    "a million brackets": "[" * 1_000_000,
    "an unclosed list of 300,000 numbers": "[1," * 300_000,
    "a json block with a 5,000 digit number": "```json\n" + "1" * 5_000 + "\n```",
    "a json block nested 100,000 deep": "```json\n" + "[" * 100_000 + "\n```",
    "many fenced braces": "```{" * 250_000,
}


@pytest.mark.parametrize("name", HOSTILE_ANSWERS)
def test_a_model_answer_is_parsed_in_linear_time(attempt, name: str) -> None:
    text = HOSTILE_ANSWERS[name]
    parsed, _ = attempt(f"answer: {name} (zero-shot)", lambda: parse_response(text), ())
    assert "json" in parsed.problems
    found, _ = attempt(f"answer: {name} (memory)", lambda: parse_json_answer(text), ())
    assert isinstance(found, dict)


# ----------------------------------------------------------------------------- box outputs


def _clear_peak() -> bool:
    """Reset the kernel's resident peak of this process (VmHWM); False where not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bytes_under(folder: Path) -> int:
    if not folder.exists():
        return 0
    return sum(p.lstat().st_size for p in folder.rglob("*"))


@pytest.fixture
def docker_box(sandbox, base_image) -> Iterator[Any]:
    from pytest_enconda.backends.base import started
    from pytest_enconda.backends.docker import DockerBackend

    backend = DockerBackend(sandbox=sandbox)
    with started(backend, base_image, case_id="t/hostile-copy", role="agent") as box:
        yield box
    backend.close()


@pytest.mark.docker
def test_a_sparse_3_gib_output_beside_a_dangling_link_is_refused_unread(
    attempt, docker_box: Any, tmp_path: Path
) -> None:
    """3.1 GB of harness memory and 3.1 GB in the run directory before: the archive's header
    says the size, and the copy stops there."""
    from pytest_enconda.sandbox.containers import MAX_COPY_OUT_BYTES

    docker_box.exec(
        "mkdir -p /enconda/output && cd /enconda/output && truncate -s 3G setup.sh"
        " && ln -s /nowhere/report.json report.json"
        " && echo '{\"detected_errors\": []}' > " + DIAGNOSIS,
        timeout=60,
    )
    measured = _clear_peak()
    base = _peak_mb()
    single = tmp_path / "single" / SETUP
    _, error = attempt(
        "box output: sparse 3 GiB file",
        lambda: docker_box.copy_out(f"/enconda/output/{SETUP}", single),
        (HarnessError,),
        seconds=60,
    )
    assert error is not None
    assert SETUP in str(error) and str(3 << 30) in str(error)
    assert str(MAX_COPY_OUT_BYTES) in str(error)
    assert not single.exists()

    folder = tmp_path / "folder"
    _, error = attempt(
        "box output: sparse 3 GiB file in a folder",
        lambda: docker_box.copy_out("/enconda/output", folder),
        (HarnessError,),
        seconds=60,
    )
    # The first member refused is named: the link or the file, as the archive lists them.
    assert error is not None and (SETUP in str(error) or "report.json" in str(error))
    assert _bytes_under(folder) < 1 << 20

    kept = tmp_path / "kept"
    outputs, _ = attempt(
        "box output: collect_outputs", lambda: collect_outputs(docker_box, kept), (), seconds=60
    )
    assert SETUP in outputs.problems and str(MAX_FILE_BYTES) in outputs.problems[SETUP]
    assert outputs.setup_script == ""
    assert outputs.diagnosis == [] and DIAGNOSIS not in outputs.problems
    assert _bytes_under(kept) < 1 << 20
    grew = _peak_mb() - base
    if measured:
        assert grew < 100, f"the harness's resident peak grew {grew:.0f} MB"
    print(f"copy_out of a sparse 3 GiB file: resident peak grew {grew:.1f} MB")


@pytest.mark.docker
def test_special_files_and_links_out_of_the_box_are_refused_by_name(
    attempt, docker_box: Any, tmp_path: Path
) -> None:
    docker_box.exec(
        "mkdir -p /out/sub && cd /out && echo a > a.txt && ln -s a.txt inside"
        " && ln -s ../../etc/passwd sub/up && mkfifo sub/pipe",
        timeout=60,
    )
    _, error = attempt(
        "box output: a link leaving the copy",
        lambda: docker_box.copy_out("/out", tmp_path / "all"),
        (HarnessError,),
    )
    assert error is not None and ("sub/up" in str(error) or "sub/pipe" in str(error))
    docker_box.exec("rm /out/sub/up", timeout=30)
    _, error = attempt(
        "box output: a FIFO",
        lambda: docker_box.copy_out("/out", tmp_path / "fifo"),
        (HarnessError,),
    )
    assert error is not None and "sub/pipe is a FIFO" in str(error)
    docker_box.exec("rm /out/sub/pipe", timeout=30)
    attempt("box output: a link within", lambda: docker_box.copy_out("/out", tmp_path / "ok"), ())
    assert os.readlink(tmp_path / "ok" / "inside") == "a.txt"
    assert (tmp_path / "ok" / "a.txt").read_text() == "a\n"
