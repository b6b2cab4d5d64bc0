"""The four prompts of trajectory-derived memory (profile, queries, extraction, reflection).

Each answers with one JSON object, so that a model's reply is parsed the same way everywhere
(``extract.parse_json_answer``).
"""

from __future__ import annotations

PROFILE = """You read a software repository's README and its CI/workflow files and describe how \
its development environment is set up. We work inside a container already, as root: ignore any \
Docker or docker-compose steps.

Answer with one JSON object and nothing else:
{"language": {"name": "...", "version_constraint": "..."},
 "package_manager": {"name": "...", "install_command": "...", "config_file": "..."},
 "build_tools": ["..."],
 "test_framework": ["..."],
 "system_dependencies": {"identified_in_ci": ["..."], "likely_required": ["..."]}}
Use null or [] for what the files do not say; do not guess versions they do not state."""

QUERIES = """Below is the profile of a repository someone is about to set up inside a container \
(root, Ubuntu/Debian). Write 3 to 5 specific questions that developer would search a knowledge \
base of past setup problems for when the setup goes wrong: installing packages, language \
runtimes and their versions, build tools, system libraries, version conflicts. Name the \
versions, libraries and tools the profile names. Never ask about Docker.

Answer with one JSON object and nothing else: {"queries": ["...", "..."]}"""

EXTRACTION = """Below is the trajectory of an agent configuring a repository's environment: \
its commands, their exit codes and outputs. List every environment-configuration problem that \
really occurred in it and the solution that really fixed it (a later command succeeded because \
of it). Skip problems that were never fixed, and fixes that were never verified.

Write each as a triple that helps on ANY repository: do not name this repository, its paths, \
its own modules or its version (say "the project"), keep the names of tools, system packages \
and third-party libraries.
- "problem": what failed and the error it printed (the telling line)
- "solution": the root cause, then what fixed it
- "action": the shell command that fixed it

Answer with one JSON object and nothing else: \
{"triples": [{"problem": "...", "solution": "...", "action": "..."}]}"""

REFLECTION = """Below is the trajectory of an agent that configured a repository's environment \
successfully. Reflect on it so that the next setup goes faster.

Answer with one JSON object and nothing else:
{"problem_summary": "what made this setup hard, in one or two sentences",
 "critical_steps": ["2 to 5 steps without which it would have failed, as commands or actions"],
 "heuristics": ["general rules of thumb this run supports"],
 "tooling_insights": ["what was learnt about the tools (package managers, build tools)"]}"""


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def profile_messages(readme: str, ci_files: dict[str, str]) -> list[dict[str, str]]:
    ci = "\n\n".join(f"### {name}\n{text}" for name, text in ci_files.items()) or "(none)"
    return _messages(PROFILE, f"## README\n{readme[:20_000]}\n\n## CI files\n{ci[:30_000]}")


def queries_messages(profile_json: str) -> list[dict[str, str]]:
    return _messages(QUERIES, f"## Profile\n{profile_json}")


def extraction_messages(trajectory: str) -> list[dict[str, str]]:
    return _messages(EXTRACTION, f"## Trajectory\n{trajectory}")


def reflection_messages(trajectory: str) -> list[dict[str, str]]:
    return _messages(REFLECTION, f"## Trajectory\n{trajectory}")
