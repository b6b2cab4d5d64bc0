"""C0 with real pyright: on this host with a real venv, and inside a container of the base image."""

from __future__ import annotations

import json
import shutil
import venv
from pathlib import Path

import pytest

from pytest_enconda.probing.imports import (
    INTERPRETER_FAILED,
    ImportsError,
    check_imports_host,
    container_pyright,
    imports_result,
    locate_pyright,
    parse_pyright_output,
    parse_scan,
)
from pytest_enconda.probing.scripts import IMPORTS_SCAN, probe_script
from pytest_enconda.sandbox.containers import BindMount

REPO = {
    "train.py": (
        "import os\nimport localmod\nimport helperpkg.sub\nimport missing_dep.layers\n"
        "from .rel import x\n"
        "def f():\n    import yaml\n"
    ),
    "localmod.py": "from another_missing import thing\n",
    # The repository's own configuration would hide every missing import: ours is used.
    "pyproject.toml": "[tool.pyright]\nreportMissingImports = false\nexclude = ['**']\n",
}


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in REPO.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def env_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding ``helperpkg`` (so it resolves there, and only there)."""
    root = tmp_path_factory.mktemp("c0env") / "env"
    venv.create(root, with_pip=False)
    (site,) = root.glob("lib/python3*/site-packages")
    (site / "helperpkg").mkdir()
    (site / "helperpkg" / "__init__.py").write_text("")
    (site / "helperpkg" / "sub.py").write_text("")
    return root / "bin" / "python"


def test_host_counts_missing_with_the_given_interpreter(tmp_path: Path, env_python: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = check_imports_host(repo, env_python)
    assert result.error is None, result.error
    assert result.names == ["another_missing", "helperpkg", "localmod", "missing_dep", "os", "yaml"]
    assert result.total == 6
    # yaml: not in the venv (typeshed's stub alone is reportMissingModuleSource).
    assert result.missing == ["another_missing", "missing_dep", "yaml"]
    assert result.missing_count == 3
    assert result.missing_imports == ["another_missing", "missing_dep.layers", "yaml"]
    assert result.outside_scan == []
    assert result.pyright_version == locate_pyright().version
    assert not result.ok


def test_the_interpreter_decides(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same repository with a bare venv: helperpkg is missing too."""
    bare = tmp_path_factory.mktemp("bare") / "env"
    venv.create(bare, with_pip=False)
    result = check_imports_host(make_repo(tmp_path / "repo"), bare / "bin" / "python")
    assert "helperpkg" in result.missing


def test_interpreter_that_does_not_run_is_an_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    fake.chmod(0o755)
    result = check_imports_host(make_repo(tmp_path / "repo"), fake)
    assert result.error_kind == "interpreter"
    assert "broken" in (result.error or "")
    assert result.missing == [] and not result.ok  # not measured, never "0 missing"
    assert "not measured" in result.summary()


def test_pyright_timeout_is_an_error(tmp_path: Path, env_python: Path) -> None:
    result = check_imports_host(make_repo(tmp_path / "repo"), env_python, timeout=0.05)
    assert result.error_kind == "timeout"
    assert not result.ok


@pytest.mark.parametrize(
    ("output", "code", "kind", "needle"),
    [
        ("", 2, "pyright", "exited with 2"),
        ("Segmentation fault", 139, "pyright", "exited with 139"),
        ("not json at all", 1, "pyright", "not its JSON"),
        ('{"generalDiagnostics": 3}', 0, "pyright", "not a list"),
        (
            '{"generalDiagnostics": [{"rule": "reportMissingImports", "message": "Importe x"}]}',
            1,
            "pyright",
            "cannot read the module name",
        ),
        ("…", None, "timeout", "timed out"),
        ("enconda-c0: /x/python: not found", INTERPRETER_FAILED, "interpreter", "does not run"),
        ('{"enconda_compact": 1, "error": "SyntaxError: x"}', 1, "pyright", "SyntaxError"),
    ],
)
def test_failures_are_errors(output: str, code: int | None, kind: str, needle: str) -> None:
    report = parse_pyright_output(output, code)
    assert report.error_kind == kind
    assert needle in (report.error or "")
    assert report.missing == []


