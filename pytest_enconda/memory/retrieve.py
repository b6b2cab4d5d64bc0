"""Retrieval for a case: queries from the codebase profile (templates offline, or a model's
hypothetical questions), hybrid search (BM25 and dense, ``hybrid.py``) under the leakage guard,
and the ``{{Prior_Knowledge}}`` text the retrieved triples fill.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .hybrid import Ranked
from .store import Hit, MemoryStore

Complete = Callable[[list[dict[str, str]]], str]


def _provider_failure(exc: Exception, model: str, what: str, api_base: str | None) -> Exception:
    """A provider call's failure as ``ModelUnavailable`` naming the endpoint it went to (an
    unreachable ``--api-base`` is the user's setting, not a bug to show a traceback for)."""
    from ..errors import ModelUnavailable

    where = api_base or "the provider's default endpoint"
    detail = f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"
    return ModelUnavailable(model, f"{what} at {where} failed: {detail}"[:1500])


def completer(
    model: str,
    api_base: str | None = None,
    temperature: float = 0.0,
    *,
    timeout: float | None = None,
    on_response: Callable[[Any], None] | None = None,
) -> Complete:
    """``messages -> text`` through litellm (imported on first call). ``on_response`` sees each
    raw response: an agent counts the call's tokens and cost as its own."""
    from ..agents.llm import api_key_for, model_for
    from ..errors import EncondaError
    from ..lazy import litellm

    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}

    def complete(messages: list[dict[str, str]]) -> str:
        try:
            response = litellm().completion(
                model=model_for(model, api_base), messages=messages, api_base=api_base,
                api_key=api_key_for(api_base, model), temperature=temperature, **extra,
            )  # fmt: skip
            if on_response is not None:
                on_response(response)
            return str(response.choices[0].message.content or "")
        except EncondaError:
            raise
        except Exception as exc:
            raise _provider_failure(exc, model, "completion", api_base) from exc

    return complete


def template_queries(profile: Any) -> list[str]:
    """3-5 questions from a ``CodebaseProfile`` with no model: what usually goes wrong with its
    language version, install command, system libraries and test runner."""
    language = profile.language
    version = profile.python_requires or profile.language_version or ""
    queries = []
    if profile.install_command:
        queries.append(f"{profile.install_command} fails installing {language} dependencies "
                       f"with {profile.package_manager or 'its package manager'}")  # fmt: skip
    if version or profile.ci_python_versions:
        versions = version or ", ".join(profile.ci_python_versions)
        queries.append(f"{language} {versions} version not available or requires a different "
                       f"{language} version")  # fmt: skip
    system = [*profile.ci_system_packages, *profile.likely_system_packages,
              *profile.readme_system_packages]  # fmt: skip
    if system:
        queries.append("missing system library " + " ".join(dict.fromkeys(system)) + " apt-get")
    if profile.test_framework:
        queries.append(f"{profile.test_framework} {profile.test_command or ''} fails: "
                       "No module named, command not found, missing test dependency")  # fmt: skip
    if profile.extras:
        queries.append("extra not installed " + " ".join(profile.extras) + " optional dependency")
    if len(queries) < 3:
        queries.append(f"{language} {profile.package_manager or ''} build tools "
                       f"{' '.join(profile.build_tools)} command not found")  # fmt: skip
    return queries[:5]


def llm_profile(repo: Path, readme: str, complete: Complete) -> dict[str, Any]:
    """The profile prompt's JSON for ``repo`` (README and CI files read from the host copy)."""
    from ..agents.profile import CI_GLOBS
    from .extract import parse_json_answer
    from .prompts import profile_messages

    ci = {}
    for pattern in CI_GLOBS:
        for path in sorted(repo.glob(pattern)):
            ci[path.relative_to(repo).as_posix()] = path.read_text(errors="replace")[:8000]
    return parse_json_answer(complete(profile_messages(readme, ci)))


