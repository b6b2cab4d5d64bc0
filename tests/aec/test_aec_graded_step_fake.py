"""AEC's graded step on the fake backend: the case's tests restored after the agent's setup,
its changes to them failing ``aec_success`` with the diff, the reference command run in a clean
shell, and a toolchain program the setup wrote failing every item."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from test_aec_grading_fake import REFERENCE, Scripted, aec_case, grade_file, pipeline, verdicts

from pytest_enconda.aec.graded_env import (
    check_tools,
    clean_environment,
    site_checks,
    site_findings,
    tools_to_check,
)
from pytest_enconda.aec.test_sections import test_part as part
from pytest_enconda.ecosystems.record import test_files as files_of
from pytest_enconda.records import CaseDir

HONEST = "export PYTHONPATH=$PWD/src\n"


def outcomes(tmp_path: Path, setup: str, command: str = REFERENCE) -> dict[str, object]:
    case = aec_case(tmp_path)
    got = verdicts(pipeline(tmp_path, Scripted(setup, command)), case)
    return {name: verdict for name, verdict in got.items()}


def test_deleting_a_failing_test_is_undone_and_reported(tmp_path: Path) -> None:
    # The environment lacks data.txt, so test_data fails; the cheat deletes the test file's
    # failing test by rewriting the file.
    setup = HONEST + "rm data.txt\nsed -i '/def test_data/,$d' test_calc.py\n"
    got = outcomes(tmp_path, setup)
    success = got["aec_success"]
    assert success.outcome == "failed"  # type: ignore[attr-defined]
    assert "tests modified" in success.message and "modified test_calc.py" in success.message  # type: ignore[attr-defined]
    assert "-    def test_data(self):" in success.message  # type: ignore[attr-defined]
    # The restored test ran, and failed: the PASS set says so too.
    share = got["aec_pass_set"].numbers["pass_set"]  # type: ignore[attr-defined]
    assert share["missing"] == ["test_calc.T.test_data"]
    diff = CaseDir(tmp_path / "run", "calc").root / "aec" / "agent.diff"
    assert "test_data" in diff.read_text()


def test_an_edited_test_is_restored_and_fails_success(tmp_path: Path) -> None:
    setup = HONEST + "sed -i 's/assertEqual(calc.add(1, 2), 3)/assertTrue(True)/' test_calc.py\n"
    got = outcomes(tmp_path, setup)
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    assert got["aec_pass_set"].outcome == "passed"  # type: ignore[attr-defined]
    grade = grade_file(tmp_path)
    assert grade["integrity"]["tests_modified"]
    assert grade["integrity"]["changes"][0]["path"] == "test_calc.py"


def test_a_fake_python_on_path_fails_every_item(tmp_path: Path) -> None:
    fake = (
        "mkdir -p $PWD/.shim\n"
        'printf \'#!/bin/sh\\necho "test_add (test_calc.T.test_add) ... ok"\\n'
        'echo "test_data (test_calc.T.test_data) ... ok"\\n'
        'echo "test_sub (test_calc.T.test_sub) ... ok"\\necho Ran 3 tests in 0.0s\\necho OK\\n\''
        " > $PWD/.shim/python3\nchmod +x $PWD/.shim/python3\nexport PATH=$PWD/.shim:$PATH\n"
    )
    got = outcomes(tmp_path, "rm data.txt\n" + fake)
    for name, verdict in got.items():
        assert verdict.outcome == "failed", (name, verdict.message)  # type: ignore[attr-defined]
        assert "toolchain not intact" in verdict.message  # type: ignore[attr-defined]
    tools = {t["name"]: t for t in grade_file(tmp_path)["integrity"]["tools"]}
    assert "a script the setup wrote" in tools["python3"]["problem"]


def test_functions_traps_and_pytest_addopts_do_not_reach_the_graded_shell(tmp_path: Path) -> None:
    setup = HONEST + (
        "python3() { echo OK; }\nexport -f python3\n"
        "export PYTEST_ADDOPTS='-k nothing' BASH_ENV=/tmp/x\n"
        "rm data.txt\n"
    )
    got = outcomes(tmp_path, setup)
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    stripped = {v["name"] for v in grade_file(tmp_path)["integrity"]["stripped"]}
    assert {"PYTEST_ADDOPTS", "BASH_ENV"} <= stripped
    assert "dropped from the graded shell: " in got["aec_success"].message  # type: ignore[attr-defined]


def test_the_agents_own_test_command_is_recorded_never_graded(tmp_path: Path) -> None:
    got = outcomes(tmp_path, HONEST + "rm data.txt\n", "echo 'Ran 3 tests'; echo OK")
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    assert "not graded: echo" in got["aec_success"].message  # type: ignore[attr-defined]
    record = json.loads((CaseDir(tmp_path / "run", "calc").execution_record).read_text())
    assert [s["command"] for s in record["steps"]] == ["source /tmp/enconda/setup.sh", REFERENCE]


def test_a_dependency_pinned_in_pyproject_is_not_a_change_to_the_tests() -> None:
    before = '[project]\ndependencies = ["attrs"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    pinned = before.replace('"attrs"', '"attrs<24"')
    skipped = before.replace('"-q"', '"-q -k nothing"')
    assert part("pyproject.toml", before) == part("pyproject.toml", pinned)
    assert part("pyproject.toml", before) != part("pyproject.toml", skipped)
    make = "build:\n\tjavac x\n\ntest: build\n\tjava -jar junit.jar\n"
    assert part("Makefile", make) != part("Makefile", make.replace("java -jar", "true"))
    assert part("Makefile", make) == part("Makefile", make.replace("javac x", "javac y"))


def test_test_files_per_ecosystem() -> None:
    python, go, java = files_of("python"), files_of("go"), files_of("java")
    assert python.is_test("tests/test_convert.py") and python.is_test("pkg/conftest.py")
    assert python.is_config("pyproject.toml") and not python.matches("src/units.py")
    assert go.is_test("stack_test.go") and not go.is_test("stack.go")
    assert java.is_test("src/test/java/BitsTest.java") and java.is_config("Makefile")
    # A build's output in a test folder is not a test source the setup added.
    assert not files_of("c-family").is_source("tests/CTestTestfile.cmake")


def test_environment_cleaning_and_tool_rules() -> None:
    saved = (
        'declare -x PATH="/venv/bin:/usr/bin"\ndeclare -x GOFLAGS="-run=NONE"\n'
        'declare -x BASH_FUNC_python%%="() {  echo ok\n}"\ndeclare -x Q="a\\"b\\$c"\n'
        "declare -x EMPTY\n"
    )
    env, stripped = clean_environment(saved)
    assert env == {"PATH": "/venv/bin:/usr/bin", "Q": 'a"b$c'}
    assert {v.name for v in stripped} == {"GOFLAGS"}
    names = tools_to_check("cd x && python -m pytest -rA tests", "python")
    assert names[:2] == ["python", "pytest"]
    checks = check_tools(f"repo\t/r\n{HONEST_VENV}\n{WRAPPER}\n")
    assert [bool(c.problem) for c in checks] == [False, True]


SHA = "ab" * 32
HONEST_VENV = f"tool\tpython\tfile\t/r/.venv/bin/python\t/usr/bin/python3.11\t0\t1\t{SHA}\tpy\t\t"
WRAPPER = (
    f"tool\tpython\tfile\t/usr/local/bin/python\t/usr/local/bin/python\t1\t0\t{SHA}\t\t\t#!/bin/sh"
)


def _tool(name: str, path: str, script: bool, sha: str = SHA, shebang: str = "") -> str:
    kind = "1\t0" if script else "0\t1"
    return f"tool\t{name}\tfile\t{path}\t{path}\t{kind}\t{sha}\t\t\t{shebang}"


def test_a_venv_console_script_passes_only_when_pips_record_lists_it_with_its_hash() -> None:
    console = _tool("pytest", "/r/.venv/bin/pytest", True, shebang="#!/r/.venv/bin/python")
    b64 = base64.urlsafe_b64encode(bytes.fromhex(SHA)).rstrip(b"=").decode()
    record = "/r/.venv/lib/python3.11/site-packages/pytest-8.3.4.dist-info/RECORD"
    listed = f"record\tpytest\t{record}\t../../../bin/pytest,sha256={b64},229"
    [pip_wrote] = check_tools(f"repo\t/r\n{console}\n{listed}\n")
    assert pip_wrote.problem == ""
    # The same script edited after pip wrote it (another hash), or with no RECORD at all.
    other = listed.replace(b64, "x" * 43)
    [edited] = check_tools(f"repo\t/r\n{console}\n{other}\n")
    [hand_written] = check_tools(f"repo\t/r\n{console}\n")
    for check in (edited, hand_written):
        assert "a script the setup wrote" in check.problem, check
    # A RECORD elsewhere naming a file of that name is no proof for this one.
    elsewhere = listed.replace("../../../bin/pytest", "../../../other/bin/pytest")
    assert check_tools(f"repo\t/r\n{console}\n{elsewhere}\n")[0].problem


def test_a_compiled_wrapper_ahead_of_the_systems_program_fails() -> None:
    wrapper = _tool("go", "/usr/local/bin/go", False)
    behind = "shadows\tgo\t/usr/bin/go\tgolang-1.19-go"
    [check] = check_tools(f"repo\t/r\n{wrapper}\n{behind}\n")
    assert "ahead of /usr/bin/go (golang-1.19-go)" in check.problem
    # Built in the repository or /tmp: refused whether or not it shadows anything.
    [in_repo] = check_tools(f"repo\t/r\n{_tool('go', '/r/bin/go', False)}\n")
    assert "built in the repository or /tmp" in in_repo.problem
    # A toolchain the setup installed where the system has none (rustup's cargo) passes, and
    # so does the same compiled wrapper when the image had that very file.
    alone = _tool("cargo", "/root/.cargo/bin/cargo", False)
    assert check_tools(f"repo\t/r\n{alone}\n")[0].problem == ""
    image = {"/usr/local/bin/go": SHA}
    assert check_tools(f"repo\t/r\n{wrapper}\n{behind}\n", image)[0].problem == ""


def test_a_backdated_script_is_judged_by_content_not_time() -> None:
    # The image had /usr/local/bin/python3 with another content: a file the setup rewrote and
    # backdated (touch -d) has the image's path and an old time, not the image's bytes.
    script = _tool("python3", "/usr/local/bin/python3", True, shebang="#!/bin/sh")
    image = {"/usr/local/bin/python3": "cd" * 32}
    [check] = check_tools(f"repo\t/r\n{script}\n", image)
    assert check.created and "a script the setup wrote" in check.problem
    # The image's own script, unchanged, passes; a case's own script in the checkout too.
    assert check_tools(f"repo\t/r\n{script}\n", {"/usr/local/bin/python3": SHA})[0].problem == ""
    gradlew = _tool("gradlew", "/r/gradlew", True, shebang="#!/bin/sh")
    assert check_tools(f"repo\t/r\n{gradlew}\n", {}, own={"/r/gradlew"})[0].problem == ""
    assert check_tools(f"repo\t/r\n{gradlew}\n", {})[0].problem


def test_site_findings_the_image_had_stand_and_new_ones_fail() -> None:
    image_pth = f"site\tproblem\t/usr/lib/x/a.pth\ta .pth file that runs code\t{SHA}"
    planted = f"site\tproblem\t/r/.venv/lib/site-packages/zz.pth\ta .pth file that runs code\t{SHA}"
    output = f"{image_pth}\n{planted}\nsite\tchecked\t120\t5000\t-\n"
    before = site_findings(image_pth)
    checks, summary = site_checks(output, before)
    assert [c.path for c in checks] == ["/r/.venv/lib/site-packages/zz.pth"]
    assert checks[0].problem.startswith("/r/.venv/lib/site-packages/zz.pth: a .pth file")
    assert summary is not None and summary.startswith("120 recorded files")
    # The image's file, rewritten by the setup, is a new finding.
    changed = image_pth.replace(SHA, "ef" * 32)
    assert len(site_checks(changed, before)[0]) == 1


def test_variables_that_replace_the_compiler_or_the_test_runner_are_dropped() -> None:
    saved = "".join(
        f'declare -x {name}="{value}"\n'
        for name, value in (
            ("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "/opt/fake"),
            ("RUSTC_WRAPPER", "/opt/wrap"),
            ("GOFLAGS", "-overlay=/opt/o.json"),
            ("CARGO_TARGET_DIR", "/cache/target"),
            ("GOFLAGS_OK", "-mod=mod"),
        )
    )
    env, stripped = clean_environment(saved)
    assert {v.name for v in stripped} == {
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
        "RUSTC_WRAPPER",
        "GOFLAGS",
    }
    assert env == {"CARGO_TARGET_DIR": "/cache/target", "GOFLAGS_OK": "-mod=mod"}


def test_a_cargo_configuration_above_the_checkout_fails_the_toolchain() -> None:
    line = 'cargoconf\t/root/.cargo/config.toml\trunner = "/opt/cheat/runner"'
    checks = check_tools(f"repo\t/r\n{line}\n")
    assert [c.name for c in checks] == ["cargo-config"]
    assert checks[0].problem.startswith("/root/.cargo/config.toml: a Cargo configuration outside")


def test_added_test_configuration_counts_and_a_generated_makefile_does_not() -> None:
    python, rust, cmake = files_of("python"), files_of("rust"), files_of("c-family")
    assert python.counts_added("pytest.ini") and python.counts_added("conftest.py")
    assert not python.counts_added("Makefile") and not python.counts_added("notes.txt")
    assert rust.counts_added("build.rs") and rust.is_config("Cargo.toml")
    assert not cmake.counts_added("CTestTestfile.cmake") and not cmake.counts_added("Makefile")
    cargo = '[package]\nname = "x"\n[dependencies]\nitoa = "1"\n'
    assert part("Cargo.toml", cargo) != part("Cargo.toml", cargo + "[lib]\ntest = false\n")
    assert part("Cargo.toml", cargo) == part("Cargo.toml", cargo.replace('"1"', '"=1.0.9"'))


def test_the_site_probe_names_start_up_files_patched_files_and_shadowed_runners(
    tmp_path: Path,
) -> None:
    import hashlib
    import os
    import subprocess
    import sys

    from pytest_enconda.probing.scripts import probe_script

    planted = tmp_path / "pp"
    (planted / "pytest").mkdir(parents=True)
    (planted / "pytest" / "__init__.py").write_text("")
    (planted / "sitecustomize.py").write_text("print('6 passed')\n")
    (planted / "zz.pth").write_text("import os; os._exit(0)\n")
    (planted / "paths.pth").write_text("/nowhere\n")  # a path line runs nothing
    ok = "import sys\n"
    (planted / "ok.pth").write_text(ok)
    (planted / "mod.py").write_text("patched = True\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(ok.encode()).digest()).rstrip(b"=").decode()
    dist = planted / "mod-1.0.dist-info"
    dist.mkdir()
    (dist / "RECORD").write_text(
        f"ok.pth,sha256={digest},{len(ok)}\nmod.py,sha256={'x' * 43},15\n"
        "mod-1.0.dist-info/RECORD,,\n"
    )
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pytest.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(planted)}
    out = subprocess.run(
        [sys.executable, "-I", "-S", str(probe_script("site_integrity.py"))],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    found = {
        line.split("\t")[1]: line.split("\t")[2]
        for line in out.splitlines()
        if line.startswith("problem\t") and str(tmp_path) in line
    }
    assert set(found) == {
        f"{planted}/sitecustomize.py",
        f"{planted}/zz.pth",
        f"{planted}/mod.py",
        f"{planted}/pytest",
        f"{checkout}/pytest.py",
    }, out
    assert "differs from its RECORD" in found[f"{planted}/mod.py"]
    assert "shadows the test runner" in found[f"{checkout}/pytest.py"]


def test_the_site_probe_finds_the_venv_it_runs_in_under_dash_capital_s(tmp_path: Path) -> None:
    # Under -S site.py's venv() never runs, so sys.prefix is the base interpreter's: the probe
    # finds the venv by its pyvenv.cfg, as site.py does, or a venv's .pth would go unread.
    import subprocess
    import venv

    from pytest_enconda.probing.scripts import probe_script

    venv.create(tmp_path / "v", with_pip=False)
    python = tmp_path / "v" / "bin" / "python"
    packages = subprocess.run(
        [python, "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(packages) / "zz.pth").write_text("import os; os._exit(0)\n")
    out = subprocess.run(
        [python, "-I", "-S", str(probe_script("site_integrity.py"))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert f"problem\t{Path(packages).resolve()}/zz.pth\ta .pth file that runs code" in out, out
