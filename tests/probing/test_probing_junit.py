"""JUnit XML reports: outcomes per test id, worst outcome kept, the test step's command."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from localhttp import QuietHandler, serving, unused_port

from pytest_enconda.probing.junit import (
    JUNIT_PATH,
    TESTS_START,
    JUnitError,
    hub_offline_lines,
    parse_junit,
    read_junit,
    run_tests_command,
    why_no_tests,
)
from pytest_enconda.probing.scripts import probe_script

REPORT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
 <testcase classname="tests.test_a" name="test_ok" time="0.1"/>
 <testcase classname="tests.test_a" name="test_bad"><failure message="assert 0"/></testcase>
 <testcase classname="tests.test_a.TestX" name="test_skip[1]"><skipped message="no"/></testcase>
 <testcase classname="tests.test_a" name="test_teardown"/>
 <testcase classname="tests.test_a" name="test_teardown"><error message="teardown"/></testcase>
 <testcase classname="" name="tests.test_b"><error message="collection failed"/></testcase>
</testsuite></testsuites>
"""


def test_outcomes_per_test_id() -> None:
    assert parse_junit(REPORT) == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a.TestX::test_skip[1]": "skipped",
        # pytest writes a teardown error as a second testcase: the worse outcome stays.
        "tests.test_a::test_teardown": "error",
        "tests.test_b": "error",
    }


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"not xml", "not XML"), (b"<html/>", "root element is <html>")],
)
def test_not_a_report(data: bytes, reason: str) -> None:
    with pytest.raises(JUnitError, match=reason):
        parse_junit(data)


def test_read_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(JUnitError, match=str(tmp_path / "missing.xml")):
        read_junit(tmp_path / "missing.xml")


