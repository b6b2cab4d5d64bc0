"""probes/python_facts.py under real interpreters, with fake frameworks as real packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from pytest_enconda.probing.scripts import PYTHON_FACTS, probe_script

FAKE_TORCH = """
__version__ = "2.4.0+cu124"
class version:
    cuda = "12.4"
class cuda:
    @staticmethod
    def is_available():
        return False
    @staticmethod
    def device_count():
        return 0
print("torch says hello on stdout")
"""


def facts(python: str, *args: str, pythonpath: Path | None = None) -> dict:
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        [python, str(probe_script(PYTHON_FACTS)), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def env_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv: its prefix is not the base interpreter's."""
    root = tmp_path_factory.mktemp("venv") / "env"
    venv.create(root, with_pip=False)
    return root / "bin" / "python"


def test_interpreter_facts(env_python: Path) -> None:
    document = facts(str(env_python))
    assert document["error"] is None
    assert document["executable"] == str(env_python)
    assert document["prefix"] == str(env_python.parent.parent)
    assert document["python_version"].count(".") == 2
    assert document["python_version"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert document["prefix_bytes"] > 0
    assert document["prefix_bytes_complete"] is True
    assert document["framework"] is None


def test_framework_missing(env_python: Path) -> None:
    framework = facts(str(env_python), "--framework", "torch")["framework"]
    assert framework["importable"] is False
    assert "No module named 'torch'" in framework["error"]
    assert framework["cuda_available"] is None


def test_fake_torch_is_read_and_its_stdout_does_not_break_the_document(
    env_python: Path, tmp_path: Path
) -> None:
    (tmp_path / "torch.py").write_text(FAKE_TORCH)
    framework = facts(str(env_python), "--framework", "torch", pythonpath=tmp_path)["framework"]
    assert framework == {
        "name": "torch",
        "importable": True,
        "version": "2.4.0+cu124",
        "cuda_available": False,
        "device_count": 0,
        "cuda_version": "12.4",
        "error": None,
    }


def test_a_crashing_import_keeps_the_interpreter_facts(env_python: Path, tmp_path: Path) -> None:
    (tmp_path / "jax.py").write_text("import os\nos.abort()\n")
    document = facts(str(env_python), "--framework", "jax", pythonpath=tmp_path)
    assert document["python_version"]
    assert document["framework"]["importable"] is False
    assert "died importing jax" in document["framework"]["error"]


def test_tensorflow_without_gpus(env_python: Path, tmp_path: Path) -> None:
    package = tmp_path / "tensorflow"
    (package / "config").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "__version__ = '2.16.1'\nfrom . import config\n"
        "class sysconfig:\n    get_build_info = staticmethod(lambda: {'cuda_version': '12.3'})\n"
    )
    (package / "config" / "__init__.py").write_text(
        "def list_physical_devices(kind):\n    return []\n"
    )
    framework = facts(str(env_python), "--framework", "tensorflow", pythonpath=tmp_path)[
        "framework"
    ]
    assert framework["importable"] is True
    assert framework["version"] == "2.16.1"
    assert (framework["cuda_available"], framework["device_count"]) == (False, 0)
    assert framework["cuda_version"] == "12.3"


def test_bad_arguments_give_a_json_error() -> None:
    document = facts(sys.executable, "--framework", "mxnet")
    assert "usage" in document["error"]
