"""The offline judge's rules on hand-written pairs, and the labelled set it is measured on.

These tests pin down behaviour the design promises (what counts as the same fix, what the reason
says); the judge's accuracy on real data is a figure printed by
``python -m pytest_enconda.bench grading``, not a test threshold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.bench.grading import build_labelled_set, evaluate_judge, load_instances
from pytest_enconda.grading.judges import create_judge
from pytest_enconda.grading.judges.base import JudgeRequest, Verdict
from pytest_enconda.grading.judges.offline import OfflineJudge

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"


def fix(golden: str, predicted: str) -> Verdict:
    return OfflineJudge().judge(JudgeRequest(aspect="fix", golden=golden, predicted=predicted))


def description(golden: str, predicted: str) -> Verdict:
    return OfflineJudge().judge(
        JudgeRequest(aspect="description", golden=golden, predicted=predicted)
    )


@pytest.mark.parametrize(
    "predicted",
    [
        "pip install 'litgpt[all]'",
        'pip install "litgpt[all]"',
        "`pip install 'litgpt[all]'`",
        "```bash\npip install 'litgpt[all]'\n```",
        "$ pip install 'litgpt[all]'",
        "Run `pip install 'litgpt[all]'` so that all extras are installed.",
    ],
)
def test_the_same_command_written_differently_is_accepted(predicted: str) -> None:
    verdict = fix("pip install 'litgpt[all]'", predicted)
    assert verdict.similar is True, verdict.reason
    assert verdict.error is None


@pytest.mark.parametrize(
    ("golden", "predicted", "reason"),
    [
        (
            "pip install lhotse",
            "pip install lhotse-speech",
            "different package name: golden 'lhotse' vs predicted 'lhotse-speech'",
        ),
        (
            "pip install 'litgpt[all]'",
            "pip install litgpt --all",
            "different package name: golden 'litgpt[all]' vs predicted 'litgpt --all'",
        ),
        (
            "curl -L https://example.org/a.json -o a.json",
            "curl https://example.org/a.json -o a.json",
            "missing flag '-L'",
        ),
        (
            'Change "Python 3.6+" to "Python 3.8+".',
            'Change "Python 3.6+" to "Python 3.9+".',
            "different version: golden '3.8' vs predicted '3.9'",
        ),
        (
            "[Code of Conduct](CODE_OF_CONDUCT.md)",
            "[Code of Conduct](docs/CODE_OF_CONDUCT.md)",
            "different path: golden 'code_of_conduct.md' vs predicted 'docs/code_of_conduct.md'",
        ),
        (
            "pip install django-machina",
            "pip install --user django-machina",
            "adds flag '--user' to the golden command",
        ),
        (
            "git clone https://github.com/o/r.git && cd r && pip install -e .",
            "pip install -e . && git clone https://github.com/o/r.git && cd r",
            "same tokens in a different order",
        ),
        (
            'Swap the "Initial setup" and "Running webapp" sections.',
            "Add a note at the top telling readers to follow the setup first.",
            "different action: golden 'move' vs predicted 'add'",
        ),
    ],
)
def test_a_different_fix_is_rejected_with_the_difference_named(
    golden: str, predicted: str, reason: str
) -> None:
    verdict = fix(golden, predicted)
    assert verdict.similar is False
    assert verdict.reason.startswith(reason), verdict.reason


def test_flag_case_matters_only_for_one_letter_flags() -> None:
    assert fix("curl -L https://x.org/f", "curl -l https://x.org/f").similar is False
    assert fix("pip install --Upgrade foo", "pip install --upgrade foo").similar is True


def test_replace_x_with_y_is_credited_to_y_only() -> None:
    golden = "pip install lhotse"
    assert fix(golden, "Replace `pip install lhotse-speech` with `pip install lhotse`.").similar
    wrong = fix(golden, "Replace `pip install lhotse` with `pip install lhotse-speech`.")
    assert wrong.similar is False
    assert "lhotse-speech" in wrong.reason
    assert fix(golden, "Use `pip install lhotse` instead of `pip install lhotse-speech`.").similar


def test_prose_fix_with_the_same_action_and_target_is_accepted() -> None:
    verdict = fix(
        "Remove the line `pip install rlberry-core` and its preceding text.",
        "Delete the `pip install rlberry-core` line.",
    )
    assert verdict.similar is True
    assert "rlberry-core" in verdict.reason


def test_description_naming_the_same_command_and_problem_is_accepted() -> None:
    golden = (
        "The main installation command `pip install litgpt` is incomplete. It installs the base "
        "package but misses the `[all]` extra, which is required for all dependencies."
    )
    same = description(
        golden, "`pip install litgpt` misses the [all] extra, so dependencies are missing"
    )
    assert same.similar is True
    assert same.reason.startswith("mentions 'litgpt', '[all]'")
    other = description(golden, "The curl command is missing the -L flag to follow redirects.")
    assert other.similar is False
    assert "not 'litgpt', '[all]'" in other.reason


def test_a_shared_package_name_alone_does_not_make_descriptions_similar() -> None:
    golden = "The 'pipenv' dependency is missing from the system dependencies list."
    verdict = description(golden, "The `pipenv run` prefix is absent from the pre-commit command.")
    assert verdict.similar is False
    assert "mentions 'pipenv'" in verdict.reason


def test_empty_prediction_and_determinism() -> None:
    judge = OfflineJudge()
    empty = judge.judge(JudgeRequest(aspect="fix", golden="pip install x", predicted="  "))
    assert empty.similar is False
    assert empty.reason == "no fix predicted"
    requests = [
        JudgeRequest(aspect="fix", golden="pip install x", predicted="pip install y"),
        JudgeRequest(
            aspect="description", golden="Wrong path `a/b`.", predicted="Path a/b is wrong"
        ),
    ]
    first = judge.judge_many(requests)
    second = create_judge("offline-rules").judge_many(requests)
    assert first == second
    assert judge.stats().calls == 3
    assert judge.stats().errors == 0


def test_confidence_is_a_fraction() -> None:
    for verdict in (
        fix("pip install x", "pip install y"),
        fix("pip install x", "pip install x"),
        description("a b c d", "e f g h"),
    ):
        assert 0.0 <= verdict.confidence <= 1.0


@pytest.mark.shared_data
def test_labelled_set_from_the_golden_files() -> None:
    if not (DATA / "instances").is_dir():
        pytest.skip(f"EnConda-Bench reference data not found at {DATA} (../shared/data)")
    instances = load_instances(DATA).instances[:300]
    pairs = build_labelled_set(instances)
    kinds = {(p.aspect, p.kind, p.similar) for p in pairs}
    assert ("fix", "wrong-candidate", False) in kinds
    assert ("fix", "replace-wrong-with-golden", True) in kinds
    assert ("description", "other-error-same-type", False) in kinds
    assert ("description", "first-sentence", True) in kinds
    # A wrong candidate is never the golden answer itself.
    assert all(p.golden != p.predicted for p in pairs)
    assert len({(p.aspect, p.golden, p.predicted) for p in pairs}) == len(pairs)
    table, mistakes = evaluate_judge(OfflineJudge(), pairs)
    counted = table["fix"].n + table["description"].n
    assert counted == len(pairs)
    assert len(mistakes) == sum(table[a].fp + table[a].fn for a in ("fix", "description"))


# --- rules added for issue 7 (each of these verdicts was wrong before) ---------------------------


@pytest.mark.parametrize(
    ("golden", "predicted"),
    [
        ("Require Python `>=3.9,<3.12`.", "Require Python 3.9 to 3.11."),
        ("Require Python `>=3.9,<3.12`.", "Python at least 3.9 and below 3.12 is required."),
        ("Require Python `>=3.9,<3.12`.", "Require python `<=3.11, >=3.9`."),
        ("pip install lxml==3.6.4", "pip install lxml pinned to 3.6.4"),
        (
            "Everything else uses the Python (>= 3.6) standard library.",
            "Everything else uses the Python (3.6 or later) standard library.",
        ),
    ],
)
def test_a_version_range_written_in_words_is_the_same_range(golden: str, predicted: str) -> None:
    verdict = fix(golden, predicted)
    assert verdict.similar is True, verdict.reason


def test_a_range_in_words_is_compared_as_a_range() -> None:
    golden = "Require Python `>=3.9,<3.12`."
    assert fix(golden, "Require Python 3.9 through 3.11.").similar is True
    wrong = fix(golden, "Require Python 3.9 to 3.12.")
    assert wrong.similar is False
    assert wrong.reason.startswith("different version"), wrong.reason


def test_paths_are_compared_without_dot_slash_or_trailing_slash() -> None:
    same = [
        ("pip install -r requirements/dev.txt", "pip install -r ./requirements/dev.txt"),
        ("Change the link path to `CONTRIBUTING.md`.", "Link to `./CONTRIBUTING.md`."),
        ("Change the directory to `imgs/`.", "Change the directory to `imgs`."),
    ]
    for golden, predicted in same:
        verdict = fix(golden, predicted)
        assert verdict.similar is True, (predicted, verdict.reason)
    # Another folder is still another path.
    other = [
        ("pip install -r requirements/dev.txt", "pip install -r docs/requirements/dev.txt"),
        ("Change the directory to `imgs/`.", "Change the directory to `src/imgs`."),
    ]
    for golden, predicted in other:
        verdict = fix(golden, predicted)
        assert verdict.similar is False, (predicted, verdict.reason)
        assert "path" in verdict.reason, verdict.reason


def test_long_and_short_flags_are_the_same_flag() -> None:
    assert fix("pip install -e .[dev]", "pip install --editable .[dev]").similar is True
    conda = fix(
        "conda install -c conda-forge lifelines", "conda install --channel conda-forge lifelines"
    )
    assert conda.similar is True, conda.reason
    # "--name" is conda's "-n" only in a conda command.
    assert fix("docker run -n x", "docker run --name x").similar is False


@pytest.mark.parametrize(
    ("golden", "predicted", "reason"),
    [
        (
            "To install a specific version of a package, use: `pip install numpy==1.21.0`",
            "To install a specific version of a package, use: "
            "`pip install --force-reinstall numpy==1.21.0`",
            "adds flag '--force-reinstall' to 'pip install numpy==1.21.0'",
        ),
        (
            "Run `conda install -c conda-forge lifelines scipy numpy pandas` first.",
            "Run `conda install -c anaconda lifelines scipy numpy pandas` first.",
            "different flag in 'conda install -c conda-forge lifelines scipy numpy pandas': "
            "golden '-c conda-forge' vs predicted '-c anaconda'",
        ),
    ],
)
def test_the_same_command_with_another_flag_is_rejected(
    golden: str, predicted: str, reason: str
) -> None:
    verdict = fix(golden, predicted)
    assert verdict.similar is False
    assert verdict.reason.startswith(reason), verdict.reason


@pytest.mark.parametrize(
    "predicted",
    [
        "Move virtual environment activation after pip install commands",
        "Run pip install commands first, then activate the virtual environment",
        "After the pip install commands, activate the virtual environment.",
    ],
)
def test_a_reversed_order_is_rejected(predicted: str) -> None:
    verdict = fix("Move virtual environment activation before pip install commands", predicted)
    assert verdict.similar is False
    assert verdict.reason.startswith("reverses the golden order"), verdict.reason


def test_the_same_order_stated_otherwise_is_accepted() -> None:
    golden = "Move virtual environment activation before pip install commands"
    for predicted in (
        "Activate the virtual environment first, then run the pip install commands.",
        "The pip install commands should come after the virtual environment activation.",
        "Before the pip install commands, activate the virtual environment.",
    ):
        verdict = fix(golden, predicted)
        assert verdict.similar is True, (predicted, verdict.reason)


def test_command_sequences_are_compared_in_order() -> None:
    golden = "./configure\nmake\nmake install"
    for wrong in (
        "./configure\nmake install\nmake",
        "Run these in order:\n1. `./configure`\n2. `make install`\n3. `make`",
    ):
        verdict = fix(golden, wrong)
        assert verdict.similar is False, (wrong, verdict.reason)
    for right in (
        "First run `./configure`, then `make`, and finally `make install`.",
        "Move `make install` after `make`.",
        "./configure && make && make install",
    ):
        verdict = fix(golden, right)
        assert verdict.similar is True, (right, verdict.reason)
    moved = fix(golden, "Move `make install` after `make`.")
    assert moved.reason == "states the golden order of the commands it names"
    # A move that brings in a command the golden fix does not have is not the golden order.
    assert fix(golden, "Move `make test` after `make`.").similar is False
