import shutil
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "filesniff", *args], capture_output=True, text=True, check=False
    )


def test_check_passes_on_the_shipped_samples() -> None:
    result = _run("--check", str(SAMPLES))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert any(line.endswith("logo.png: image/png") for line in lines)
    assert any(line.endswith("manual.pdf: application/pdf") for line in lines)


def test_check_fails_on_a_misleading_extension(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "manual.pdf", tmp_path / "invoice.png")
    result = _run("--check", str(tmp_path))
    assert result.returncode == 1
    assert "MISMATCH (extension says image/png)" in result.stdout


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "no such file or directory" in result.stderr
