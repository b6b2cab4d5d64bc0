"""Our prompts, written for environment configuration (the paper's AEC setting).

Plain Python string formatting, never a template engine: a README may contain ``{{ }}`` or
``{% %}``, and it is shown verbatim.
"""

from __future__ import annotations

from string import Template

from ..error_types import prompt_lines
from ..kinds import TASK_KINDS, TaskKind
from ..package_cutoff import cutoff_note
from .output import DIAGNOSIS, OUTPUT_DIR, REPORT, SETUP, TEST_COMMAND

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

ERROR_TYPES = prompt_lines()

REPORT_KEYS = (
    "python_path (absolute path of the interpreter of the environment you built), "
    "python_version, torch_version (or null), cuda_available (true/false/null), gpu_count, "
    "ddp_expected_ok (whether multi-process training should work), env_tool (venv, uv, "
    "conda, poetry, system...), env_name, notes"
)

SYSTEM_PROMPT = f"""\
You are an autonomous software engineer configuring the environment of a repository. You work \
in a shell in a fresh Linux container as root, in the repository's root directory. Nobody \
will answer questions: work on your own until the environment is set up.

Rules:
- Run exactly one shell command per turn with the `bash` tool. Each command runs in a new \
subshell: `cd` and exported variables do not persist, so chain with `&&` (and activate a \
virtual environment in every command that needs it).
- Never start interactive programs (editors, pagers, REPLs, prompts): use flags such as `-y`, \
and `cat`, `sed` or heredocs to read and write files.
- Do not install the repository itself from a package index (PyPI or other): install it from \
this checkout.
- Do not modify the repository's tests, and do not create Dockerfiles.
- Discover in this order: CI configuration first (workflows and their Python matrix), then \
dependency manifests (pyproject.toml, setup.py/setup.cfg, requirements files, lock files), then \
the README, then other configuration (Makefile, tox.ini, environment files).
- Finish by running the repository's tests in the environment you built.
- When you are done and have written the output files, submit by running \
`echo {SUBMIT}` as a command on its own. You cannot act after that."""


def _section(title: str, body: str) -> str:
    return f"## {title}\n\n{body.strip() or '(none)'}\n"


def _cutoff_section(packages_before: str) -> list[str]:
    """The instance's package cutoff (``package_cutoff``), where its reference needed one."""
    if not packages_before:
        return []
    return [_section("Packages as of the reference's day", cutoff_note(packages_before))]


def _fill(text: str, *, workdir: str, readme_name: str) -> str:
    """A kind's prompt text (``kinds.TaskPrompt``) with this case's names filled in."""
    fields = {
        "output_dir": OUTPUT_DIR,
        "setup": SETUP,
        "report": REPORT,
        "diagnosis": DIAGNOSIS,
        "test_command": TEST_COMMAND,
        "workdir": workdir,
        "readme_name": readme_name,
        "report_keys": REPORT_KEYS,
        "error_types": ERROR_TYPES,
    }
    return Template(text).safe_substitute(fields)


def _outputs_section(kind: TaskKind) -> str:
    """What a kind without a prompt of its own asks: its contract's files."""
    listed = "".join(f"\n- `{name}`" for name in kind.outputs)
    return _section("What to leave behind", f"Write to `{OUTPUT_DIR}/` (create it):{listed}")


def instance_prompt(
    *,
    case_id: str,
    suite: str,
    workdir: str,
    readme_name: str,
    readme_text: str,
    profile: str,
    prior_knowledge: str = "",
    packages_before: str = "",
) -> str:
    """The task message: what to set up, the codebase profile and what to leave behind (the
    case's kind says what, ``TaskKind.prompt``)."""
    parts = [
        f"# Task {case_id}\n\nSet up the environment of the repository in `{workdir}` so that its "
        "tests and entry points run.\n",
        _section("Codebase profile (found automatically; check it)", profile),
        _section("Prior knowledge", prior_knowledge),
        *_cutoff_section(packages_before),
    ]
    kind = TASK_KINDS.get(suite)
    prompt = kind.prompt
    if prompt is None:
        parts.append(_outputs_section(kind))
        return "\n".join(parts)
    names = {"workdir": workdir, "readme_name": readme_name}
    parts.append(_section(_fill(prompt.title, **names), _fill(prompt.body, **names)))
    if prompt.shows_readme:
        parts.append(_section(f"README ({readme_name})", readme_text))
    return "\n".join(parts)


ZERO_SHOT_SYSTEM = """\
You are an expert at setting up software environments. You cannot run commands: from the \
repository's file tree, its README and the base environment, you write a diagnosis of the \
README's errors and a complete setup script."""


def zero_shot_prompt(
    *,
    case_id: str,
    suite: str,
    workdir: str,
    readme_name: str,
    readme_text: str,
    file_tree: str,
    environment: str,
    profile: str,
    packages_before: str = "",
) -> str:
    parts = [
        f"# Task {case_id}\n\nThe repository is checked out at `{workdir}` in a fresh Linux "
        "container where you are root. Its setup script will be sourced there in "
        f"one `bash -eo pipefail` shell from `{workdir}`, then the repository's tests run with "
        "the variables it exported.\n",
        _section("Base environment", environment),
        _section("File tree", file_tree),
        _section("Codebase profile (found automatically)", profile),
        *_cutoff_section(packages_before),
        _section(f"README ({readme_name})", readme_text),
    ]
    kind = TASK_KINDS.get(suite)
    if kind.prompt is not None and kind.prompt.zero_shot_answer:
        answer = _fill(kind.prompt.zero_shot_answer, workdir=workdir, readme_name=readme_name)
    else:
        # Every kind's contract holds a setup script; the zero-shot agent parses nothing else
        # from a kind that asks for nothing else.
        answer = "Answer with a fenced ```bash block holding the complete setup script."
    parts.append(_section("Your answer", answer))
    return "\n".join(parts)
