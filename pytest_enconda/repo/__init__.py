"""What a repository's own files declare, read from a host copy of the checkout, never run; a
file that cannot be parsed contributes nothing.

``read_repository(path) -> RepoFacts`` (``facts``) is the one reading the harness's readers share:
the heuristic agent, the codebase profile, construct and verify. Behind it:

- ``files``: bounded reads of the checkout's files, and the one parse of ``pyproject.toml``;
- ``python_range``: the declared Python range; ``poetry``, ``setup_py``: Poetry's constraints and
  setup.py's literal keywords, as every reader translates them;
- ``test_commands``: the command that runs the tests (CI, tox/nox, Makefile, pytest's
  configuration, the README) and the pytest plugins it needs; ``test_deps``: the declared test
  requirements; ``ci_services``: the services CI starts beside the tests;
- ``project``: what the project declares for its own installation (name, extras, groups, Poetry
  dependencies, requirement files); ``lockfile``: the versions a lockfile pins;
  ``vcs_version``: the version tools a checkout without ``.git`` needs a version for;
  ``checkout``: the checkout's own top-level packages.
"""

from __future__ import annotations

from .facts import RepoFacts, read_repository

__all__ = ["RepoFacts", "read_repository"]
