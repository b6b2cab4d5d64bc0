"""probes/imports_scan.py: C0's denominator, run as a real process (and in a real container)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitutil import git

from pytest_enconda.probing.scripts import IMPORTS_SCAN, probe_script

SOURCES = {
    "pkg/__init__.py": "from __future__ import annotations\nfrom . import sibling\n",
    "pkg/core.py": (
        "import os.path, json as j\n"
        "from numpy.linalg import norm\n"
        "from .sibling import x\n"
        "from .. import up\n"
        "def late():\n"
        "    import torch.nn.functional as F\n"
        "    try:\n"
        "        import yaml\n"
        "    except ImportError:\n"
        "        pass\n"
        "class C:\n"
        "    def m(self):\n"
        "        from scipy import optimize\n"
    ),
    "pkg/sibling.py": "import pkg.core\n",
    "scripts/broken.py": "import requests\ndef f(:\n",
    # Skipped folders: their imports never count, tracked or not.
    "build/lib/gen.py": "import skipped_build\n",
    "venv/lib/site.py": "import skipped_venv\n",
    "sub/node_modules/x.py": "import skipped_node\n",
    "data/notes.txt": "import not_python\n",
}
EXPECTED = ["__future__", "json", "numpy", "os", "pkg", "scipy", "torch", "yaml"]


def scan(repo: Path, python: str = sys.executable) -> dict:
    done = subprocess.run(
        [python, str(probe_script(IMPORTS_SCAN)), str(repo)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected exactly one JSON document, got {done.stdout!r}"
    return json.loads(lines[0])


def write(repo: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_git_tree_counts_tracked_files_only(tmp_path: Path) -> None:
    write(tmp_path, SOURCES)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-f", ".")
    git(tmp_path, "commit", "-qm", "x")
    (tmp_path / "untracked.py").write_text("import untracked_dep\n")

    document = scan(tmp_path)

    assert document["source"] == "git"
    assert document["names"] == EXPECTED
    assert document["total"] == len(EXPECTED)
    assert document["unparsable"] == 1
    assert document["unparsable_files"][0].startswith("scripts/broken.py: SyntaxError")
    # Read: 3 in pkg + the broken one; parsed (what pyright is given): the 3 that parse.
    assert document["files"] == 4
    assert document["paths"] == ["pkg/__init__.py", "pkg/core.py", "pkg/sibling.py"]
    assert document["error"] is None


def test_plain_folder_is_walked(tmp_path: Path) -> None:
    write(tmp_path, SOURCES)
    (tmp_path / "extra.py").write_text("import untracked_dep\n")
    (tmp_path / ".git").mkdir()  # a stray .git folder is skipped, not a work tree

    document = scan(tmp_path)

    assert document["source"] == "walk"
    assert document["names"] == sorted([*EXPECTED, "untracked_dep"])
    assert document["unparsable"] == 1


def test_non_utf8_and_encoding_cookie(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport caf\xe9_mod\n")
    (tmp_path / "nul.py").write_bytes(b"import a\x00b\n")
    document = scan(tmp_path)
    assert document["names"] == ["café_mod"]
    assert document["unparsable"] == 1  # the NUL byte


def test_errors_are_json_not_exceptions(tmp_path: Path) -> None:
    missing = scan(tmp_path / "nowhere")
    assert missing["error"].startswith("ValueError: not a directory")
    done = subprocess.run(
        [sys.executable, str(probe_script(IMPORTS_SCAN))], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "usage" in json.loads(done.stdout)["error"]


@pytest.mark.docker
def test_runs_in_a_container_of_the_base_image(tmp_path: Path, sandbox, base_image: str) -> None:
    """The scan uses the image's own python3 (Debian's, not ours) on a git tree owned by
    another user than the container's root."""
    from pytest_enconda.sandbox.containers import BindMount

    write(tmp_path, SOURCES)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-f", ".")
    git(tmp_path, "commit", "-qm", "x")
    with sandbox.container(
        base_image,
        case_id="imports-scan",
        role="probe",
        network=False,
        mounts=[BindMount(source=tmp_path, target="/data/project")],
    ) as box:
        subprocess.run(["chown", "-R", "12345:12345", str(tmp_path)], check=True)
        box.copy_in(probe_script(IMPORTS_SCAN), "/tmp/enconda-probe-t/imports_scan.py")
        result = box.exec("python3 /tmp/enconda-probe-t/imports_scan.py /data/project", timeout=120)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output.strip().splitlines()[-1])
    assert document["source"] == "git", document
    assert document["names"] == EXPECTED
    assert document["python"].startswith("3.11")