def test_a_real_pytest_report_parses(tmp_path: Path) -> None:
    """The command run_tests_command builds, run here on a real suite (tools already present)."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_pass(): pass\n"
        "def test_fail(): assert False\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_param(n): assert n == 1\n"
    )
    report = tmp_path / "junit.xml"
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider --junitxml={report}"
    subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=False)
    assert read_junit(report) == {
        "test_x::test_pass": "passed",
        "test_x::test_fail": "failed",
        "test_x::test_param[1]": "passed",
        "test_x::test_param[2]": "failed",
    }


def test_test_step_installs_tools_then_writes_the_report() -> None:
    command = run_tests_command("python -m pytest tests", ["pytest>=7,<9", "pytest-mock"])
    lines = command.splitlines()
    assert lines[-1] == (
        "python -m pytest tests -p enconda_fixed_order -o cache_dir=/tmp/enconda/pytest-cache "
        f"-o timeout=120 --continue-on-collection-errors --junitxml={JUNIT_PATH}"
    )
    # pytest-timeout comes along, so a test hanging on the network fails alone.
    installs = [line for line in lines if "pip install" in line]
    assert "python -m pip install -q 'pytest>=7,<9' pytest-mock pytest-timeout" in installs[0]
    pinned = run_tests_command("python -m pytest", ["pytest", "pytest-timeout>=2"])
    assert "pytest-timeout>=2 pytest-timeout" not in pinned
    assert run_tests_command("python -m pytest", []).count("pip install") == 0


@pytest.mark.parametrize(("preset", "expected"), [(None, "offscreen"), ("xcb", "xcb")])
def test_qt_draws_offscreen_unless_the_setup_chose_a_platform(
    preset: str | None, expected: str
) -> None:
    """A box has no display: Qt aborts the session on xcb (napari's pytest plugin, pytest-qt)."""
    step = run_tests_command("true", [])
    env = {"PATH": "/usr/bin:/bin"} | ({"QT_QPA_PLATFORM": preset} if preset else {})
    lines = [line for line in step.splitlines() if "QT_QPA_PLATFORM" in line]
    shown = subprocess.run(
        ["bash", "-c", "\n".join([*lines, 'echo "$QT_QPA_PLATFORM"'])],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == expected


class _HeadNotFound(QuietHandler):
    """A hub that answers: every HEAD gets a 404."""

    def do_HEAD(self) -> None:
        self.send_response(404)
        self.end_headers()


def _hub_env_after_lines(env: dict[str, str]) -> tuple[dict[str, str], str]:
    names = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
    show = "; ".join(f'echo "{name}=${{{name}:-}}"' for name in names)
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    shown = subprocess.run(
        ["bash", "-c", "\n".join([*hub_offline_lines(), show])],
        env={"PATH": path, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    values = dict(line.split("=", 1) for line in shown.stdout.split())
    return values, shown.stderr


def test_an_unreachable_hub_is_declared_offline_to_its_clients() -> None:
    """litgpt's tokenizer tests waited out the hub client's retries (23 s per file)."""
    endpoint = f"http://127.0.0.1:{unused_port()}"
    values, told = _hub_env_after_lines({"HF_ENDPOINT": endpoint})
    assert values == {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    assert "hub is unreachable" in told


def test_a_hub_that_answers_even_with_an_error_stays_online() -> None:
    with serving(_HeadNotFound) as endpoint:
        values, told = _hub_env_after_lines({"HF_ENDPOINT": endpoint})
    assert values == {"HF_HUB_OFFLINE": "", "HF_DATASETS_OFFLINE": "", "TRANSFORMERS_OFFLINE": ""}
    assert told == ""


def test_an_offline_setting_the_setup_made_is_kept() -> None:
    endpoint = f"http://127.0.0.1:{unused_port()}"
    values, _ = _hub_env_after_lines({"HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "0"})
    assert values == {"HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "", "TRANSFORMERS_OFFLINE": ""}


@pytest.mark.slow
@pytest.mark.docker
def test_the_hub_client_in_a_box_that_cannot_reach_it_is_offline(
    tmp_path: Path, sandbox, base_image
) -> None:
    """In a real box whose hub endpoint refuses connections, the test step's tests see the real
    huggingface_hub in offline mode; the step says why."""
    from pytest_enconda.probing.shell import in_setup_env
    from tests.recipebox import project, set_up

    files = {
        "setup.py": "from setuptools import setup\nsetup(name='hubuser', version='0.1')\n",
        "tests/test_hub.py": "def test_offline():\n"
        "    from huggingface_hub import constants\n"
        "    assert constants.HF_HUB_OFFLINE is True\n",
    }
    repo = project(tmp_path / "repo", "hubuser", files)
    with set_up(sandbox, base_image, repo, "true\n", "t/hub-offline") as (box, _):
        step = run_tests_command("python -m pytest tests", ["pytest"], ["huggingface_hub"])
        closed = "export HF_ENDPOINT=http://127.0.0.1:9\n"
        run = box.exec(in_setup_env(closed + step), timeout=600, workdir="/data/project")
        assert "hub is unreachable" in run.output, run.output[-2000:]
        assert "1 passed" in run.output, run.output[-2000:]


def _local_test_step(tmp_path: Path, report: Path) -> str:
    """The test step's pytest line, run here: this interpreter, a report and cache under
    ``tmp_path``, no pytest-timeout (not installed on the host), the fixed-order plugin from
    the shipped probes."""
    step = run_tests_command(f"{sys.executable} -m pytest", []).splitlines()[-1]
    plugins = shlex.quote(str(probe_script("enconda_fixed_order.py").parent))
    return f"PYTHONPATH={plugins} " + (
        step.replace(JUNIT_PATH, str(report))
        .replace("-o timeout=120 ", "")
        .replace("/tmp/enconda/pytest-cache", str(tmp_path / "cache"))
    )


def test_a_module_that_cannot_be_imported_does_not_stop_the_others(tmp_path: Path) -> None:
    """The test step's own options on a real suite: the broken module is an error, the other
    module's tests still run and are reported."""
    (tmp_path / "test_ok.py").write_text("def test_pass(): pass\n")
    (tmp_path / "test_broken.py").write_text("import no_such_module_enconda\n")
    report = tmp_path / "junit.xml"
    command = _local_test_step(tmp_path, report)
    subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=False)
    outcomes = read_junit(report)
    assert outcomes["test_ok::test_pass"] == "passed"
    assert [value for key, value in outcomes.items() if "broken" in key] == ["error"]
    assert not (tmp_path / ".pytest_cache").exists()


def test_cache_options_in_a_repositorys_addopts_keep_working(tmp_path: Path) -> None:
    """spec-bioimage-io's pyproject adds --failed-first: with the cacheprovider disabled pytest
    stopped on a usage error and wrote no report."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --failed-first\n")
    (tmp_path / "test_ok.py").write_text("def test_pass(): pass\n")
    report = tmp_path / "junit.xml"
    command = _local_test_step(tmp_path, report)
    result = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert read_junit(report) == {"test_ok::test_pass": "passed"}
    assert (tmp_path / "cache").is_dir() and not (tmp_path / ".pytest_cache").exists()


def test_test_requirements_install_together_or_one_by_one(tmp_path: Path) -> None:
    """A real shell runs the step with a stand-in ``python`` that logs each pip call and refuses
    one requirement: the others still install, and the test command still runs."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    stub = bin_dir / "python"
    stub.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\ncase "$*" in *"no-such-dist"*) exit 1;; esac\nexit 0\n'
    )
    stub.chmod(0o755)
    command = run_tests_command("true", [], ["parameterized", "no-such-dist==9", "django"])
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
    calls = [call for call in log.read_text().splitlines() if call.startswith("-m pip")]
    assert calls[0] == "-m pip install -q parameterized no-such-dist==9 django"
    assert calls[1:] == [
        "-m pip install -q parameterized",
        "-m pip install -q no-such-dist==9",
        "-m pip install -q django",
    ]
    assert "test requirement no-such-dist==9 did not install" in result.stderr


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("files", "args", "said"),
    [
        # A plugin's option in addopts with the plugin missing: usage error, exit 4.
        (
            {"pytest.ini": "[pytest]\naddopts = --no-such-plugin-option\n"},
            (),
            "exit 4: unrecognized arguments: --no-such-plugin-option",
        ),
        # A test path relative to another folder.
        ({}, ("no_such_tests",), "exit 4: file or directory not found: no_such_tests"),
        # A conftest importing what is not installed: the missing module is named.
        (
            {"conftest.py": "import no_such_module_enconda\n"},
            (),
            "exit 4: ImportError while loading conftest",
        ),
    ],
)
def test_why_a_real_pytest_reported_no_test(
    tmp_path: Path, files: dict[str, str], args: tuple[str, ...], said: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "test_x.py").write_text("def test_pass(): pass\n")
    report = tmp_path / "junit.xml"
    result = _pytest(tmp_path, *args, f"--junitxml={report}")
    # No report, or (a path not found) one with no test case.
    assert not report.exists() or not read_junit(report)
    why = why_no_tests(result.stdout + result.stderr, result.returncode, timed_out=False)
    assert why.startswith(said)
    if "conftest" in said:
        assert "No module named 'no_such_module_enconda'" in why


def test_why_no_tests_without_pytest_words() -> None:
    assert why_no_tests("", None, timed_out=True) == "timed out"
    assert why_no_tests("", 137, timed_out=False) == "exit 137"
    out = "/usr/bin/python: No module named pytest\n"
    assert why_no_tests(out, 1, timed_out=False) == "exit 1: No module named pytest"
    crash = "INTERNALERROR> Traceback\nINTERNALERROR>   File x\nINTERNALERROR> KeyError: 'x'\n"
    assert why_no_tests(crash, 3, timed_out=False) == "exit 3: KeyError: 'x'"
    assert why_no_tests("Segmentation fault\n", 139, False) == "exit 139: Segmentation fault"


def test_a_traceback_before_pytest_djangos_note_is_the_reason() -> None:
    """uk-polling-stations' settings import a package its install left out; the attempt line
    said only pytest-django's note ("If this is wrong, add django_find_project = false")."""
    out = (
        "enconda: the test command starts\n"
        "Traceback (most recent call last):\n"
        '  File "/data/project/polling_stations/settings/base.py", line 3, in <module>\n'
        "ImportError: No module named 'dc_design_system'\n"
        "pytest-django found a Django project in . (it contains manage.py) and added it to the "
        "Python path.\n"
        'If this is wrong, add "django_find_project = false" to pytest.ini and explicitly '
        "manage your Python path.\n"
    )
    assert why_no_tests(out, 1, False) == "exit 1: ImportError: No module named 'dc_design_system'"


def test_pips_error_lines_before_pytest_are_not_the_reason() -> None:
    # cellrank: the test step's install printed a conflict note; the conftest's error is why.
    assert f"echo '{TESTS_START}'" in run_tests_command("python -m pytest", ["pytest"])
    out = (
        "ERROR: pip's dependency resolver does not currently take into account all the packages\n"
        "ERROR: Could not find a version that satisfies the requirement nothing-such\n"
        f"{TESTS_START}\n"
        "ImportError while loading conftest '/data/project/tests/conftest.py'.\n"
        "tests/conftest.py:23: in <module>\n"
        "E   FileNotFoundError: [Errno 2] Unable to open file 'tests/adata_200.h5ad'\n"
    )
    assert why_no_tests(out, 4, timed_out=False) == (
        "exit 4: ImportError while loading conftest '/data/project/tests/conftest.py'. "
        "FileNotFoundError: [Errno 2] Unable to open file 'tests/adata_200.h5ad'"
    )


def test_a_qualified_exception_name_is_the_first_error() -> None:
    out = (
        f"{TESTS_START}\n"
        "ImportError while loading conftest '/data/project/tests/conftest.py'.\n"
        "E   pydantic.errors.PydanticUserError: If you use `@root_validator` with pre=False\n"
    )
    assert why_no_tests(out, 4, timed_out=False).endswith(
        "conftest.py'. pydantic.errors.PydanticUserError: If you use `@root_validator` with "
        "pre=False"
    )


def _dist(site: Path, name: str, url: str, version: str = "0.3") -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "direct_url.json").write_text(f'{{"dir_info": {{"editable": true}}, "url": "{url}"}}')


def test_distributions_installed_from_the_checkout_are_listed_as_pins(tmp_path: Path) -> None:
    """The test step lists what was installed from /data/project (a monorepo's subfolders
    too) as constraints; a neighbour folder's or an index's distribution is not pinned."""
    import os

    from pytest_enconda.probing.junit import _LIST_CHECKOUT_DISTS

    site = tmp_path / "site"
    _dist(site, "qibo", "file:///data/project")
    _dist(site, "sdk-part", "file:///data/project/libs/sdk")
    _dist(site, "neighbour", "file:///data/projectile")
    _dist(site, "wheel-url", "https://example.org/x.whl")
    # An old setuptools' legacy version: pip would refuse "legacy==unknown" and every install.
    _dist(site, "legacy", "file:///data/project/old", version="unknown")
    env = {**os.environ, "PYTHONPATH": str(site)}
    listed = subprocess.run(
        [sys.executable, "-c", _LIST_CHECKOUT_DISTS], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == ["qibo==0.3", "sdk-part==0.3"]


@pytest.mark.slow
@pytest.mark.docker
def test_a_test_requirement_never_replaces_the_checkout_or_breaks_its_dependencies(
    tmp_path: Path, sandbox, base_image
) -> None:
    """qibo: a test requirement that wanted a newer qibo installed the release over the
    checkout after the proof was taken; dash-bio: a pinned old click broke the Flask its setup
    installed. Here one test requirement asks for the project's own name at a version the
    checkout is not, one for a version of its dependency it excludes: each fails alone, the
    other installs, and the checkout and its dependency stay as the setup left them."""
    from pytest_enconda.probing.shell import in_setup_env
    from tests.recipebox import installed_version, project, set_up

    pyproject = (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "pyfiglet"\nversion = "0.0.1"\ndependencies = ["six>=1.16"]\n'
    )
    files = {
        "pyproject.toml": pyproject,
        "tests/test_own.py": "import pyfiglet\n\ndef test_own():\n"
        "    assert pyfiglet.__file__.startswith('/data/project/')\n",
    }
    repo = project(tmp_path / "repo", "pyfiglet", files)
    script = "python -m pip install -q -e .\n"
    with set_up(sandbox, base_image, repo, script, "t/keep-checkout") as (box, _):
        six = installed_version(box, "six")
        wanted = ["pyfiglet>=1.0", "six==1.15.0", "iniconfig"]
        step = run_tests_command("python -m pytest tests", ["pytest"], wanted)
        run = box.exec(in_setup_env(step), timeout=600, workdir="/data/project")
        assert "test requirement pyfiglet>=1.0 did not install" in run.output
        assert "test requirement six==1.15.0 did not install" in run.output
        assert "test requirement iniconfig did not install" not in run.output
        assert installed_version(box, "pyfiglet") == "0.0.1"
        assert installed_version(box, "six") == six != "1.15.0"
        assert "1 passed" in run.output, run.output[-2000:]


_ORDERED_SUITE = "".join(f"def test_{n:02d}(): pass\n" for n in range(30))


def _order(report: Path) -> list[str]:
    import xml.etree.ElementTree as ET

    return [case.get("name") or "" for case in ET.parse(report).iter("testcase")]


@pytest.mark.slow
@pytest.mark.docker
def test_a_projects_test_order_plugins_draw_the_same_order_in_every_run(
    tmp_path: Path, sandbox, base_image
) -> None:
    """memegen's ``--random`` (pytest-random) drew another order in the oracle's run than in
    both verification runs, and 3 order-dependent tests failed there. With the real plugins
    installed in a box: pytest-randomly and pytest-random draw one order in every run of the
    test step, the seed's; pytest-random-order, not turned on by the project, stays off;
    Hypothesis draws one example."""
    from pytest_enconda.probing.shell import in_setup_env
    from tests.recipebox import project, set_up

    drawn = (
        "from hypothesis import given, settings, strategies as st\n"
        "@settings(max_examples=10, database=None)\n"
        "@given(st.integers(0, 10**12))\n"
        "def test_draw(x):\n"
        "    open('/tmp/enconda/drawn.txt', 'a').write(f'{x}\\n')\n"
    )
    files = {"tests/test_order.py": _ORDERED_SUITE, "draw/test_draw.py": drawn}
    repo = project(tmp_path / "repo", "ordered", files)
    setup = (
        "python -m pip install -q pytest-randomly pytest-random-order pytest-random hypothesis\n"
    )
    in_file_order = [f"test_{n:02d}" for n in range(30)]
    with set_up(sandbox, base_image, repo, setup, "t/fixed-order") as (box, _):
        orders: dict[str, list[list[str]]] = {}
        for name, command in [
            ("randomly", "python -m pytest tests"),
            ("random", "python -m pytest tests -p no:randomly --random"),
            ("random-order off", "python -m pytest tests -p no:randomly"),
        ]:
            for run_number in range(2):
                step = run_tests_command(command, ["pytest"])
                run = box.exec(in_setup_env(step), timeout=600, workdir="/data/project")
                assert "30 passed" in run.output, run.output[-2000:]
                if name == "randomly":  # its header names the seed it drew with
                    assert "--randomly-seed=1\n" in run.output, run.output[-2000:]
                report = tmp_path / f"{name}-{run_number}.xml"
                box.copy_out(JUNIT_PATH, report)
                orders.setdefault(name, []).append(_order(report))
        # The plugins really shuffle (the seed's order is not the file's), and alike each run.
        for name in ("randomly", "random"):
            first, second = orders[name]
            assert first == second and sorted(first) == in_file_order != first, name
        assert orders["random-order off"] == [in_file_order, in_file_order]
        # Hypothesis draws the same example in every run of the step; by itself, another.
        step = in_setup_env(run_tests_command("python -m pytest draw -p no:randomly", ["pytest"]))
        plain = "python -m pytest draw -p no:randomly -p no:cacheprovider"
        drawn_values = []
        for command in (step, step, plain, plain):
            run = box.exec(command, timeout=600, workdir="/data/project")
            assert "1 passed" in run.output, run.output[-2000:]
            drawn = box.exec("cat /tmp/enconda/drawn.txt; rm /tmp/enconda/drawn.txt", timeout=60)
            drawn_values.append(drawn.output.split())
        assert len(drawn_values[0]) == 10
        assert drawn_values[0] == drawn_values[1] != drawn_values[2] != drawn_values[3]


def test_tests_parametrized_with_random_draws_are_the_same_each_run(tmp_path: Path) -> None:
    """nevergrad picks a random subset of its optimizers when its test module is imported: a
    graded run collected 11 PASS-set tests under other names. Collected through the test step,
    two runs collect the same tests; plainly, two runs collect different ones."""
    pytest.importorskip("numpy")
    (tmp_path / "test_drawn.py").write_text(
        "import random\n"
        "import numpy as np\n"
        "import pytest\n"
        "NAMES = [n for n in range(40) if np.random.rand() > 0.5 and random.random() > 0.1]\n"
        "@pytest.mark.parametrize('n', NAMES)\n"
        "def test_drawn(n): pass\n"
    )
    collected = []
    for run in range(4):
        report = tmp_path / f"junit{run}.xml"
        command = _local_test_step(tmp_path, report)
        if run >= 2:  # plain pytest, without the harness's plugin
            command = command.replace(" -p enconda_fixed_order", "")
        subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=False)
        collected.append(sorted(read_junit(report)))
    assert collected[0] == collected[1] and len(collected[0]) > 5
    assert collected[2] != collected[3]


@pytest.mark.slow
def test_what_a_test_draws_does_not_hang_on_the_run_or_the_tests_before_it(
    tmp_path: Path,
) -> None:
    """nevergrad's tests skip three in four of themselves with an unseeded NumPy draw: six of
    its PASS-set tests were skipped in a graded run. Through the test step each test draws the
    same, run after run, and whether a test before it ran (``-k``) changes nothing."""
    pytest.importorskip("numpy")
    (tmp_path / "test_skips.py").write_text(
        "import random\n"
        "import numpy as np\n"
        "import pytest\n"
        "@pytest.mark.parametrize('n', range(30))\n"
        "def test_sometimes(n):\n"
        "    if np.random.randint(4) and random.random() < 0.9:\n"
        "        pytest.skip('we randomly skip 3/4')\n"
    )
    outcomes = []
    for run, (plugin, select) in enumerate(
        [(True, ""), (True, ""), (True, "-k 'not sometimes[0]'"), (False, ""), (False, "")]
    ):
        report = tmp_path / f"junit{run}.xml"
        command = _local_test_step(tmp_path, report) + f" {select}"
        if not plugin:
            command = command.replace(" -p enconda_fixed_order", "")
        subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=False)
        outcomes.append(read_junit(report))
    assert outcomes[0] == outcomes[1]
    assert {"passed", "skipped"} <= set(outcomes[0].values())
    # Without test 0 before them, the others draw as they did.
    assert outcomes[2] == {k: v for k, v in outcomes[0].items() if not k.endswith("[0]")}
    assert outcomes[3] != outcomes[4]  # plain pytest: each run draws anew


@pytest.mark.docker
def test_a_unittest_suite_found_by_the_makefile_is_reported_by_the_test_step(
    tmp_path: Path, sandbox, base_image
) -> None:
    """Reticulum's ``make test`` runs ``python -m tests.all``; its test files are not named
    test_*, so bare pytest ran no test. The discovered command, run by the test step in a box,
    reports each test case the file imports; bare pytest there still collects none."""
    from pytest_enconda.probing.shell import in_setup_env
    from pytest_enconda.repo.test_commands import discover_test_command
    from tests.recipebox import project, set_up

    suite = (
        "import unittest\n"
        "class TestSum(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n"
        "    def test_fails(self):\n        self.assertEqual(1 + 1, 3)\n"
    )
    files = {
        "Makefile": "test:\n\t@echo Running tests...\n\tpython -m tests.all\n",
        "tests/__init__.py": "",
        "tests/sums.py": suite,
        "tests/all.py": "import unittest\nfrom .sums import TestSum\n"
        "if __name__ == '__main__':\n    unittest.main()\n",
    }
    repo = project(tmp_path / "repo", "rns", files)
    found = discover_test_command(repo)
    assert (found.source, found.command) == ("makefile", "python -m pytest tests/all.py")
    with set_up(sandbox, base_image, repo, "true\n", "t/unittest-suite") as (box, _):
        outcomes = {}
        for name, command in [("found", found.command), ("bare", "python -m pytest")]:
            run = box.exec(
                in_setup_env(run_tests_command(command, ["pytest"])),
                timeout=600,
                workdir="/data/project",
            )
            report = tmp_path / f"{name}.xml"
            box.copy_out(JUNIT_PATH, report)
            outcomes[name] = read_junit(report)
        assert outcomes["found"] == {
            "tests.all.TestSum::test_add": "passed",
            "tests.all.TestSum::test_fails": "failed",
        }, run.output[-2000:]
        assert outcomes["bare"] == {}
