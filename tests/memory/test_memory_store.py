"""The memory file: normalisation, deduplication, provenance, BM25 and the leakage guard, the
offline extractor on both trajectory formats, and the CLI over a run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.cli import main
from pytest_enconda.memory.extract import offline_triples
from pytest_enconda.memory.normalise import concrete, generalise, project_key, signature
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple
from pytest_enconda.memory.trajectories import read_trace


def step(
    kind: str, command: str = "", exit_code: int | None = None, output: str = "", thought: str = ""
) -> dict:
    return {
        "kind": kind,
        "command": command,
        "exit_code": exit_code,
        "output": output,
        "thought": thought,
    }


# The heuristic agent's steps on filesniff-e1 (shortened from a real run): the usage example
# fails on libmagic, the finding names the cause, the apt install repairs it, the rerun passes.
HEURISTIC = [
    step(
        "static",
        thought="repository: 9 files; manifests ['pyproject.toml']; project "
        "['filesniff']; requires-python >=3.11",
    ),
    step("command", "pip install -e .", 0, "Successfully installed filesniff-0.3.1 python-magic"),
    step(
        "command",
        "filesniff samples",
        1,
        "Traceback (most recent call last):\n  File "
        '"/data/project/filesniff/cli.py", line 3\nImportError: failed to find libmagic.  '
        "Check your installation",
    ),
    step(
        "finding",
        thought="E1 [missing system library]: `filesniff samples` fails with "
        "'failed to find libmagic': the README never installs libmagic. Fix: "
        "`apt-get update && apt-get install -y libmagic1`",
    ),
    step("probe", "apt-cache pkgnames libmagic", 0, "libmagic1\nlibmagic-dev"),
    step("command", "apt-get update && apt-get install -y libmagic1", 0, "Setting up libmagic1"),
    step("command", "filesniff samples", 0, "samples/a.png: image/png"),
]


def write_run(root: Path, case_id: str, steps: list[dict]) -> Path:
    agent = root / "cases" / case_id / "agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    (agent / "outcome.json").write_text(json.dumps({"agent": "heuristic", "model": None}))
    (root / "cases" / case_id / "case.json").write_text(json.dumps({"case_id": case_id}))
    return root


def test_generalise_replaces_the_source_repository_and_concrete_restores_another() -> None:
    text = "pip install filesniff==0.3.1 in /data/project/filesniff (commit 0123456789abcdef)"
    general = generalise(text, ["filesniff"])
    assert general == "pip install <project>-<version> in <workdir>/<project> (commit <hash>)"
    assert (
        concrete("cd <workdir> && <project> --help", "tabkit")
        == "cd /data/project && tabkit --help"
    )
    assert project_key("https://github.com/Org/File_Sniff.git") == project_key(
        "../repos/file-sniff"
    )


def test_signature_is_the_telling_line() -> None:
    output = (
        "Collecting x\nTraceback (most recent call last):\n  File x\n"
        "ModuleNotFoundError: No module named 'yaml'\n"
    )
    assert signature(output) == "ModuleNotFoundError: No module named 'yaml'"
    assert signature("E: Unable to locate package libfoo\n") == "E: Unable to locate package libfoo"
    assert signature("/usr/bin/python3: No module named pytest\n") == (
        "/usr/bin/python3: No module named pytest"
    )
    assert signature("all good\n") == ""


def test_offline_extractor_takes_failure_cause_and_repair_from_a_heuristic_trajectory(
    tmp_path: Path,
) -> None:
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    trace = read_trace(run / "cases" / "filesniff-e1" / "agent" / "trajectory.jsonl")
    [triple] = offline_triples(trace, ["filesniff"])
    assert triple.action == "apt-get update && apt-get install -y libmagic1"
    assert triple.error_type == "E1"
    assert triple.signature == "ImportError: failed to find libmagic.  Check your installation"
    assert "filesniff" not in triple.problem + triple.solution and "<project>" in triple.problem


# hazm's run (2026-11-27): the checkout's own GitHub install fails (no route to GitHub), the
# agent later installs pytest for the tests; git-gud's: a misspelt package corrected.
UNRELATED_PIP = [
    step(
        "command",
        "pip install git+https://github.com/roshan-research/hazm.git",
        1,
        "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool"
        "(host='github.com', port=443): Max retries exceeded",
    ),
    step("command", "python -m pytest -q", 1, "/usr/bin/python: No module named pytest"),
    step(
        "finding",
        thought="repair (not a README error) [test runner missing]: `python -m pytest -q` needs "
        "pytest, which it declares nowhere Fix: pip install pytest",
    ),
    step("command", "pip install pytest", 0, "Successfully installed pytest-8.4.2"),
    step("command", "python -m pytest -q", 0, "12 passed"),
    step(
        "command",
        "pip3 install git gud",
        1,
        "ERROR: No matching distribution found for git",
    ),
    step("command", "pip3 install gitpython gud", 0, "Successfully installed gud-1.0"),
]


def test_offline_extractor_takes_a_same_program_command_as_a_repair_only_when_it_corrects_it(
    tmp_path: Path,
) -> None:
    run = write_run(tmp_path / "run", "hazm-1", UNRELATED_PIP)
    trace = read_trace(run / "cases" / "hazm-1" / "agent" / "trajectory.jsonl")
    triples = offline_triples(trace, ["hazm"])
    # `pip install pytest` repairs the test run (its finding names it), not the GitHub install;
    # `pip3 install gitpython gud` keeps an operand of the failed install: its corrected form.
    assert sorted(t.action for t in triples) == ["pip install pytest", "pip3 install gitpython gud"]
    assert not any("github" in t.problem for t in triples)


def test_offline_extractor_reads_mini_swe_agent_trajectories(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant"},
        {"role": "assistant", "content": "Run the tests.\n```bash\npython -m pytest -q\n```"},
        {
            "role": "user",
            "content": "<returncode>1</returncode>\n<output>\nE   ModuleNotFoundError: "
            "No module named 'yaml'\nModuleNotFoundError: No module named 'yaml'\n</output>",
        },
        {"role": "assistant", "content": "PyYAML is missing.\n```bash\npip install pyyaml\n```"},
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>\nSuccessfully installed\n</output>",
        },
        {"role": "assistant", "content": "Again.\n```bash\npython -m pytest -q\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n3 passed\n</output>"},
    ]
    path = tmp_path / "case-1.traj.json"
    path.write_text(
        json.dumps(
            {
                "messages": messages,
                "trajectory_format": "mini-swe-agent-1",
                "info": {"config": {"model": {"model_name": "m1"}}},
            }
        )
    )
    trace = read_trace(path)
    assert (trace.format, trace.model) == ("mini-swe-agent", "m1")
    [triple] = offline_triples(trace)
    assert triple.action == "pip install pyyaml"
    assert triple.signature == "ModuleNotFoundError: No module named 'yaml'"


def test_store_deduplicates_keeps_provenance_and_guards_against_leakage(tmp_path: Path) -> None:
    triple = Triple(
        "`x` fails: E: Unable to locate package libmagic1",
        "lists empty",
        "apt-get update",
        "E: Unable to locate package libmagic1",
        "E6",
    )
    with MemoryStore(tmp_path / "m.db") as store:
        first, new = store.add(
            triple, Provenance("filesniff-e1", "r1", "heuristic", "", "filesniff")
        )
        again, new_again = store.add(
            triple, Provenance("tabkit-e1", "r1", "heuristic", "", "org/TabKit.git")
        )
        other, _ = store.add(
            Triple(
                "`y` fails: No module named 'yaml'",
                "extra missing",
                'pip install -e ".[yaml]"',
                "No module named 'yaml'",
            )
        )
        assert (new, new_again, first == again, other != first) == (True, False, True, True)
        assert store.stats()["triples"] == 2 and store.stats()["sightings"] == 2
        [hit] = store.search("Unable to locate package libmagic1", k=1)
        assert hit.id == first and hit.projects == ["filesniff", "tabkit"]
        # Learnt on both repositories: a memory built without either still holds it.
        assert [
            h.id
            for h in store.search(
                "Unable to locate package libmagic1", exclude_repositories=["tabkit"]
            )
        ] == [first]
        # Withheld only from a case of the one project(s) every sighting came from.
        assert (
            store.search(
                "Unable to locate package libmagic1",
                exclude_repositories=["tabkit", "https://example.invalid/x/filesniff"],
            )
            == []
        )
        assert store.search("No module named yaml", exclude_repositories=["tabkit"]) != []
        assert store.search('"); DROP TABLE triples; -- NEAR(', k=3) == []


def test_cli_builds_shows_and_queries_a_memory_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    out = tmp_path / "memory.db"
    assert main(["memory", "build", str(run), "--out", str(out)]) == 0
    assert "1 triples extracted, 1 new" in capsys.readouterr().out
    assert main(["memory", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "1 triples from 1 cases of 1 projects (filesniff)" in shown
    assert main(["memory", "query", str(out), "failed to find libmagic", "--json"]) == 0
    given = json.loads(capsys.readouterr().out)["given"]
    assert [g["action"] for g in given] == ["apt-get update && apt-get install -y libmagic1"]
    args = ["memory", "query", str(out), "failed to find libmagic", "--json"]
    assert main([*args, "--exclude-repo", "filesniff"]) == 0
    assert json.loads(capsys.readouterr().out)["given"] == []
    # A missing file is the user's input error (2), and reading it creates nothing.
    assert main(["memory", "show", str(tmp_path / "none.db")]) == 2
    assert f"error: {tmp_path / 'none.db'}: no such file" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_build_reads_a_stopped_run_of_an_imported_instance_and_guards_its_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stopped after the agent, before grading, has no case.json: the imported case's
    folder is its escaped id (``owner+2fname+2finstance``), and the outcome names the case. Its
    trajectory is read, and its repository is ``owner/name``, not the instance's name, so the
    guard withholds the triple from the repository's other instances."""
    from pytest_enconda.artifacts import safe_name
    from pytest_enconda.memory.build import repository_of

    case_id = "acme/filesniff/error_readme_1"
    agent = tmp_path / "run" / "cases" / safe_name(case_id) / "agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.jsonl").write_text("".join(json.dumps(s) + "\n" for s in HEURISTIC))
    outcome = {"case_id": case_id, "agent": "heuristic", "model": None}
    (agent / "outcome.json").write_text(json.dumps(outcome))
    out = tmp_path / "memory.db"
    assert main(["memory", "build", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert "1 triples extracted, 1 new" in capsys.readouterr().out
    args = ["memory", "query", str(out), "failed to find libmagic", "--json"]
    assert main([*args, "--exclude-repo", "https://github.com/acme/filesniff"]) == 0
    assert json.loads(capsys.readouterr().out)["given"] == []
    assert main([*args, "--exclude-repo", "error_readme_1"]) == 0
    assert len(json.loads(capsys.readouterr().out)["given"]) == 1
    assert repository_of(case_id, None) == "acme/filesniff"
    assert repository_of("filesniff-e4-e6", None) == "filesniff"


def test_signature_of_a_failed_build_is_the_builds_exception_not_pips_wrapper() -> None:
    """pip ends every failed build with ``error: subprocess-exited-with-error``: read as an
    exception it hid the build's own error, so every failed build had one signature."""
    output = (
        "  Getting requirements to build wheel: finished with status 'error'\n"
        "  error: subprocess-exited-with-error\n"
        '        File "/tmp/pip-build-env-x/setuptools_scm/_get_version_impl.py", line 306\n'
        "          raise LookupError(error_msg)\n"
        "      LookupError: setuptools-scm was unable to detect version for /data/project.\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: subprocess-exited-with-error\n"
    )
    assert signature(output) == (
        "LookupError: setuptools-scm was unable to detect version for /data/project."
    )
    # An exception whose message starts on its next line (versioningit, cclib's build).
    versioningit = (
        '        File "/tmp/pip-build-env-x/versioningit/hook.py", line 28\n'
        "          raise RuntimeError(\n"
        "      RuntimeError:\n"
        "      versioningit could not find a version for the project in /data/project!\n"
        "      \n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
    )
    assert signature(versioningit) == (
        "RuntimeError: versioningit could not find a version for the project in /data/project!"
    )
    # Without an exception, pip's own lines still say what failed.
    assert signature("error: externally-managed-environment\n") == (
        "error: externally-managed-environment"
    )
    assert (
        signature(
            "ERROR: Ignored the following versions: 1.0\n"
            "ERROR: No matching distribution found for gud\n"
        )
        == "ERROR: No matching distribution found for gud"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("asdf-format+2fasdf+2ferror_readme_merge_k3", "asdf-format/asdf/error_readme_merge_k3"),
        ("filesniff-e1", "filesniff-e1"),
        ("+2edot+2bplus", ".dot+plus"),
        ("bad+ffbyte", "bad+ffbyte"),  # not UTF-8: the name itself
        ("a+2Fb", "a+2Fb"),  # not safe_name's spelling (upper case): the name itself
    ],
)
def test_a_case_folder_without_records_names_its_case(name: str, expected: str) -> None:
    from pytest_enconda.memory.build import id_of_folder

    assert id_of_folder(name) == expected


def test_a_run_killed_during_its_agent_keeps_the_repository(tmp_path: Path) -> None:
    from pytest_enconda.memory.build import build

    # No case.json, no outcome.json: only the folder (the escaped id) names the case.
    agent = tmp_path / "run" / "cases" / "owner+2ffilesniff+2ferror_readme_1" / "agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.jsonl").write_text("".join(json.dumps(s) + "\n" for s in HEURISTIC))
    build([tmp_path / "run"], tmp_path / "m.db")
    with MemoryStore(tmp_path / "m.db") as store:
        [hit] = store.all()
    assert hit.projects == ["filesniff"]
