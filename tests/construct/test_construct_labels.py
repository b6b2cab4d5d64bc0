"""Each injector's label says what its edit changes (issue 47 item 6): checked word by word on
README lines written as real READMEs write them, and on the dev split's READMEs when present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_enconda.construct.injection_facts import RepoFacts, command_lines
from pytest_enconda.construct.injectors import candidates
from pytest_enconda.construct.models import CONSTRUCT_TYPES, Injection

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev" / "instances"
_QUOTED = re.compile(r"`([^`\n]+)`")


def _changed(injection: Injection) -> list[tuple[str, str]]:
    """(old word, new word) of each word the edit replaced in place."""
    out: list[tuple[str, str]] = []
    for edit in injection.edits:
        old, new = edit.old.strip("`").split(), edit.new.strip("`").split()
        if len(old) == len(new):
            out += [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    return out


def _check_misspelling(injection: Injection) -> None:
    """E1 ``misspell-NAME``: exactly the word NAME, an argument after ``install``, became the
    misspelling the label quotes."""
    (changed,) = _changed(injection)
    quoted = _QUOTED.findall(injection.label.error_description)
    name = injection.rule.removeprefix("misspell-")
    assert changed == (name, quoted[1]), (injection.edits, injection.label)
    assert quoted[2] == name
    old, new = injection.edits[0].old.split(), injection.edits[0].new.split()
    at = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    assert any(word.startswith("install") for word in old[:at]), (old, at)


def _misspellings(readme: str) -> list[Injection]:
    cmds = command_lines(readme)
    return [
        i
        for i in candidates("o/n", readme, cmds, RepoFacts(), "E1")
        if i.rule.startswith("misspell-") and not i.rule.startswith("misspell-system-")
    ]


@pytest.mark.parametrize(
    ("line", "names"),
    [
        # The forms the dev split's READMEs use (pip upgraded by python -m, an index option).
        ("python -m pip install --upgrade pip", ["pip"]),
        ("python3 -m pip install -U pip setuptools wheel", ["pip", "setuptools", "wheel"]),
        ("pip install numpy -i https://pypi.org/simple", ["numpy"]),
        ("pip install --extra-index-url https://download.pytorch.org/whl/cpu torch", ["torch"]),
        ("pip install -c constraints.txt requests && pytest", ["requests"]),
        ("pip3 install pip-tools $EXTRA", ["pip-tools"]),
    ],
)
def test_e1_misspells_a_requirement_never_the_module_after_m(line: str, names: list[str]) -> None:
    """more-itertools: ``python -m ppi install --upgrade pip`` was labelled as installing
    ``ppi``; the module after ``-m`` had been misspelled, and ``install`` was a candidate."""
    found = _misspellings(f"```\n{line}\n```\n")
    assert sorted(i.rule.removeprefix("misspell-") for i in found) == sorted(names)
    for injection in found:
        _check_misspelling(injection)
        upto = line.split().index("install") + 1
        assert injection.edits[0].new.split()[:upto] == line.split()[:upto]


def test_the_edit_and_label_agree_for_every_rule(tmp_path: Path) -> None:
    """Every rule's quoted erroneous command is the line the edit writes."""
    readme = (
        "```bash\npython3.11 -m venv .venv\n. .venv/bin/activate\n"
        "python -m pip install --upgrade pip\npip install -e '.[test]'\n"
        "pip install -r requirements.txt\nsudo apt-get install libxml2-dev\n```\n"
    )
    cmds = command_lines(readme)
    seen = set()
    for error_type in CONSTRUCT_TYPES:
        for injection in candidates("o/n", readme, cmds, RepoFacts(), error_type):
            seen.add(error_type)
            new_lines = [edit.new.strip() for edit in injection.edits]
            first = _QUOTED.findall(injection.label.error_description)
            if first and error_type in ("E1", "E2"):
                assert any(first[0] in line for line in new_lines), injection
            if injection.rule.startswith("misspell-") and "system" not in injection.rule:
                _check_misspelling(injection)
    assert {"E1", "E2"} <= seen


def _dev_readmes() -> list[Path]:
    return sorted(DEV.glob("*/*/README*"))[:400] if DEV.is_dir() else []


@pytest.mark.skipif(not DEV.is_dir(), reason="the dev split (../shared/data) is absent")
def test_e1_labels_match_their_edits_on_the_dev_splits_readmes() -> None:
    checked = 0
    for path in _dev_readmes():
        text = path.read_text(encoding="utf-8", errors="replace")
        for injection in _misspellings(text):
            _check_misspelling(injection)
            checked += 1
    assert checked > 0


def _e2(readme: str) -> list[Injection]:
    return candidates("o/n", readme, command_lines(readme), RepoFacts(), "E2")