def test_pyright_json_behind_a_warning_and_other_files() -> None:
    document = {
        "version": "1.40.2",
        "summary": {"filesAnalyzed": 2},
        "generalDiagnostics": [
            {"file": "/r/a.py", "rule": "reportMissingImports", "message": 'Import "a.b" could'},
            {"file": "/r/b.py", "rule": "reportMissingImports", "message": 'Import "zzz" could'},
            {"file": "/r/a.py", "rule": "reportMissingModuleSource", "message": 'Import "y" x'},
            {"file": "/r/a.py", "rule": "reportAttributeAccessIssue", "message": 'Import "q"'},
            {"file": "/r/a.py", "rule": "reportMissingImports", "message": 'Import ".rel" x'},
        ],
    }
    output = "(node:1) Warning: something\n" + json.dumps(document, indent=4)
    report = parse_pyright_output(output, 1, files=["/r/a.py"])
    assert report.error is None
    assert report.missing == ["a", "y"]
    assert report.files_analyzed == 2


def test_scan_document_errors_name_the_source() -> None:
    with pytest.raises(ImportsError, match="scan of x: the scan failed: boom"):
        parse_scan({"error": "boom"}, source="scan of x")
    with pytest.raises(ImportsError, match=r"scan of x: not an import scan: total"):
        parse_scan({"total": -1, "names": [], "files": 0, "unparsable": 0}, source="scan of x")
    with pytest.raises(ImportsError, match="not a JSON document"):
        parse_scan("{", source="scan of x")


def test_result_of_a_failed_pyright_is_not_zero_missing() -> None:
    scan = parse_scan({"total": 2, "names": ["b", "a"], "files": 1, "unparsable": 0})
    result = imports_result(scan, parse_pyright_output("", 2))
    assert result.error is not None and not result.ok
    assert result.names == ["a", "b"]


@pytest.mark.docker
def test_inside_a_container_of_the_base_image(tmp_path: Path, sandbox, base_image: str) -> None:
    """The host's Node and basedpyright, bind-mounted read-only; the image's python3."""
    repo = make_repo(tmp_path / "repo")
    (repo / "uses_stdlib_only.py").write_text("import json\n")
    mounts = [BindMount(source=repo, target="/data/project")]
    with sandbox.container(
        base_image, case_id="c0", role="probe", network=False, mounts=mounts
    ) as box:
        box.copy_in(probe_script(IMPORTS_SCAN), "/tmp/enconda-probe-c0/imports_scan.py")
        scanned = box.exec(
            "python3 /tmp/enconda-probe-c0/imports_scan.py /data/project", timeout=60
        )
    scan = parse_scan(scanned.output.strip().splitlines()[-1])

    results = {}
    for python in ("/usr/bin/python3", "/opt/nowhere/bin/python"):
        invocation = container_pyright(python, "/data/project", scan.paths, timeout=300)
        try:
            with sandbox.container(
                base_image,
                case_id="c0",
                role="probe",
                network=False,
                mounts=[*mounts, *invocation.mounts],
            ) as box:
                run = box.exec(invocation.command, timeout=400, workdir="/")
        finally:
            shutil.rmtree(invocation.config_dir)
        report = parse_pyright_output(run.output, run.exit_code, duration=run.duration)
        results[python] = imports_result(scan, report, python=python)

    found = results["/usr/bin/python3"]
    assert found.error is None, found.error
    assert found.names == [
        "another_missing",
        "helperpkg",
        "json",
        "localmod",
        "missing_dep",
        "os",
        "yaml",
    ]
    # Debian's python3 has no helperpkg and no PyYAML.
    assert found.missing == ["another_missing", "helperpkg", "missing_dep", "yaml"]
    assert found.pyright_version == locate_pyright().version
    broken = results["/opt/nowhere/bin/python"]
    assert broken.error_kind == "interpreter" and not broken.ok