def llm_queries(profile: dict[str, Any], complete: Complete) -> list[str]:
    from .extract import parse_json_answer
    from .prompts import queries_messages

    answer = parse_json_answer(complete(queries_messages(json.dumps(profile, indent=1))))
    queries = answer.get("queries")
    if not isinstance(queries, list):
        return []
    return [q.strip() for q in queries if isinstance(q, str) and q.strip()][:5]


# Where a lookup's queries came from (``memory.json``'s ``query_source``).
FROM_MODEL = "model"
FROM_TEMPLATES = "templates"
MODEL_GAVE_NONE = "templates (the model's answer held no queries)"


def profile_queries(profile: Any, complete: Complete | None = None) -> tuple[list[str], str]:
    """A case's hypothetical queries and their source: the model's, asked with the profile's AEC
    JSON, when ``complete`` is given; else (or when the model names none) the templates. A model
    that cannot be reached stops the lookup (``ModelUnavailable``): the run asked for it."""
    if complete is not None:
        queries = llm_queries(profile.to_aec(), complete)
        if queries:
            return queries, FROM_MODEL
        return template_queries(profile), MODEL_GAVE_NONE
    return template_queries(profile), FROM_TEMPLATES


@dataclass
class Retrieval:
    """What a lookup gave: ``method`` is ``bm25`` or ``hybrid`` (BM25 and ``embedder``'s
    dense list, fused by reciprocal rank); ``ranked`` has each given triple's ranks."""

    queries: list[str]
    hits: list[Hit]
    excluded: list[str] = field(default_factory=list)
    method: str = "bm25"
    embedder: str | None = None
    ranked: list[Ranked] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "embedder": self.embedder,
            "queries": self.queries,
            "excluded_projects": self.excluded,
            "given": [hit.to_json() for hit in self.hits],
            "ranks": [entry.to_json() for entry in self.ranked],
        }


# The memory file's own embedder (``hybrid.resolve_embedder`` with no spec).
FROM_FILE = "file"


def retrieve(
    store: MemoryStore,
    queries: Sequence[str],
    k: int = 5,
    exclude_repositories: Sequence[str] = (),
    embedder: Any = FROM_FILE,
) -> Retrieval:
    """The best ``k`` triples over all queries: each query's BM25 list and, with an embedder,
    its dense list, fused by reciprocal rank (a triple several lists find ranks above one a
    single list puts first). ``embedder``: an ``Embedder``, ``None`` (BM25 alone) or
    ``FROM_FILE``, the one the file's vectors came from (none if it holds none)."""
    from .hybrid import fuse, resolve_embedder
    from .normalise import project_key

    if isinstance(embedder, str):
        embedder = resolve_embedder(store, None if embedder == FROM_FILE else embedder)
    ranked = fuse(store, list(queries), exclude_repositories, embedder)[:k]
    return Retrieval(
        list(queries),
        [entry.hit for entry in ranked],
        sorted({project_key(r) for r in exclude_repositories if r}),
        "bm25" if embedder is None else "hybrid",
        None if embedder is None else embedder.name,
        ranked,
    )


def prior_knowledge(hits: Sequence[Hit]) -> str:
    """The ``{{Prior_Knowledge}}`` text: numbered triples, placeholders explained once."""
    if not hits:
        return "No prior knowledge was retrieved for this repository."
    lines = ["Experience from configuring other repositories (<project> stands for the project "
             "being set up, <workdir> for its folder, <version> for its version):"]  # fmt: skip
    for n, hit in enumerate(hits, 1):
        lines.append(f"{n}. Problem: {hit.problem}\n   Solution: {hit.solution}\n"
                     f"   Action: {hit.action}")  # fmt: skip
    return "\n".join(lines)


def record_given(path: Path, case_id: str, retrieval: Retrieval, **extra: Any) -> None:
    """Which triples the case was given (``agent/memory.json``): the ablation reads it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"case_id": case_id, **retrieval.to_json(), **extra}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
