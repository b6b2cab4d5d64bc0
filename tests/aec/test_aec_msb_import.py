"""Multi-SWE-bench instances become AEC cases at their base commit (the dataset's record
format: org, repo, number, base.sha, p2p_tests; language from the record, flag or folder)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pytest_enconda.aec.msb_import import import_instances
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cli import main


def record(**overrides: object) -> dict:
    base = {
        "org": "acme",
        "repo": "calc",
        "number": 12,
        "state": "closed",
        "title": "divide truncates",
        "body": "",
        "base": {"label": "acme:main", "ref": "main", "sha": "0" * 40},
        "resolved_issues": [],
        "fix_patch": "",
        "test_patch": "",
        "p2p_tests": {"TestAdd": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
        "f2p_tests": {"TestDivide": {"run": "FAIL", "test": "FAIL", "fix": "PASS"}},
    }
    base.update(overrides)
    return base


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_instances_become_loadable_aec_cases(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "data" / "go" / "acme__calc_dataset.jsonl",
        [record(), record(number=13, language="Rust", p2p_tests={})],
    )
    imported, problems = import_instances(source, tmp_path / "out")
    assert problems == []
    assert [(i.case_id, i.language, i.pass_set) for i in imported] == [
        ("acme__calc-12", "go", 1),  # the folder names the language
        ("acme__calc-13", "rust", 0),  # the record does
    ]
    case = load_case(tmp_path / "out" / "acme__calc-12" / "case.toml")
    assert case.spec.suite == "aec" and case.spec.aec is not None
    assert case.spec.repository.kind == "url"
    assert case.spec.repository.url == "https://github.com/acme/calc.git"
    assert case.spec.repository.revision == "0" * 40
    assert case.spec.aec.reference is not None
    assert case.spec.aec.reference.test_command == "go test -v -count=1 ./..."
    assert case.spec.aec.reference.pass_set == ["TestAdd"]
    assert "multi-swe-bench" in case.keywords()


def test_problems_name_file_line_and_field(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "misc" / "x.jsonl",
        [
            "{not json",
            record(base={"sha": "not-a-sha"}),
            record(org="../etc"),
            record(language="cobol"),
            record(language="go"),
            record(language="go"),
        ],
    )
    imported, problems = import_instances(source, tmp_path / "out")
    assert [i.case_id for i in imported] == ["acme__calc-12"]
    text = "\n".join(problems)
    assert f"{source}:1: not JSON" in text
    assert f"{source}:2: base.sha" in text
    assert f"{source}:3: org" in text
    assert f"{source}:4: language" in text and "give --language" in text
    assert f"{source}:6: acme__calc-12 is listed twice" in text


def test_the_mirror_is_checked_for_each_base_commit(tmp_path: Path) -> None:
    repo = tmp_path / "mirror" / "acme" / "calc"
    repo.mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "go.mod").write_text("module acme/calc\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    sha = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    source = write_jsonl(
        tmp_path / "go" / "i.jsonl", [record(base={"sha": sha}), record(number=14)]
    )
    imported, problems = import_instances(source, tmp_path / "out", repo_mirror=tmp_path / "mirror")
    assert imported[0].problem == ""
    assert problems == [
        f"{source}:2: base.sha: the mirror {tmp_path / 'mirror'} has no commit {'0' * 40}"
    ]


def test_cli(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    source = write_jsonl(tmp_path / "any" / "i.jsonl", [record()])
    assert (
        main(["import-msb", str(source), "--out", str(tmp_path / "out"), "--language", "go"]) == 0
    )
    assert "acme__calc-12: go, PASS set of 1" in capsys.readouterr().out
    bad = write_jsonl(tmp_path / "any" / "bad.jsonl", [record(language="cobol")])
    assert main(["import-msb", str(bad), "--out", str(tmp_path / "out")]) == 1
