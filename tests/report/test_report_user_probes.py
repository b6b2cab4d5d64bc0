"""A user probe marked ``pyramid("C1")`` is reported beside the stage, never over it."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.records import CaseDir, ResultRow
from pytest_enconda.report.runrecords import RunRecords
from pytest_enconda.report.summary import _pyramid


def test_a_failing_user_probe_does_not_fail_the_stage(tmp_path: Path) -> None:
    paths = CaseDir(tmp_path, "tiny")
    paths.pyramid("C1").parent.mkdir(parents=True)
    paths.pyramid("C1").write_text(json.dumps({"stage": "C1", "outcome": "passed"}))
    own = "probe_pyramid.py::test_c1_entry_point_on_cpu"
    user = "probe_mine.py::test_tokenizer_loads"
    rows = [
        ResultRow(case="tiny", item=own, stage="C1", outcome="passed"),
        ResultRow(case="tiny", item=user, stage="C1", outcome="failed"),
    ]
    pyramid = _pyramid(RunRecords.load(tmp_path, {row.key: row for row in rows}))
    assert pyramid is not None
    assert (pyramid["C1"]["passed"], pyramid["C1"]["applicable"]) == (1, 1)
    assert pyramid["user_probes"] == {"C1": {"failed": 1}}
