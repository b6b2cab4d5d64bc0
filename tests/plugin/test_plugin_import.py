"""The plugin loads in every pytest run where it is installed: its import must stay cheap."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("docker", "litellm", "scipy", "numpy", "rich", "requests", "xdist.scheduler")


def test_loading_the_plugin_imports_no_heavy_library() -> None:
    code = (
        "import sys, pytest_enconda.plugin\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
