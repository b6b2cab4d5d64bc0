"""The benchmark dispatcher: a name → module table that other stages extend."""

from __future__ import annotations

import importlib

import pytest

from pytest_enconda.bench import COMMANDS, main, summarize


def test_every_command_module_has_a_main() -> None:
    assert "sandbox" in COMMANDS
    for module in COMMANDS.values():
        assert callable(importlib.import_module(module).main)


def test_unknown_benchmark_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-bench"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'no-such-bench'" in err and "sandbox" in err
    assert main([]) == 2
    assert main(["--help"]) == 0


def test_summarize_median_and_p90() -> None:
    stats = summarize([float(n) for n in range(1, 21)])
    assert stats["median"] == 10.5
    assert stats["p90"] == 18.0
    assert (stats["min"], stats["max"], stats["n"]) == (1.0, 20.0, 20.0)
    assert summarize([3.0])["p90"] == 3.0
    with pytest.raises(ValueError):
        summarize([])
