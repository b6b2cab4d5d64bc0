"""The judge set generator and its measurement, on a small hand-written golden set."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pytest_enconda.bench.confusion import Confusion
from pytest_enconda.bench.grading import Instance
from pytest_enconda.bench.judge_rules import (
    proposal_region,
    version_in_words,
    wrong_flag_variant,
    wrong_order,
)
from pytest_enconda.bench.judge_set import (
    JudgePair,
    balanced,
    build_judge_set,
    judge_set_keys,
    main,
    measure,
    split_of,
)
from pytest_enconda.cases.models import GoldenAnswer
from pytest_enconda.grading.judges.offline import OfflineJudge

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"


def _instance(repo: str, errors: list[dict[str, object]]) -> Instance:
    return Instance(
        f"{repo}/{repo}_error_readme_1", repo, GoldenAnswer.model_validate({"errors": errors})
    )


GOLDEN = [
    _instance(
        "error_gen_acme_build",
        [
            {
                "error_type": "E6",
                "error_description": "The build steps are in the wrong order: `make install` "
                "runs before `make`, which fails because nothing is built yet.",
                "golden_answer": "./configure\nmake\nmake install",
                "correction_candidates": [
                    "./configure\nmake\nmake install",
                    "make\n./configure\nmake install",
                ],
            },
            {
                "error_type": "E2",
                "error_description": "The command to install the package in editable mode is "
                "missing the `-e` flag, so changes to the source are not picked up.",
                "golden_answer": "pip install -e .",
                "correction_candidates": ["pip install -e .", "pip install .", "pip install -U ."],
            },
            {
                "error_type": "E7",
                "error_description": "The README states that Python 2.7 is supported, which is "
                "incorrect and will cause installation errors.",
                "golden_answer": 'Change "Python 2.7+" to "Python >=3.9,<3.12".',
                "correction_candidates": ['Change "Python 2.7+" to "Python 3.6+".'],
            },
        ],
    ),
    _instance(
        "error_gen_acme_docs",
        [
            {
                "error_type": "E4",
                "error_description": "The requirements file path is wrong: the file lives in "
                "the `requirements/` folder, not in the repository root.",
                "golden_answer": "pip install -r requirements/dev.txt",
                "correction_candidates": ["pip install -r requirements.txt"],
            },
            {
                "error_type": "E6",
                "error_description": "The README tells users to install dependencies before "
                "cloning the repository, so the requirements file is not found.",
                "golden_answer": "Move the 'clone this repository' step to be before the "
                "'install dependencies' step.",
                "correction_candidates": [
                    "Combine the cloning and dependency installation steps into a single script."
                ],
            },
        ],
    ),
]


def test_generated_pairs_are_deterministic_labelled_and_split_by_repository() -> None:
    pairs = build_judge_set(GOLDEN, seed=3)
    assert pairs == build_judge_set(GOLDEN, seed=3)
    assert pairs != build_judge_set(GOLDEN, seed=4)
    rules = {(p.error_type, p.rule, p.similar) for p in pairs}
    # Each perturbation the issue names, with the label it must carry.
    for expected in [
        ("E6", "wrong-order", False),
        ("E6", "steps-as-move", True),
        ("E6", "order-flipped", False),
        ("E6", "order-other-way", True),
        ("E2", "wrong-flag", False),
        ("E2", "long-flag", True),
        ("E7", "version-in-words", True),
        ("E4", "path-variant", True),
        ("E4", "wrong-path", False),
    ]:
        assert expected in rules, expected
    for pair in pairs:
        assert pair.split == split_of(pair.instance.split("/")[0])
        assert pair.predicted.strip()
        assert pair.similar or pair.predicted != pair.golden
    # The E6 wrong order holds the same commands in another order.
    wrong = next(p for p in pairs if p.rule == "wrong-order")
    assert sorted(wrong.predicted.splitlines()) == sorted(wrong.golden.splitlines())
    assert wrong.predicted.splitlines() != wrong.golden.splitlines()
    # Round trip through the file format.
    assert JudgePair.model_validate_json(pairs[0].model_dump_json()) == pairs[0]


def test_perturbations_change_what_is_proposed_not_what_is_replaced() -> None:
    rng = random.Random(0)
    text = "Change `pip install -r requirements.txt` to `pip install -r requirements/run.txt`."
    start, end = proposal_region(text)
    assert text[start:end].startswith("`pip install -r requirements/run.txt`")
    flagged = wrong_flag_variant("pip install -e .", rng)
    assert flagged is not None and flagged != "pip install -e ." and flagged.endswith(" .")
    assert wrong_flag_variant("pip install --editable .", random.Random(1)) != ("pip install -e .")
    assert version_in_words("Python >=3.9,<3.12", random.Random(2)) in (
        "Python 3.9 to 3.11",
        "Python 3.9 through 3.11",
        "Python at least 3.9 and below 3.12",
    )
    assert wrong_order(["a", "a"], rng) is None
    assert wrong_order(["a", "b"], rng) == ["b", "a"]


def test_measurement_counts_balanced_accuracy_by_type_and_split() -> None:
    pairs = build_judge_set(GOLDEN, seed=0)
    table, mistakes = measure(OfflineJudge(), pairs, judge_set_keys)
    assert table["fix"].n + table["description"].n == len(pairs)
    assert len(mistakes) == sum(table[a].fp + table[a].fn for a in ("fix", "description"))
    by_type = [k for k in table if k.startswith("fix [") and k.endswith(("E2", "E4", "E6", "E7"))]
    assert sum(table[k].n for k in by_type) == table["fix"].n
    # Balanced accuracy is the mean of the two rates, not the share of right verdicts.
    c = Confusion(tp=9, fn=1, tn=1, fp=1)
    assert balanced(c) == pytest.approx((0.9 + 0.5) / 2)
    assert balanced(Confusion(tp=3)) is None


def test_main_refuses_a_folder_without_instances(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data", str(tmp_path)]) == 2
    assert "no EnConda-Bench data" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.shared_data
def test_judge_figures_on_the_shared_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (DATA / "instances").is_dir():
        pytest.skip(f"EnConda-Bench reference data not found at {DATA} (../shared/data)")
    out = tmp_path / "figures.json"
    assert main(["--data", str(DATA), "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    for aspect in ("description", "fix"):
        for split in ("tuned", "held-out"):
            for key in (f"{aspect} [{split}]", f"{aspect} [{split}] E6"):
                block = figures["new"][key]
                assert block["n"] > 0
                assert 0.0 <= block["balanced_accuracy"] <= 1.0
                assert block["balanced_accuracy"] == pytest.approx(
                    (block["tpr"] + block["tnr"]) / 2
                )
        assert figures["old"][aspect]["n"] > 0
    printed = capsys.readouterr().out
    assert "new set" in printed and "old set" in printed
