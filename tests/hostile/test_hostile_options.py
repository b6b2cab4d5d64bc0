"""Option injection (issue 43): no value from a case, dataset, sidecar, record, repository or
agent reaches git, pip, apt-get, pytest or a shell as an option. Each input is refused where it
is read, and is inert (an operand, or left out) where it is passed; host-side calls run the
real programs and the marker file an injected option would create must not appear."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from gitutil import git
from pydantic import ValidationError

from pytest_enconda.aec.msb_import import MsbBase, MsbInstance, _mirror_has
from pytest_enconda.backends.fake import FakeBackend, FakeBox, canned
from pytest_enconda.backends.local import run_local
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import RepoSource
from pytest_enconda.cases.operands import OptionShapedError, operand, option_shaped
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.construct.sources import _last_tag
from pytest_enconda.errors import CaseFormatError, ImageBuildError, RepositoryUnavailable
from pytest_enconda.probing import imports, interpreter
from pytest_enconda.probing.junit import run_tests_command
from pytest_enconda.repo import ci_services
from pytest_enconda.repo.vcs_version import throwaway_git, throwaway_tag
from pytest_enconda.sandbox import repo
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.sandbox.images import _shell_words
from pytest_enconda.verify.attempt import attempt as verify_attempt
from pytest_enconda.verify.checkout import checkout_proof

pytest_plugins = ["pytester"]


def _injections(marker: Path) -> list[str]:
    """Option-shaped values that would create ``marker`` (or redirect a tool) if parsed."""
    return [
        f"--upload-pack=touch {marker}; echo",
        f"-u touch {marker}",
        f"--config=core.sshCommand=touch {marker}",
        f"-oProxyCommand=touch {marker}",
    ]


def _repository(root: Path) -> Path:
    """A one-commit git repository tagged ``v1.2``; its commit is the revision to fetch."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "hello.txt").write_text("hi\n")
    git(root, "add", "hello.txt")
    git(root, "commit", "-q", "-m", "one")
    git(root, "tag", "v1.2")
    return root


def _case_toml(folder: Path, url: str, revision: str = "x/y") -> Path:
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# toy\n")
    golden = {
        "level": 1,
        "errors": [
            {
                "error_type": "E4",
                "error_description": "d",
                "correction_candidates": ["a"],
                "golden_answer": "a",
            }
        ],
    }
    (folder / "golden.json").write_text(json.dumps(golden))
    (folder / "case.toml").write_text(
        f'id = "{folder.name}"\nsuite = "diagnosis"\nreadme = "README.md"\n'
        'golden = "golden.json"\ntest_command = "true"\n'
        f'[repository]\nkind = "url"\nurl = {json.dumps(url)}\nrevision = {json.dumps(revision)}\n'
    )
    return folder / "case.toml"


# -- the reported exploit, end to end ------------------------------------------------------------


def test_the_reported_case_runs_no_host_command(attempt, pytester: pytest.Pytester) -> None:
    """Issue 43's case.toml, run as reported: a case-format error naming repository.url, and
    the file its --upload-pack would have touched is not there."""
    marker = pytester.path / "pwned"
    _case_toml(pytester.path / "root" / "evil", f"--upload-pack=touch {marker}; echo")
    result, _ = attempt(
        "option injection: case.toml run",
        lambda: pytester.runpytest("root", "-k", "execution", "--agent=oracle"),
        (),
        attempt.whole_run,
    )
    text = result.stdout.str()
    assert not marker.exists()
    assert "root/evil/case.toml: invalid case" in text
    assert "repository.url: '--upload-pack=touch" in text
    assert "a URL cannot begin with '-'" in text
    result.assert_outcomes(errors=1)


def test_a_revision_beginning_with_a_dash_is_a_case_format_error(
    pytester: pytest.Pytester,
) -> None:
    marker = pytester.path / "pwned"
    _case_toml(
        pytester.path / "root" / "evil",
        "https://example.invalid/o/n.git",
        revision=f"--upload-pack=touch {marker}",
    )
    result = pytester.runpytest("root", "-k", "execution", "--agent=oracle")
    assert "repository.revision: '--upload-pack=touch" in result.stdout.str()
    assert not marker.exists()
    result.assert_outcomes(errors=1)


# -- loader: refused where the case is read ------------------------------------------------------


