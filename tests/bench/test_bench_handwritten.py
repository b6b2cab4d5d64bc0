"""The hand-written judge pairs: their model, resolving golden text, and the bench command."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_enconda.bench import handwritten
from pytest_enconda.bench.handwritten import (
    DEFAULT_PAIRS,
    HandPair,
    PairsFormatError,
    load_pairs,
    resolve,
)
from pytest_enconda.grading.judges import JudgeRequest, JudgeStats, Verdict
from pytest_enconda.grading.judges.agreement import agreement_line, read_agreement

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"
INSTANCE = "instances/error_gen_acme_tool/acme_tool_error_readme_1"
ERRORS = [
    {
        "error_type": "E2",
        "error_description": "The pip command lacks -r before requirements.txt.",
        "correction_candidates": [
            "pip install requirements.txt",
            "pip install -r requirements.txt",
        ],
        "golden_answer": "pip install -r requirements.txt",
    },
    {
        "error_type": "E7",
        "error_description": "The README asks for Python 2.7, the code needs Python 3.9+.",
        "correction_candidates": ["Python 3.9 or newer", "Python 2.7"],
        "golden_answer": "Python 3.9 or newer",
    },
]


def _pair(**changes: object) -> dict[str, object]:
    pair: dict[str, object] = {
        "instance": INSTANCE,
        "error": 0,
        "error_type": "E2",
        "aspect": "fix",
        "candidate": "pip install --requirement requirements.txt",
        "label": True,
        "style": "equivalent-command",
        "reason": "long form of -r",
    }
    pair.update(changes)
    return pair


def _write(path: Path, rows: Sequence[object]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "enconda"
    folder = root / INSTANCE
    folder.mkdir(parents=True)
    (folder / "README.json").write_text(json.dumps({"errors": ERRORS}), encoding="utf-8")
    return root


class KeywordJudge:
    """Similar when the candidate holds the keyword; records what it was asked."""

    name = "keyword"

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.requests: list[JudgeRequest] = []

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        self.requests += requests
        return [Verdict(similar=self.keyword in r.predicted, reason="kw") for r in requests]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name, calls=len(self.requests))


def test_every_problem_is_named_by_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "pairs.jsonl",
        [
            _pair(),
            "{not json",
            _pair(label="maybe"),
            _pair(instance="../escape/x", candidate="other"),
            _pair(error_type="E3", candidate="third"),
            {k: v for k, v in _pair(candidate="fourth").items() if k != "reason"},
            _pair(candidate="   "),
            _pair(extra="field", candidate="fifth"),
            _pair(),  # the same pair as line 1
        ],
    )
    with pytest.raises(PairsFormatError) as info:
        load_pairs(path)
    problems = info.value.problems
    text = str(info.value)
    assert str(path) in text
    assert any(p.startswith("line 2: not JSON") for p in problems)
    assert any(p.startswith("line 3: label:") for p in problems)
    assert any(p.startswith("line 4: instance:") and "instances/<repo" in p for p in problems)
    assert any(p.startswith("line 5: error_type:") for p in problems)
    assert any(p.startswith("line 6: reason:") and "required" in p.lower() for p in problems)
    assert any(p.startswith("line 7: candidate_from:") for p in problems)
    assert any(p.startswith("line 8: extra:") for p in problems)
    assert any(p.startswith("line 9: candidate: the same pair as line 1") for p in problems)
    assert not any(p.startswith("line 1:") for p in problems)


def test_resolve_reads_golden_text_and_skips_what_it_cannot(data: Path) -> None:
    pairs = [
        HandPair.model_validate(_pair()),
        HandPair.model_validate(_pair(error=1, error_type="E7", candidate="Python 3.9+")),
        HandPair.model_validate(_pair(instance="instances/error_gen_gone/gone_1")),
        HandPair.model_validate(_pair(error=5)),
        HandPair.model_validate(_pair(error=1, error_type="E4", candidate="mislabelled")),
    ]
    resolved = resolve(pairs, data)
    assert [(p.error, g.golden_answer) for p, g in resolved.pairs] == [
        (0, "pip install -r requirements.txt"),
        (1, "Python 3.9 or newer"),
    ]
    why = [w for _, w in resolved.skipped]
    assert "instance not in the data" in why[0]
    assert "has 2 errors, no index 5" in why[1]
    assert "is E7, the pair says E4" in why[2]


def test_requests_are_the_ones_grading_builds(data: Path) -> None:
    pairs = [
        HandPair.model_validate(_pair()),
        HandPair.model_validate(
            _pair(aspect="description", candidate="-r is missing", style="terse")
        ),
    ]
    judge = KeywordJudge("-r ")
    table, mistakes = handwritten.measure(judge, resolve(pairs, data).pairs)
    fix, desc = judge.requests
    assert fix.aspect == "fix" and fix.golden == "pip install -r requirements.txt"
    assert fix.context.startswith("error type E2; error: The pip command lacks -r")
    assert fix.candidates == ERRORS[0]["correction_candidates"]
    assert desc.aspect == "description" and desc.golden == ERRORS[0]["error_description"]
    assert "golden fix: pip install -r requirements.txt" in desc.context
    assert table["fix"].fn == 1 and table["description"].tp == 1 and len(mistakes) == 1


def test_bench_prints_and_writes_figures(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    pairs = _write(
        tmp_path / "pairs.jsonl",
        [
            _pair(candidate="pip install -r requirements.txt  # from the file"),
            _pair(candidate="pip install requirements.txt", label=False, style="wrong-flag"),
            _pair(candidate="pip install -r reqs.txt", label=False, style="wrong-path"),
            _pair(
                error=1,
                error_type="E7",
                aspect="description",
                candidate="Python 2.7 is asked for, 3.9+ -r needed",
                style="terse",
            ),
            _pair(instance="instances/error_gen_gone/gone_1", candidate="absent"),
        ],
    )
    judge = KeywordJudge("-r ")
    monkeypatch.setattr(handwritten, "create_judge", lambda spec, api_base=None: judge)
    out = tmp_path / "figures.json"
    code = handwritten.main(
        ["--data", str(data), "--pairs", str(pairs), "--judge", "x", "--json", str(out)]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "skipped pair (fix, equivalent-command): instance not in the data" in captured.err
    assert "4 pairs (1 skipped) from 2 golden errors in 1 repositories" in captured.out
    assert "fix style wrong-path" in captured.out
    figures = json.loads(out.read_text())
    fix = figures["aspects"]["fix"]
    # positive accepted, wrong-flag rejected, wrong-path accepted (keyword judge's mistake)
    assert (fix["n"], fix["tpr"], fix["tnr"]) == (3, 1.0, 0.5)
    assert fix["accuracy"] == pytest.approx(2 / 3)
    assert figures["aspects"]["description"]["n"] == 1
    assert figures["pairs"] == 4 and figures["skipped"] == 1
    assert figures["by_key"]["fix type E2"]["n"] == 3
    agreement = read_agreement(out)
    assert agreement is not None and agreement["judge"] == "keyword"
    line = agreement_line(agreement)
    assert line is not None and "descriptions 1.00, fixes 0.67 (4 pairs)" in line
    assert line.startswith("keyword judge agreement") and "--judge llm:<model>" in line


def test_bench_skips_without_the_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = _write(tmp_path / "pairs.jsonl", [_pair()])
    code = handwritten.main(["--data", str(tmp_path / "absent"), "--pairs", str(pairs)])
    assert code == 0
    assert "skipped: no EnConda-Bench data" in capsys.readouterr().err


def test_bench_refuses_an_invalid_pairs_file(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = _write(tmp_path / "pairs.jsonl", [_pair(aspect="both")])
    assert handwritten.main(["--data", str(data), "--pairs", str(pairs)]) == 2
    assert "line 1: aspect:" in capsys.readouterr().err


def test_no_agreement_without_figures(tmp_path: Path) -> None:
    assert read_agreement(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    assert read_agreement(tmp_path / "bad.json") is None
    assert agreement_line(None) is None and agreement_line({"judge": "offline"}) is None


def test_shipped_pairs_validate() -> None:
    pairs = load_pairs(DEFAULT_PAIRS)
    assert len(pairs) >= 300
    assert {p.error_type for p in pairs} == {"E1", "E2", "E4", "E6", "E7", "E8"}
    assert {p.aspect for p in pairs} == {"description", "fix"}
    positives = sum(p.label for p in pairs)
    assert 0.4 <= positives / len(pairs) <= 0.6


@pytest.mark.shared_data
def test_shipped_pairs_on_the_dev_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (DATA / "instances").is_dir():
        pytest.skip(f"EnConda-Bench dev split not found at {DATA}")
    pairs = load_pairs(DEFAULT_PAIRS)
    resolved = resolve(pairs, DATA)
    assert resolved.skipped == [], resolved.skipped[:3]
    out = tmp_path / "figures.json"
    assert handwritten.main(["--data", str(DATA), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["pairs"] == len(pairs) and figures["judge"] == "offline"
    for aspect in ("description", "fix"):
        assert figures["aspects"][aspect]["judge_errors"] == 0


def test_a_dataset_candidate_is_referenced_never_stored(data: Path) -> None:
    """``candidate_from`` names one of the golden error's own correction candidates: the text
    comes from the dataset at run time, and a pair must have exactly one of the two."""
    pair = HandPair.model_validate(
        _pair(candidate="", candidate_from=0, label=False, style="other-candidate")
    )
    resolved = resolve([pair, HandPair.model_validate(_pair(candidate="", candidate_from=7))], data)
    assert [p.candidate for p, _ in resolved.pairs] == ["pip install requirements.txt"]
    assert "has 2 correction candidates, no index 7" in resolved.skipped[0][1]
    for bad in ({"candidate_from": 0}, {"candidate": "", "candidate_from": None}):
        with pytest.raises(ValueError, match="exactly one of candidate"):
            HandPair.model_validate(_pair(**bad))


def test_a_pairs_file_that_is_a_fifo_or_a_link_is_refused(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pairs.fifo"
    os.mkfifo(fifo)
    real = _write(tmp_path / "real.jsonl", [_pair()])
    linked = tmp_path / "linked.jsonl"
    linked.symlink_to(real)
    for path in (fifo, linked):
        with pytest.raises(PairsFormatError, match="cannot be read") as info:
            load_pairs(path)
        assert str(path) in str(info.value)


def test_several_pair_sets_each_printed_and_written_together(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    positive = _pair(candidate="pip install -r requirements.txt  # the file")
    _write(tmp_path / "tuning-a.jsonl", [positive, _pair(candidate="pip install x", label=False)])
    _write(tmp_path / "tuning-b.jsonl", [_pair(candidate="pip install -r a.txt", label=False)])
    judge = KeywordJudge("-r ")
    monkeypatch.setattr(handwritten, "create_judge", lambda spec, api_base=None: judge)
    out = tmp_path / "figures.json"
    code = handwritten.main(
        ["--data", str(data), "--pairs", str(tmp_path / "tuning-*.jsonl"), "--json", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "tuning-a.jsonl: 2 pairs" in printed and "tuning-b.jsonl: 1 pairs" in printed
    figures = json.loads(out.read_text())
    assert figures["set"] == "tuning-a.jsonl + tuning-b.jsonl" and figures["pairs"] == 3
    # a: positive accepted, negative rejected; b: its negative accepted (keyword judge's miss)
    assert figures["sets"]["tuning-a.jsonl"]["aspects"]["fix"]["accuracy"] == 1.0
    assert figures["sets"]["tuning-b.jsonl"]["aspects"]["fix"]["accuracy"] == 0.0
    assert figures["aspects"]["fix"]["accuracy"] == pytest.approx(2 / 3)
    assert handwritten.main(["--data", str(data), "--pairs", str(tmp_path / "no-*.jsonl")]) == 2
    assert "no file matches" in capsys.readouterr().err


def test_tuning_shortcut_names_the_shipped_tuning_sets_never_the_test_set() -> None:
    tuning = handwritten.pair_files([], tuning=True)
    assert tuning and all(p.name.startswith("tuning-") for p in tuning)
    assert DEFAULT_PAIRS not in tuning
    assert handwritten.pair_files([], tuning=False) == [DEFAULT_PAIRS]
    for path in tuning:
        assert load_pairs(path)  # every shipped tuning set validates
