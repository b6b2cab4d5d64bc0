"""``python -m pytest_enconda.bench plugin-hooks`` prints the plugin's hooks' CPU time in an
unrelated run, and its share of the run (issue 48 item 8)."""

from __future__ import annotations

import pytest

from pytest_enconda.bench import COMMANDS, main


@pytest.mark.slow  # one pytest run under cProfile: 10-30 s on a loaded machine
def test_it_prints_each_hook_and_the_share(capsys: pytest.CaptureFixture[str]) -> None:
    assert COMMANDS["plugin-hooks"] == "pytest_enconda.bench.plugin_hooks"
    assert main(["plugin-hooks", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    for name in ("import", "pytest_addoption", "pytest_configure", "plugin", "whole"):
        assert name in lines, out
    share = float(out.split("plugin share of the run: ")[1].split()[0])
    # The plugin is present and costs something, but far from the whole of an empty run.
    assert 0.0 < share < 0.5, out