def test_load_case_refuses_option_shaped_urls_and_revisions(attempt, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for index, value in enumerate(_injections(marker)):
        as_url = _case_toml(tmp_path / f"url{index}", value)
        _, error = attempt(
            "option injection: case.toml repository.url",
            lambda path=as_url: load_case(path, [tmp_path]),
            (CaseFormatError,),
        )
        assert isinstance(error, CaseFormatError)
        assert [field for field, _ in error.problems] == ["repository.url"]
        assert str(as_url) in str(error)
        as_revision = _case_toml(tmp_path / f"rev{index}", "https://example.invalid/o/n", value)
        _, error = attempt(
            "option injection: case.toml repository.revision",
            lambda path=as_revision: load_case(path, [tmp_path]),
            (CaseFormatError,),
        )
        assert isinstance(error, CaseFormatError)
        assert [field for field, _ in error.problems] == ["repository.revision"]
    assert not marker.exists()
    # The same case with an ordinary URL loads: the refusal is the dash, nothing else.
    good = _case_toml(tmp_path / "good", "https://example.invalid/o/n.git", "main")
    assert load_case(good, [tmp_path]).spec.repository.url == "https://example.invalid/o/n.git"


def test_load_case_refuses_an_option_shaped_apt_package(attempt, tmp_path: Path) -> None:
    case = _case_toml(tmp_path / "apt", "https://example.invalid/o/n.git", "main")
    case.write_text(
        case.read_text().replace(
            "[repository]",
            '[environment]\napt_packages = ["hello", "-oDpkg::Pre-Invoke::=id"]\n[repository]',
        )
    )
    _, error = attempt(
        "option injection: case.toml environment.apt_packages",
        lambda: load_case(case, [tmp_path]),
        (CaseFormatError,),
    )
    assert isinstance(error, CaseFormatError)
    assert [field for field, _ in error.problems] == ["environment.apt_packages.1"]


def test_operand_names_what_it_refuses(attempt) -> None:
    _, error = attempt(
        "option injection: operand",
        lambda: operand("--index-url=http://evil", "requirement"),
        (OptionShapedError,),
    )
    assert "requirement '--index-url=http://evil' begins with '-'" in str(error)
    assert operand("pytest", "requirement") == "pytest"
    assert option_shaped("-rfoo") and not option_shaped("pkg-name")


# -- sandbox/repo.py: refused for every source, inert at the git call ----------------------------


def test_materialize_refuses_option_shaped_urls_and_revisions(attempt, tmp_path: Path) -> None:
    """Sources that never went through load_case (a dataset, a sidecar, an imported record)."""
    marker = tmp_path / "pwned"
    upstream = _repository(tmp_path / "upstream")
    commit = git(upstream, "rev-parse", "HEAD")
    sources = [RepoSource(kind="url", url=value, revision=commit) for value in _injections(marker)]
    sources += [
        RepoSource(kind="url", url=str(upstream), revision=value) for value in _injections(marker)
    ]
    sources += [RepoSource(kind="git", path=".", revision=v) for v in _injections(marker)]
    for index, source in enumerate(sources):
        _, error = attempt(
            "option injection: materialize",
            lambda s=source, i=index: repo.materialize(
                s, upstream, tmp_path / f"dest{i}", cache_dir=tmp_path / "cache"
            ),
            (RepositoryUnavailable,),
            attempt.whole_run,
        )
        assert error is not None and "begins with '-'" in str(error)
    assert not marker.exists()
    # An ordinary URL and revision still check out.
    tree = repo.materialize(
        RepoSource(kind="url", url=str(upstream), revision=commit),
        tmp_path,
        tmp_path / "ok",
        cache_dir=tmp_path / "cache",
    )
    assert tree and (tmp_path / "ok" / "hello.txt").read_text() == "hi\n"


def test_git_fetch_reads_an_option_shaped_url_as_a_repository(
    attempt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: with the refusal switched off, the real git fetch gets '--' before
    the URL and the revision, so --upload-pack names a repository that does not exist."""
    monkeypatch.setattr(repo, "_refuse_options", lambda url, revision: None)
    marker = tmp_path / "pwned"
    for index, value in enumerate(_injections(marker)):
        _, error = attempt(
            "option injection: git fetch url",
            lambda v=value, i=index: repo.materialize(
                RepoSource(kind="url", url=v, revision="x/y"),
                tmp_path,
                tmp_path / f"dest{i}",
                cache_dir=tmp_path / "cache",
            ),
            (RepositoryUnavailable,),
            attempt.whole_run,
        )
        assert error is not None
    assert not marker.exists()


def test_git_rev_parse_reads_an_option_shaped_revision_as_a_revision(
    attempt, tmp_path: Path
) -> None:
    upstream = _repository(tmp_path / "upstream")
    git_dir = upstream / ".git"
    # Without --end-of-options, rev-parse would print these back as options it passes through.
    for value in ("--all", "--git-dir", f"--upload-pack=touch {tmp_path / 'pwned'}"):
        resolved, _ = attempt(
            "option injection: git rev-parse revision",
            lambda v=value: repo._resolve(git_dir, v, 30),
            (),
        )
        assert resolved is None
    assert repo._resolve(git_dir, "v1.2", 30) == git(upstream, "rev-parse", "HEAD")


# -- construct/run.py and aec/msb_import.py: dataset revisions -----------------------------------


def test_construct_last_tag_reads_an_option_shaped_revision_as_a_revision(
    attempt, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    _repository(tmp_path / "work")
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "work"), str(mirror / "o+n" / "repo"))
    commit = git(tmp_path / "work", "rev-parse", "HEAD")
    assert _last_tag(mirror, "o/n", commit) == "1.2"
    # `git describe --tags --abbrev=0 --all` would describe HEAD as an option asked it to.
    for value in ("--all", "--contains", f"--upload-pack=touch {tmp_path / 'pwned'}"):
        tag, _ = attempt(
            "option injection: git describe revision",
            lambda v=value: _last_tag(mirror, "o/n", v),
            (),
        )
        assert tag == "0.0.0"
    assert not (tmp_path / "pwned").exists()


def test_msb_base_sha_is_hex_and_an_operand_at_git_cat_file(attempt, tmp_path: Path) -> None:
    _, error = attempt(
        "option injection: MSB base.sha",
        lambda: MsbInstance.model_validate(
            {"org": "o", "repo": "n", "number": 1, "base": {"sha": "--batch-all-objects"}}
        ),
        (ValidationError,),
    )
    assert error is not None and "base.sha" in str(error)
    mirror = _repository(tmp_path / "mirror")
    commit = git(mirror, "rev-parse", "HEAD")
    forged = MsbInstance.model_construct(
        org="o", repo="n", number=1, base=MsbBase.model_construct(sha="--batch-all-objects")
    )
    found, _ = attempt(
        "option injection: git cat-file sha", lambda: _mirror_has(mirror, forged), ()
    )
    assert found is False
    real = MsbInstance.model_validate(
        {"org": "o", "repo": "n", "number": 1, "base": {"sha": commit}}
    )
    assert _mirror_has(mirror, real) is True


# -- host commands: run_local and the C0 interpreter ---------------------------------------------


def test_run_local_runs_an_option_shaped_command_as_a_command(attempt, tmp_path: Path) -> None:
    """Without '--', bash reads a command beginning with '-' as its own options (a usage
    error, exit 2); after it, the word is run as the command it names."""
    rcfile = tmp_path / "rc.sh"
    rcfile.write_text(f"touch {tmp_path / 'pwned'}\n")
    result, _ = attempt(
        "option injection: bash -c command",
        lambda: run_local(f"--init-file={rcfile}", cwd=tmp_path, env=dict(os.environ), timeout=30),
        (),
    )
    assert result.exit_code == 127
    assert f"bash: line 1: --init-file={rcfile}: No such file" in result.output
    assert not (tmp_path / "pwned").exists()
    assert run_local("echo ok", cwd=tmp_path, env=dict(os.environ), timeout=30).output == "ok\n"


def test_an_option_shaped_interpreter_is_no_interpreter(attempt, tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("import os\n")
    result, _ = attempt(
        "option injection: C0 --python",
        lambda: imports.check_imports_host(tmp_path, "--version", scan_timeout=60),
        (),
        attempt.whole_run,
    )
    assert result.error_kind == "interpreter"
    assert "begins with '-'" in (result.error or "")
    found, _ = attempt(
        "option injection: report.json python_path",
        lambda: interpreter.candidates({"python_path": "--version"}, ""),
        (),
    )
    assert [c.found_by for c in found] == ["path", "path"]
    assert interpreter.candidates({"python_path": "/v/bin/python"}, "")[0].found_by == "report"


# -- in-container command lines built from sidecars, CI files and repositories -------------------


def test_pip_never_gets_an_option_shaped_test_tool_or_requirement(attempt, tmp_path: Path) -> None:
    """A real shell runs the test step with a stand-in ``python`` logging each call: the
    option-shaped entries never reach pip, the others install, and the refusal is said."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    stub = bin_dir / "python"
    stub.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 0\n')
    stub.chmod(0o755)
    command, _ = attempt(
        "option injection: pip install requirement",
        lambda: run_tests_command(
            "true",
            ["--index-url=http://evil.invalid/simple", "pytest-mock"],
            ["-r/etc/passwd", "django", "--extra-index-url=http://evil.invalid"],
        ),
        (),
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
    calls = [call for call in log.read_text().splitlines() if call.startswith("-m pip")]
    assert calls == [
        "-m pip install -q pytest-mock pytest-timeout",
        "-m pip install -q django",
    ]
    assert "evil" not in log.read_text() and "/etc/passwd" not in log.read_text()
    assert "'-r/etc/passwd' is not a requirement (an option); left out" in result.stderr


def test_an_option_shaped_apt_package_fails_the_image_build(attempt) -> None:
    _, error = attempt(
        "option injection: apt-get install package",
        lambda: _shell_words(["hello", "-oDpkg::Pre-Invoke::=id"]),
        (ImageBuildError,),
    )
    assert error is not None and "-oDpkg" in str(error)
    assert _shell_words(["hello", "libc6-dev"]) == "hello libc6-dev"


def test_a_versioningit_pattern_cannot_make_the_throwaway_tag_an_option(
    attempt, tmp_path: Path
) -> None:
    pyproject = {"tool": {"versioningit": {"vcs": {"match": ["--exec=touch*", "v*"]}}}}
    tag, _ = attempt("option injection: git tag name", lambda: throwaway_tag(pyproject), ())
    assert tag == "v0.0.0"
    # The line it goes into, run by a real shell: the checkout is tagged as asked.
    (tmp_path / "a.txt").write_text("a\n")
    subprocess.run(["bash", "-c", throwaway_git(shlex.quote(tag))], cwd=tmp_path, check=True)
    assert git(tmp_path, "tag") == "v0.0.0"


def test_a_ci_file_cannot_pass_rabbitmqctl_an_option(attempt) -> None:
    lines, _ = attempt(
        "option injection: rabbitmqctl user",
        lambda: ci_services._rabbitmq(
            {"RABBITMQ_DEFAULT_USER": "-n rabbit@evil", "RABBITMQ_DEFAULT_PASS": "pw"}
        ),
        (),
    )
    assert not any("add_user" in line for line in lines)
    ordinary = ci_services._rabbitmq({"RABBITMQ_DEFAULT_USER": "u", "RABBITMQ_DEFAULT_PASS": "p"})
    assert any("add_user u p" in line for line in ordinary)


class _LocalBox:
    """A box whose /tmp/enconda and /data/project are folders of the host: the command line
    verify builds is run by a real shell."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "enconda").mkdir(parents=True)
        (root / "project").mkdir()

    def _here(self, text: str) -> str:
        return (
            text.replace("/tmp/enconda", str(self.root / "enconda"))
            .replace("/data/project", str(self.root / "project"))
            .replace("python ", f"{sys.executable} ", 1)
        )

    def copy_in(self, src: Path | bytes, dest: str) -> None:
        data = src if isinstance(src, bytes) else Path(src).read_bytes()
        Path(self._here(dest)).write_bytes(data)

    def exec(self, command: str, *, timeout: float, **_: Any) -> ExecResult:
        done = subprocess.run(
            ["bash", "-c", self._here(command)], capture_output=True, text=True, timeout=timeout
        )
        return ExecResult(
            exit_code=done.returncode,
            output=done.stdout,
            duration=0.0,
            timed_out=False,
            truncated=False,
        )


def test_checkout_proof_reads_option_shaped_names_as_module_names(attempt, tmp_path: Path) -> None:
    box = _LocalBox(tmp_path / "box")
    out = tmp_path / "proof.json"
    attempt(
        "option injection: checkout_proof module",
        lambda: checkout_proof(box, ["--project=/etc", "json"], out),
        (),
        attempt.whole_run,
    )
    report = json.loads(out.read_text())
    assert report["project"] == str(tmp_path / "box" / "project")
    assert [module["name"] for module in report["modules"]] == ["--project=/etc", "json"]


def _outgrowing(
    _box: FakeBox, command: str, _timeout: float, _workdir: str, _env: Mapping[str, str]
) -> ExecResult:
    """The kernel kills pytest in a "test" whose id the run's output gives as an option."""
    if "memory.events" in command:
        return canned("oom_kill 1\n")
    if "current-test" in command and "pytest" not in command:
        return canned("--rootdir=/etc\n")
    if "pytest" in command:
        return canned("killed", 137)
    return canned("installed")


def test_verify_does_not_deselect_an_option_shaped_node_id(attempt, tmp_path: Path) -> None:
    from verifyfake import fake_context

    backend = FakeBackend(tmp_path / "fake", responder=_outgrowing)
    ctx = fake_context(tmp_path, None, [], backend=backend)
    image = backend.add_image("img")
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    verified, _ = attempt(
        "option injection: pytest --deselect",
        lambda: verify_attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, []),
        (),
        attempt.whole_run,
    )
    assert verified is False
    assert record.test_command == "python -m pytest"
    runs = [command for command in backend.commands() if "--junitxml" in command]
    assert runs and not any("--rootdir=/etc" in command for command in runs)
    assert not any("outgrew" in line for line in record.attempts)