def test_two_errors_of_one_type_get_two_names_and_levels_count_lines() -> None:
    """Two E2 errors in one README both became ``..._only_E2``: one overwrote the other, and
    the report counted 21 instances where 20 existed."""
    from pytest_enconda.construct.levels import compose, independent, plan_levels

    readme = "```\npip install -r requirements.txt\npython -m pip install -e .\n```\n"
    pool = _e2(readme)
    first = next(i for i in pool if i.lines == {1} and i.rule == "pip-missing-r")
    second = next(i for i in pool if i.lines == {2} and i.rule == "pip-subcommand")
    same_line = next(i for i in pool if i.lines == {1} and i.rule == "pip-subcommand")
    assert independent([first, second]) and not independent([first, same_line])
    planned, notes = plan_levels("o_n", [first, second], 2, [1, 2], 0)
    names = [plan.instance for plan in planned]
    assert names == [
        "o_n_error_readme_1",
        "o_n_error_readme_1_only_E2",
        "o_n_error_readme_1_only_E2_2",
    ]
    assert notes == []
    two = compose(readme, list(planned[0].errors)).split("\n")
    assert two[1] == "pip install requirements.txt" and two[2] == "python -m pip instal -e ."


def test_a_plain_pip_install_readme_says_why_no_e6_or_e7() -> None:
    from pytest_enconda.construct.absent_types import not_injected
    from pytest_enconda.construct.injectors import inject
    from pytest_enconda.construct.models import ConstructReport, RepoOutcome
    from pytest_enconda.construct.run import summary_lines

    readme = "# box\n\n```\npip install -e .\n```\n"
    cmds, facts = command_lines(readme), RepoFacts(name="python-box")
    picked = inject("o/n", readme, cmds, facts, list(CONSTRUCT_TYPES), 1, 0)
    made = {injection.error_type for injection in picked}
    assert "E6" not in made and "E7" not in made
    reasons = not_injected("o/n", readme, cmds, facts, list(CONSTRUCT_TYPES), made)
    assert set(reasons) == set(CONSTRUCT_TYPES) - made
    assert reasons["E6"].startswith("no rule applies: it needs two steps where the later needs")
    assert "lower bound or pin" in reasons["E7"] and "1 command line(s)" in reasons["E7"]
    outcome = RepoOutcome(
        repository="o/n", revision="r", accepted=True, injected=picked, not_injected=reasons
    )
    report = ConstructReport(repositories={"o/n": outcome})
    assert f"construct: o/n: no E6: {reasons['E6']}" in summary_lines(report)


def test_a_repository_named_owner_slash_name_needs_no_repo_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``construct OWNER/NAME --repo-mirror DIR``: the mirror's HEAD, or ``@REVISION``."""
    from test_construct_pipeline import FakeValidator
    from test_construct_real_readmes import _upstream

    from pytest_enconda.construct.options import ConstructInputError, ConstructOptions
    from pytest_enconda.construct.run import construct

    mirror, revision = _upstream(tmp_path)
    monkeypatch.chdir(tmp_path)  # "neurogym/neurogym" is no folder here
    for source in ("neurogym/neurogym", f"neurogym/neurogym@{revision[:12]}"):
        out = tmp_path / source.replace("/", "_").replace("@", "_")
        options = ConstructOptions(
            sources=(source,), out=out, per_type=1, levels=(1,), workers=1, repo_mirror=mirror
        )
        report = construct(options, lambda _: None, FakeValidator)
        outcome = report.repositories["neurogym/neurogym"]
        assert outcome.accepted and outcome.upstream_revision == revision
        assert (out / "repo_info.jsonl").is_file() and outcome.instances
    with pytest.raises(ConstructInputError, match="holds no git repository for other/repo"):
        construct(
            ConstructOptions(sources=("other/repo",), out=tmp_path / "o", repo_mirror=mirror),
            lambda _: None,
            FakeValidator,
        )
    with pytest.raises(ConstructInputError, match="needs --repo-mirror"):
        construct(
            ConstructOptions(sources=("neurogym/neurogym",), out=tmp_path / "p"),
            lambda _: None,
            FakeValidator,
        )


def test_the_command_line_takes_owner_slash_name_with_a_mirror_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_enconda.cli import main
    from pytest_enconda.construct.sources import names_a_repository

    monkeypatch.chdir(tmp_path)
    assert names_a_repository("more-itertools/more-itertools")
    assert names_a_repository("cdgriffith/Box@a4c10e977b57")
    assert not names_a_repository("a/../b") and not names_a_repository("a/b/c")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert not names_a_repository("a/b")  # a folder here is a folder
    code = main(["construct", "o/n", "--out", str(tmp_path / "out")])
    assert code != 0
    assert "expected a repository folder, a dataset folder or OWNER/NAME with --repo-mirror" in (
        capsys.readouterr().err
    )
