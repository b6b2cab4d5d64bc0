"""Exceptions shared by every stage.

A ``HarnessError`` means the harness could not build what the agent needs (image, repository,
container): items report it as an *error*, never as the agent's *failure*.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class EncondaError(Exception):
    """Base class of the plugin's own errors."""


class InputError(EncondaError):
    """The user's input (a file, a field, an argument) is not what a command expects; the
    message names the input and what was expected. The command line exits 2 for it, as argparse
    does for a bad argument, so a script tells "fix your input" from "the run failed" (1)."""


class HarnessError(EncondaError):
    """The harness, not the agent, failed (image build, Docker, repository)."""


class RepositoryUnavailable(HarnessError):
    def __init__(self, url: str, revision: str | None, reason: str = "") -> None:
        self.url = url
        self.revision = revision
        self.reason = reason
        where = f"{url}@{revision}" if revision else url
        msg = f"repository unavailable: {where} (use --repo-mirror DIR)"
        if reason:
            msg += f": {reason}"
        super().__init__(msg)


class ImageBuildError(HarnessError):
    """An image (base, environment or task layer) failed to build."""


class ModelUnavailable(HarnessError):
    """The model provider failed (an HTTP error, an unreadable or empty reply, no answer in
    time, a context-length refusal): an outage must not look like a weak agent, and no outcome is
    saved, so ``--resume`` runs the agent again."""

    def __init__(self, model: str, reason: str, status: int | None = None) -> None:
        self.model = model
        self.status = status
        self.reason = reason
        where = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"model {model} unavailable: {where}{reason}")


# How an item the cost ceiling kept from finishing is reported (its skip reason starts so).
NOT_FINISHED = "not finished (cost ceiling)"


class RunStopped(EncondaError):
    """The run-wide cost ceiling (``--max-cost``) stopped this case: before its agent started,
    or mid-run (its agent or judge was refused a model call). The case is *not finished*: its
    items are skipped with the reason and counted apart, which is neither the agent's failure
    nor a harness fault, and no outcome is saved, so ``--resume`` runs it again."""


class CaseFormatError(EncondaError):
    """A case or golden file does not match its model.

    ``problems`` are (field, message) pairs so the collection error can list each one.
    """

    def __init__(self, path: str, problems: list[tuple[str, str]]) -> None:
        self.path = path
        self.problems = problems
        lines = [f"{path}: invalid case"]
        lines += [f"  {field}: {message}" for field, message in problems]
        super().__init__("\n".join(lines))


@contextlib.contextmanager
def harness_step(what: str) -> Iterator[None]:
    """Anything but the plugin's own errors raised inside is the harness's failure at ``what``.

    Docker API errors, a full disk, a probe script's crash: none of them is the agent's doing,
    so they surface as a ``HarnessError`` (an item *error*), never as a failed item.
    """
    try:
        yield
    except EncondaError:
        raise
    except Exception as exc:
        raise HarnessError(f"{what} failed in the harness: {exc}") from exc
