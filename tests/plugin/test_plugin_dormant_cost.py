"""A pytest run that collects no benchmark case pays for the plugin's import and little else
(issue 48 item 8): its hooks read no task-kind registry (an entry-point scan), and no case-file
reader (textio, tomllib) is imported where no ``case.toml`` is met."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DORMANT = (
    "import sys, pytest\n"
    "code = pytest.main(['--co', '-q', '-p', 'no:cacheprovider'])\n"
    "loaded = [m for m in ('pytest_enconda.kinds', 'pytest_enconda.textio', 'tomllib',\n"
    "          'pytest_enconda.plugin') if m in sys.modules]\n"
    "print('LOADED', int(code), ','.join(loaded))\n"
)


def _loaded(folder: Path) -> tuple[int, set[str]]:
    out = subprocess.run(
        [sys.executable, "-c", DORMANT],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTEST_ADDOPTS": "", "HOME": str(folder)},
    )
    line = next(line for line in out.stdout.splitlines() if line.startswith("LOADED "))
    parts = line.split(" ", 2)
    names = parts[2] if len(parts) > 2 else ""
    return int(parts[1]), set(filter(None, names.split(",")))


def test_an_unrelated_run_reads_no_registry_and_no_case_file(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    code, loaded = _loaded(tmp_path)
    assert code == 0
    # The plugin loaded (its import is what the run pays), nothing else of the benchmark's.
    assert loaded == {"pytest_enconda.plugin"}, loaded


def test_a_case_file_brings_the_reader(tmp_path: Path) -> None:
    """The same check sees a case: a folder with a case.toml imports the reader and the kinds."""
    case_dir = tmp_path / "cases" / "c"
    case_dir.mkdir(parents=True)
    (case_dir / "case.toml").write_text('id = "c"\nsuite = "diagnosis"\n')
    _code, loaded = _loaded(tmp_path)
    assert {"pytest_enconda.textio", "tomllib", "pytest_enconda.kinds"} <= loaded, loaded
