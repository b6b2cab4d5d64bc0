"""The AEC instance prompt: the task text, the priority order of what to read, the rules, the
output contract, and two slots, ``{{Codebase_Profile}}`` and ``{{Prior_Knowledge}}``.

The profile comes from ``agents.profile`` (found in the repository, any ecosystem); the prior
knowledge from the memory module (``memory.retrieve``: the model's hypothetical queries from the
profile, or template ones offline; hybrid search of a memory file under the leakage guard on the
case's own repository) when the agent is given a memory file, else the slot says plainly that
none was given. Filled by ``str.replace``, never a template
engine: a README may hold ``{{ }}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..agents.output import OUTPUT_DIR, SETUP, TEST_COMMAND

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
PROFILE_SLOT = "{{Codebase_Profile}}"
KNOWLEDGE_SLOT = "{{Prior_Knowledge}}"
NO_MEMORY = "(no prior knowledge: no memory file was given to this agent; --memory FILE fills it)"

AEC_SYSTEM_PROMPT = f"""\
You are an autonomous software engineer doing automated environment configuration. You work \
in a shell in a fresh Ubuntu/Debian container, already as root (no sudo needed), in the \
repository's root directory. Nobody will answer questions: work on your own until the \
repository is built and its tests have run.

Rules:
- Run exactly one shell command per turn with the `bash` tool. Each command runs in a new \
subshell: `cd` and exported variables do not persist, so chain with `&&`.
- Never start interactive programs (editors, pagers, REPLs, prompts): use flags such as `-y`.
- When you are done and have written the output files, submit by running \
`echo {SUBMIT}` as a command on its own. You cannot act after that."""

AEC_INSTANCE_TEMPLATE = f"""\
# Task {{{{Case_Id}}}}

{{{{Task}}}} The repository is at `{{{{Workdir}}}}`.{{{{Language_Hint}}}}

## How to work
1. Read, in this order of priority: the CI configuration (.github/workflows, .gitlab-ci.yml, \
.travis.yml, azure-pipelines, Jenkinsfile, ...: its build matrix tells you which toolchain and \
language versions are supported); then the dependency files (pyproject.toml, setup.py, \
requirements*.txt, Cargo.toml, go.mod, package.json, pom.xml, build.gradle, CMakeLists.txt, \
Makefile, composer.json, ...); then the README; then other configuration (tox.ini, .tool-versions, \
.nvmrc, rust-toolchain, Dockerfiles only as hints).
2. Install the system packages, toolchains and dependencies those files ask for, then build the \
project from this checkout.
3. Run the repository's test suite and read its summary.

## Rules
- Install the project from this source checkout. Never install the project itself from a \
package registry (no `pip install <the project>`, `cargo install <the project>`, \
`npm install <the project>`); its dependencies from registries are fine.
- Never modify, delete or skip the repository's tests to make them pass.
- Do not write or use a Dockerfile or docker: you are already inside the container, as root.
- Where the CI matrix lists several versions, pick one it lists (the newest that installs).

## Codebase profile (found automatically; check it)
{PROFILE_SLOT}

## Prior knowledge (from configuring other repositories)
{KNOWLEDGE_SLOT}

## What to leave behind
Write to `{OUTPUT_DIR}/` (create it):
- `{SETUP}`: the complete bash script that configures this environment from a fresh container \
(it is sourced in one `bash -eo pipefail` shell from `{{{{Workdir}}}}`; what it exports, PATH or \
an activated venv say, stays for the test command). It must not run the tests.
- `{TEST_COMMAND}`: the one command line that runs the repository's tests (run from \
`{{{{Workdir}}}}` after the setup script), e.g. `cargo test` or `python -m pytest -rA`. Prefer \
the runner's verbose form, so every test's name and result is printed.
"""


def aec_instance_prompt(
    *,
    case_id: str,
    task: str,
    workdir: str,
    profile: str,
    prior_knowledge: str,
    language: str | None = None,
) -> str:
    """The template with its slots filled (the profile and the knowledge last: their text may
    contain anything, and nothing after them is substituted)."""
    hint = f" Its main language is {language}." if language else ""
    text = (
        AEC_INSTANCE_TEMPLATE.replace("{{Case_Id}}", case_id)
        .replace("{{Task}}", task.rstrip(".") + ".")
        .replace("{{Workdir}}", workdir)
        .replace("{{Language_Hint}}", hint)
    )
    head, _, tail = text.partition(PROFILE_SLOT)
    middle, _, end = tail.partition(KNOWLEDGE_SLOT)
    return head + (profile.strip() or "(none found)") + middle + prior_knowledge.strip() + end


def aec_profile_json(profile: Any) -> str:
    """The ``{{Codebase_Profile}}`` text: the profile's AEC JSON (``CodebaseProfile.to_aec``)
    in a fenced block, so that the model reads it as data."""
    return "```json\n" + json.dumps(profile.to_aec(), indent=2) + "\n```"


def prior_knowledge_for(
    memory: str | Path | None,
    profile: Any,
    repository: str,
    record: Path | None = None,
    *,
    complete: Any = None,
    embedder: str | None = None,
    embedding_api_base: str | None = None,
) -> str:
    """The ``{{Prior_Knowledge}}`` text: triples retrieved from ``memory`` for this profile
    (the case's own repository excluded), or the marker that no memory was given. The queries
    are the model's hypothetical ones when ``complete`` (``messages -> text``) is given, else
    the templates; ``embedder`` (default: the file's own) may be served at
    ``embedding_api_base``."""
    if not memory:
        return NO_MEMORY
    from ..memory.hybrid import resolve_embedder
    from ..memory.retrieve import prior_knowledge, profile_queries, record_given, retrieve
    from ..memory.store import MemoryStore

    queries, source = profile_queries(profile, complete)
    with MemoryStore(memory, readonly=True) as store:
        chosen = resolve_embedder(store, embedder, embedding_api_base)
        found = retrieve(store, queries, exclude_repositories=[repository], embedder=chosen)
    if record is not None:
        record_given(record, repository, found, memory=str(memory), query_source=source)
    return prior_knowledge(found.hits)
