"""What real READMEs (public snapshots of EnConda-Bench's repositories) need from construct, without
Docker: the README prepared for the checkout (the project installed by its PyPI name, a clone of
the repository itself, sudo, CRLF), a dataset's repositories snapshotted from a mirror, and errors
on one install line composed word by word into levels 2 and 3."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_construct_pipeline import FakeValidator

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.audit import audit_cases
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.construct.filters import offline_filter
from pytest_enconda.construct.injection_facts import RepoFacts, command_lines, read_facts
from pytest_enconda.construct.injectors import candidates, inject
from pytest_enconda.construct.levels import compatible, compose, labels, merge_line, plan_levels
from pytest_enconda.construct.models import CONSTRUCT_TYPES, apply_edits
from pytest_enconda.construct.prepare import prepare_readme
from pytest_enconda.construct.run import ConstructOptions, construct

# As fundus, adaptix, lark, bitstring, git-gud (CRLF) and neurogym write them.
PYPI_README = "# fundus\n\n```\npip install fundus\n```\n"
CLONE_README = (
    "# neurogym\n\n```bash\ngit clone https://github.com/neurogym/neurogym.git\n"
    "cd neurogym\npip install -e .\n```\n"
)


def test_the_project_installed_by_its_pypi_name_installs_the_checkout() -> None:
    facts = RepoFacts(name="Fundus")
    text, notes = prepare_readme(PYPI_README, "README.md", "flairNLP/fundus", facts)
    assert extract_commands(text) == ["pip install -e ."]
    assert notes == ["line 4: `pip install fundus` -> `pip install -e .`"]
    # A version pin, extras, options and another package keep their meaning.
    readme = (
        "```\npip install adaptix==3.0.0b7\npip install -U 'adaptix[attrs]' tox\n"
        "python -m pip install lark --upgrade\npip install fundus-extra\n```\n"
    )
    text, _ = prepare_readme(readme, "README.md", "reagento/adaptix", RepoFacts())
    assert extract_commands(text) == [
        "pip install -e .",
        "pip install -U -e '.[attrs]' tox",
        "python -m pip install lark --upgrade",
        "pip install fundus-extra",
    ]


def test_pipx_comments_and_prompts_are_prepared_too() -> None:
    readme = (
        "```\npipx install dosage[css,bash]\n"
        'pipx install "dosage[css,bash] @ git+https://github.com/webcomics/dosage.git"\n'
        "pipx upgrade dosage\n"
        "pip install dosage  # simple install\n"
        'pip install "other[x] @ git+https://github.com/someone/other"\n```\n'
    )
    text, notes = prepare_readme(readme, "README.md", "webcomics/dosage", RepoFacts(name="dosage"))
    assert extract_commands(text) == [
        "pip install -e '.[css,bash]'",
        "pip install -e '.[css,bash]'",
        "pip install --upgrade -e .",
        "pip install -e .  # simple install",
        'pip install "other[x] @ git+https://github.com/someone/other"',
    ]
    assert len(notes) == 4
    assert text.startswith("```\npip install -e '.[css,bash]'\n")


def test_this_repositorys_archive_or_git_url_installs_the_checkout() -> None:
    readme = (
        "```\npip install --upgrade https://github.com/vacanza/python-holidays/tarball/dev\n"
        "pip install git+https://github.com/vacanza/python-holidays.git@main#egg=holidays\n"
        "pip install https://github.com/someone/else/archive/main.zip\n```\n"
    )
    text, notes = prepare_readme(readme, "README.md", "vacanza/python-holidays", RepoFacts())
    assert extract_commands(text) == [
        "pip install --upgrade -e .",
        "pip install -e .",
        "pip install https://github.com/someone/else/archive/main.zip",
    ]
    assert len(notes) == 2


def test_the_project_name_of_poetry_and_setup_py_projects(tmp_path: Path) -> None:
    poetry, setup_py = tmp_path / "poetry", tmp_path / "setup"
    poetry.mkdir()
    setup_py.mkdir()
    (poetry / "pyproject.toml").write_text('[tool.poetry]\nname = "sectionproperties"\n')
    (setup_py / "setup.py").write_text(
        "from setuptools import setup\nsetup(\n    name='git-gud',\n)\n"
    )
    assert read_facts(poetry).name == "sectionproperties"
    assert read_facts(setup_py).name == "git-gud"
    readme = "```\npip install sectionproperties\n```\n"
    text, _ = prepare_readme(
        readme, "README.md", "robbievanleeuwen/section-properties", read_facts(poetry)
    )
    assert extract_commands(text) == ["pip install -e ."]


def test_a_clone_of_the_repository_itself_and_its_cd_are_dropped_sudo_too() -> None:
    readme = CLONE_README.replace(
        "pip install -e .", "sudo apt-get install -y libfoo\npip install -e ."
    )
    text, notes = prepare_readme(readme, "README.md", "neurogym/neurogym", RepoFacts())
    assert extract_commands(text) == ["apt-get install -y libfoo", "pip install -e ."]
    assert len(notes) == 3 and "dropped" in notes[0] and "dropped" in notes[1]
    # Another repository's clone is a real step: kept, and so is a cd into it.
    other = "```\ngit clone https://github.com/other/tool\ncd tool\npip install -e .\n```\n"
    text, notes = prepare_readme(other, "README.md", "neurogym/neurogym", RepoFacts())
    assert extract_commands(text) == extract_commands(other) and notes == []


def test_crlf_readmes_become_lf_so_line_edits_apply() -> None:
    crlf = "# git-gud\r\n\r\n```\r\npip3 install git-gud\r\ngit gud\r\n```\r\n"
    text, notes = prepare_readme(crlf, "README.md", "benthayer/git-gud", RepoFacts())
    assert "\r" not in text and notes[0] == "line endings normalised to LF"
    cmds = command_lines(text)
    errors = inject("benthayer/git-gud", text, cmds, RepoFacts(), list(CONSTRUCT_TYPES), 1, 0)
    assert errors  # before: a CRLF line made the edit model raise (a line with a line break)


def test_rst_readmes_are_prepared_in_their_literal_blocks() -> None:
    rst = "asdf\n====\n\n::\n\n    $ pip install asdf\n    $ pytest\n"
    text, notes = prepare_readme(rst, "README.rst", "asdf-format/asdf", RepoFacts())
    assert extract_commands(text, "README.rst") == ["pip install -e .", "pytest"]
    assert "    $ pip install -e ." in text.split("\n") and len(notes) == 1


def test_same_line_edits_merge_word_by_word_or_not_at_all() -> None:
    old = "pip install ."
    assert merge_line(old, ["pip instal .", "PIP_NO_INDEX=1 pip install ."]) == (
        "PIP_NO_INDEX=1 pip instal ."
    )
    assert merge_line(old, ["pip install --no-deps .", 'pip install . "click<8"']) == (
        'pip install --no-deps . "click<8"'
    )
    # The same word changed twice, or two insertions at one place: no composition.
    assert merge_line(old, ["pip instal .", "pip isntall ."]) is None
    assert merge_line(old, ["pip install --no-deps .", "pip install --user ."]) is None


@pytest.fixture(params=["pip install fundus", "    $ pip install fundus --upgrade"])
def request_line(request: pytest.FixtureRequest) -> pytest.FixtureRequest:
    return request


def test_one_install_line_stays_at_level_one_and_says_why(
    tmp_path: Path, request_line: pytest.FixtureRequest
) -> None:
    """lark's README line: E2, E4 and E8 all edit it. Merged word by word they made "level 3",
    three edits of one command that one fix repairs; a level counts independent errors."""
    request = request_line
    facts = RepoFacts(name="fundus")
    readme = PYPI_README.replace("pip install fundus", request.param)
    text, _ = prepare_readme(readme, "README.md", "flairNLP/fundus", facts)
    errors = inject(
        "flairNLP/fundus", text, command_lines(text), facts, list(CONSTRUCT_TYPES), 1, 0
    )
    assert len({e.error_type for e in errors}) >= 3
    planned, notes = plan_levels("flairNLP_fundus", errors, 2, [1, 2, 3], 0)
    assert {p.level for p in planned} == {1}
    assert sorted(note.split(":")[0] for note in notes) == ["level 2", "level 3"]
    assert all("only 1 of the" in note and "independent" in note for note in notes)
    from pytest_enconda.construct.writer import write_instance, write_original, write_repo_info

    write_repo_info(tmp_path, {"flairNLP/fundus": "a" * 40})
    write_original(tmp_path, "flairNLP/fundus", text)
    for plan in planned:
        assert compatible(list(plan.errors))
        write_instance(
            tmp_path,
            "flairNLP/fundus",
            plan.instance,
            compose(text, list(plan.errors)),
            labels(list(plan.errors)),
        )
        for label in labels(list(plan.errors)):
            assert label.golden_answer in text  # the original command, every fix applied
    load = load_dataset(tmp_path)
    assert load.problems == [] and len(load.cases) == len(planned)
    flagged = {r.case_id: r.flags for r in audit_cases(load.cases, extract_commands).records}
    assert not any(flagged.values()), flagged


def _upstream(tmp_path: Path, missing: tuple[str, ...] = ()) -> tuple[Path, str]:
    """A mirror holding neurogym/neurogym as a bare git repository, its README in CRLF; the
    ``missing`` files are committed but their contents left out of the mirror's object store."""
    work = tmp_path / "src"
    (work / "neurogym").mkdir(parents=True)
    for number, name in enumerate(missing):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(bytes([number]) * 1024)
    (work / "neurogym" / "__init__.py").write_text("")
    (work / "pyproject.toml").write_text('[project]\nname = "neurogym"\ndependencies = ["numpy"]\n')
    (work / "README.md").write_bytes(CLONE_README.replace("\n", "\r\n").encode())
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": "/usr/bin:/bin",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    mirror = tmp_path / "mirror"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(mirror / "neurogym+neurogym" / "repo")],
        check=True,
    )
    bare = mirror / "neurogym+neurogym" / "repo"
    for name in missing:
        sha = subprocess.run(
            ["git", "--git-dir", str(bare), "rev-parse", f"{revision}:{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        (bare / "objects" / sha[:2] / sha[2:]).unlink()  # a local clone keeps objects loose
    return mirror, revision


def _selection(tmp_path: Path, revision: str) -> Path:
    """A dataset folder whose repo_info.jsonl names neurogym at ``revision``."""
    dataset = tmp_path / "selection"
    dataset.mkdir()
    (dataset / "repo_info.jsonl").write_text(
        json.dumps({"repository": "neurogym/neurogym", "revision": revision}) + "\n"
    )
    return dataset


def test_a_dataset_repository_is_snapshotted_prepared_with_its_upstream_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror, revision = _upstream(tmp_path)
    dataset = _selection(tmp_path, revision)
    out = tmp_path / "OUT"
    options = ConstructOptions(
        sources=(str(dataset),),
        out=out,
        per_type=1,
        levels=(1, 2, 3),
        workers=1,
        repo_mirror=mirror,
    )
    report = construct(options, lambda _: None, FakeValidator)
    outcome = report.repositories["neurogym/neurogym"]
    assert outcome.accepted and outcome.upstream_revision == revision
    assert outcome.revision != revision  # the prepared snapshot, in OUT/mirror
    assert any("dropped" in note for note in outcome.prepared)
    assert (out / "mirror" / "neurogym+neurogym" / "repo").is_dir()
    info = [json.loads(line) for line in (out / "repo_info.jsonl").read_text().splitlines()]
    assert info == [{"repository": "neurogym/neurogym", "revision": outcome.revision}]
    load = load_dataset(out)
    assert load.problems == [] and load.cases
    for case in load.cases:
        assert "git clone" not in case.readme_text and "\r" not in case.readme_text
    # A second run snapshots the same tree to the same revision: nothing is redone.
    FakeValidator.calls = []
    construct(options, lambda _: None, FakeValidator)
    assert FakeValidator.calls == []
    # Nor when the preparation rules changed since: the recorded snapshot is kept.
    monkeypatch.setattr(
        "pytest_enconda.construct.prepare.prepare_readme",
        lambda text, *_: (text + "\nchanged\n", ["changed"]),
    )
    again = construct(options, lambda _: None, FakeValidator)
    assert FakeValidator.calls == []
    assert again.repositories["neurogym/neurogym"].revision == outcome.revision


def test_a_snapshot_lacking_files_is_constructed_without_them_and_says_which(
    tmp_path: Path,
) -> None:
    mirror, revision = _upstream(tmp_path, missing=("data/big.bin", "docs/shot.png"))
    dataset = _selection(tmp_path, revision)
    out = tmp_path / "OUT"
    options = ConstructOptions(
        sources=(str(dataset),), out=out, per_type=1, levels=(1,), workers=1, repo_mirror=mirror
    )
    lines: list[str] = []
    report = construct(options, lines.append, FakeValidator)
    outcome = report.repositories["neurogym/neurogym"]
    assert outcome.accepted
    assert outcome.absent_files == ["data/big.bin", "docs/shot.png"] and outcome.absent_count == 2
    assert (
        "neurogym/neurogym: the upstream snapshot lacks 2 file(s), snapshotted without them: "
        "data/big.bin, docs/shot.png" in lines
    )
    snapshot = out / "mirror" / "neurogym+neurogym" / "repo"
    listed = subprocess.run(
        ["git", "--git-dir", str(snapshot), "ls-tree", "-r", "--name-only", outcome.revision],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert "pyproject.toml" in listed and "data/big.bin" not in listed
    # A resumed run keeps the snapshot and what it lacked.
    again = construct(options, lambda _: None, FakeValidator)
    assert again.repositories["neurogym/neurogym"].absent_count == 2


def test_the_prepared_snapshot_is_the_checkout_facts_are_read_from(tmp_path: Path) -> None:
    mirror, revision = _upstream(tmp_path)
    from pytest_enconda.construct.run import snapshot_revision

    new, notes = snapshot_revision("neurogym/neurogym", revision, mirror, tmp_path / "m")
    tree = tmp_path / "tree"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "m" / "neurogym+neurogym" / "repo"), "archive", new],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    assert read_facts(tree).name == "neurogym"
    assert extract_commands((tree / "README.md").read_text()) == ["pip install -e ."]
    assert notes[0] == "line endings normalised to LF"


def test_a_git_versioned_project_gets_its_version_before_the_checkout_install() -> None:
    readme = "Install:\n\n    pipx install dosage[css]\n\nthen run `dosage`.\n"
    text, notes = prepare_readme(
        readme, "README.md", "webcomics/dosage", RepoFacts(name="dosage"), scm_version="3.0"
    )
    assert extract_commands(text) == [
        "export SETUPTOOLS_SCM_PRETEND_VERSION=3.0",
        "pip install -e '.[css]'",
    ]
    assert "    export SETUPTOOLS_SCM_PRETEND_VERSION=3.0" in text.split("\n")  # same indent
    assert notes[-1].endswith("added (the checkout has no .git)")
    # Without a checkout install there is nothing to build: nothing is added.
    text, notes = prepare_readme(
        "```\npip install other\n```\n", "README.md", "o/n", RepoFacts(), scm_version="1.0"
    )
    assert notes == []


def test_the_pretended_version_is_the_revisions_last_tag(tmp_path: Path) -> None:
    from pytest_enconda.construct.prepare import scm_versioned
    from pytest_enconda.construct.run import snapshot_revision

    mirror, revision = _upstream(tmp_path)
    bare = mirror / "neurogym+neurogym" / "repo"
    subprocess.run(["git", "--git-dir", str(bare), "tag", "v1.2.3", revision], check=True)
    assert not scm_versioned(tmp_path / "src")
    (tmp_path / "src" / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools", "setuptools_scm>=7"]\n'
    )
    assert scm_versioned(tmp_path / "src")
    from pytest_enconda.construct.sources import _last_tag

    assert _last_tag(mirror, "neurogym/neurogym", revision) == "1.2.3"
    assert _last_tag(tmp_path / "nowhere", "neurogym/neurogym", revision) == "0.0.0"
    _, notes = snapshot_revision("neurogym/neurogym", revision, mirror, tmp_path / "m")
    assert not any("PRETEND" in note for note in notes)  # the upstream tree is not scm-versioned


@pytest.mark.parametrize("name", ["README.md"])
def test_prepare_changes_nothing_on_a_readme_that_installs_the_checkout(name: str) -> None:
    readme = "```\npython -m venv .venv\n. .venv/bin/activate\npip install -e '.[test]'\n```\n"
    assert prepare_readme(readme, name, "o/n", RepoFacts(name="n")) == (readme, [])


def _script(name: str):
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_and_distribution_count_runs_made_into_separate_outs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_construct_pipeline import REPOS

    outs = []
    for name in ("wordstat", "tabkit"):
        out = tmp_path / name
        options = ConstructOptions(
            sources=(str(REPOS / name),), out=out, per_type=1, levels=(1, 2, 3), workers=1
        )
        construct(options, lambda _: None, FakeValidator)
        outs.append(out)
    FakeValidator.refuse = ("local/confmerge",)
    refused = tmp_path / "confmerge"
    construct(
        ConstructOptions(sources=(str(REPOS / "confmerge"),), out=refused, workers=1),
        lambda _: None,
        FakeValidator,
    )
    summary = _script("construct_summary")
    assert summary.main([str(o) for o in [*outs, refused]]) == 0
    text = capsys.readouterr().out
    assert "| local/wordstat | accepted |" in text and "| local/tabkit | accepted |" in text
    assert "| local/confmerge | refused: the original README does not verify" in text
    kept = sum(len([r for r in read_report_of(o) if r.kept]) for o in outs)
    assert f"instances kept: {kept} (" in text
    # The PIP_NO_INDEX errors 'pass' under the fake validator: dropped, with the reason.
    assert "ineffective" in text
    distribution = _script("construct_distribution")
    assert distribution.main([*map(str, outs), "--release", str(tmp_path / "none")]) == 0
    text = capsys.readouterr().out
    total = sum(len(load_dataset(o).cases) for o in outs)
    assert f"| all | {total} |" in text.split("level (instances)")[1]


def read_report_of(out: Path) -> list:
    from pytest_enconda.construct.run import read_report

    report = read_report(out / "construct-report.json")
    return [r for outcome in report.repositories.values() for r in outcome.instances]


def test_a_refused_repository_is_prepared_again_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror, revision = _upstream(tmp_path)
    dataset = _selection(tmp_path, revision)
    options = ConstructOptions(
        sources=(str(dataset),), out=tmp_path / "OUT", workers=1, repo_mirror=mirror
    )
    FakeValidator.refuse = ("neurogym/neurogym",)
    first = construct(options, lambda _: None, FakeValidator).repositories["neurogym/neurogym"]
    assert not first.accepted
    # Better rules since: a new snapshot, verified again (and here accepted).
    monkeypatch.setattr(
        "pytest_enconda.construct.prepare.prepare_readme",
        lambda text, *_a, **_k: (text.replace("\r\n", "\n") + "\n", ["changed"]),
    )
    FakeValidator.refuse, FakeValidator.calls = (), []
    again = construct(options, lambda _: None, FakeValidator).repositories["neurogym/neurogym"]
    assert again.revision != first.revision and again.prepared == ["changed"]
    assert FakeValidator.calls[0] == "reference neurogym/neurogym" and again.accepted


def test_instances_no_longer_planned_are_removed_and_audit_drops_are_made_again(
    tmp_path: Path,
) -> None:
    import shutil

    from test_construct_pipeline import REPOS

    from pytest_enconda.construct.run import read_report

    out = tmp_path / "OUT"
    options = ConstructOptions(
        sources=(str(REPOS / "wordstat"),), out=out, per_type=1, levels=(1, 2, 3), workers=1
    )
    construct(options, lambda _: None, FakeValidator)
    repo_folder = out / "instances" / "error_gen_local_wordstat"
    kept = sorted(p.name for p in repo_folder.iterdir() if p.is_dir())
    # An earlier run's instance under a name this plan does not make: a duplicate of a kept one.
    shutil.copytree(repo_folder / kept[0], repo_folder / "local_wordstat_error_readme_99")
    # And a kept instance recorded as dropped by the audit (what it duplicated is gone now).
    report_path = out / "construct-report.json"
    report = read_report(report_path)
    outcome = report.repositories["local/wordstat"]
    victim = next(r for r in outcome.instances if r.kept and r.level == 1)
    outcome.instances = [
        r.model_copy(update={"kept": False, "reason": "audit flags: same_readme_same_labels"})
        if r.instance == victim.instance
        else r
        for r in outcome.instances
    ]
    report_path.write_text(report.model_dump_json())
    shutil.rmtree(repo_folder / victim.instance)
    FakeValidator.calls = []
    again = construct(options, lambda _: None, FakeValidator).repositories["local/wordstat"]
    assert not (repo_folder / "local_wordstat_error_readme_99").exists()
    assert sorted(p.name for p in repo_folder.iterdir() if p.is_dir()) == kept
    assert next(r for r in again.instances if r.instance == victim.instance).kept
    assert FakeValidator.calls == []  # a level-1 instance reuses its recorded validation


def test_an_export_and_the_command_that_needs_it_make_an_order_error() -> None:
    # btrack's README once prepared: the version setuptools-scm is told, then the checkout
    # install; swapped, the build runs without it and fails (the checkout has no .git).
    readme = "```\npip install btrack\n```\n"
    text, _ = prepare_readme(
        readme, "README.md", "quantumjot/btrack", RepoFacts(name="btrack"), scm_version="0.6.5"
    )
    cmds = command_lines(text)
    e6 = candidates("quantumjot/btrack", text, cmds, RepoFacts(name="btrack"), "E6")
    assert [i.label.golden_answer for i in e6] == [
        "export SETUPTOOLS_SCM_PRETEND_VERSION=0.6.5\npip install -e ."
    ]
    assert offline_filter(e6[0], text, RepoFacts(name="btrack")) is None
    broken = extract_commands(apply_edits(text, list(e6[0].edits)))
    assert broken == ["pip install -e .", "export SETUPTOOLS_SCM_PRETEND_VERSION=0.6.5"]
    # Another variable counts when a later command reads it; one nothing reads makes none.
    other = "```\nexport PREFIX=/opt/x\npip install -e .\nls $PREFIX\nexport UNUSED=1\ntrue\n```\n"
    found = candidates("o/x", other, command_lines(other), RepoFacts(name="x"), "E6")
    assert [i.label.golden_answer for i in found] == ["export PREFIX=/opt/x\nls $PREFIX"]


def test_poetry_dependencies_are_read_as_pep_440_constraints(tmp_path: Path) -> None:
    # As hazm declares them: the E1 and E7 rules had nothing to read in a Poetry project.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "hazm"\n[tool.poetry.dependencies]\npython = ">=3.8, <3.12"\n'
        'nltk = "^3.8.1"\nnumpy = "~1.24"\nflashtext = "2.7"\nzero = "^0.2.3"\n'
        'gensim = {version = "^4.3.1", optional = true}\nlocal = {path = "../x"}\n'
        'any = "*"\n[tool.poetry.extras]\nvec = ["gensim"]\n[tool.poetry.scripts]\nhz = "h:m"\n'
    )
    facts = read_facts(tmp_path)
    assert facts.name == "hazm" and facts.requires_python == ">=3.8,<3.12"
    assert [r.text for r in facts.dependencies] == [
        "nltk>=3.8.1,<4",
        "numpy>=1.24,<1.25",
        "flashtext==2.7",
        "zero>=0.2.3,<0.3",
        "any",
    ]
    assert [r.text for r in facts.extras["vec"]] == ["gensim>=4.3.1,<5"]
    assert facts.scripts == ["hz"]
    readme = "```\npip install -e '.[vec]'\n```\n"
    cmds = command_lines(readme)
    rules = {
        i.rule
        for kind in ("E1", "E7")
        for i in candidates("roshan-research/hazm", readme, cmds, facts, kind)
    }
    assert {"no-deps", "drop-extra-vec", "pin-nltk"} <= rules
