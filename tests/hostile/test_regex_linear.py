"""Regexes over untrusted text must be linear: every compiled regex of ``pytest_enconda``
against 1 MB adversarial texts, each in under a second of CPU time.

``patterns()`` imports each module of the package and collects its module-level compiled
patterns (also inside module-level tuples, lists and dicts) and its classes' ones, named
``module.NAME``. ``inputs(pattern)`` builds texts of ``SIZE`` characters from what the pattern
itself is made of: each character its atoms match, run long; its literal runs (``<output>``,
```` ``` ````) followed by long runs and a tail nothing matches, and repeated; pairs of its
atoms alternating (``a.a.a.``); and the usual suspects (blanks, newlines, quotes, backticks).
A backtracking regex is slow on exactly such texts; a linear one reads them in milliseconds.

A catastrophic match cannot be interrupted in-process (``re`` does not check for signals), so
the trials run in forked worker processes that are killed when one runs past ``WALL_SECONDS``.
"""

from __future__ import annotations

import ast
import functools
import importlib
import itertools
import multiprocessing
import pkgutil
import re
import sys
import time
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

import pytest

import pytest_enconda

SIZE = 1 << 20
MAX_INPUTS = 9
# Nothing in the package matches this: a run followed by it must be given up, which is when a
# backtracking regex retries every split of the run.
TAIL = "\x00"
# What a negated class (``[^"]``) is tried with: characters it does not name.
GENERIC = (" ", "\n", "\t", '"', "'", "`", "a", "0", ".", "-", "/", "\\", ",", "<", "{", "[")
_CATEGORY_CHARS = {
    C.CATEGORY_DIGIT: "7",
    C.CATEGORY_NOT_DIGIT: "x",
    C.CATEGORY_SPACE: " \n",
    C.CATEGORY_NOT_SPACE: "x",
    C.CATEGORY_WORD: "a_",
    C.CATEGORY_NOT_WORD: " -",
    C.CATEGORY_LINEBREAK: "\n",
    C.CATEGORY_NOT_LINEBREAK: "x",
}


@functools.cache
def modules() -> list[Any]:
    """Every module of the package; ``__main__`` ones are left out (importing one runs it)."""
    found = [pytest_enconda]
    for info in pkgutil.walk_packages(pytest_enconda.__path__, "pytest_enconda."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        found.append(importlib.import_module(info.name))
    return found


def _pattern_values(name: str, value: Any) -> Iterator[tuple[str, re.Pattern[Any]]]:
    if isinstance(value, re.Pattern):
        yield name, value
    elif isinstance(value, tuple | list | frozenset | set):
        for i, item in enumerate(value):
            if isinstance(item, re.Pattern):
                yield f"{name}[{i}]", item
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, re.Pattern):
                yield f"{name}[{key!r}]", item


def patterns() -> dict[str, re.Pattern[Any]]:
    """``module.NAME`` (or ``module.Class.NAME``, ``module.NAME[i]``) to each distinct pattern;
    one compiled in two places is tried once, under its first name."""
    seen: set[tuple[Any, int]] = set()
    named: dict[str, re.Pattern[Any]] = {}
    for module in modules():
        for attribute, value in vars(module).items():
            found = list(_pattern_values(f"{module.__name__}.{attribute}", value))
            if isinstance(value, type) and value.__module__ == module.__name__:
                for key, item in vars(value).items():
                    found += _pattern_values(f"{module.__name__}.{attribute}.{key}", item)
            for name, pattern in found:
                if (pattern.pattern, pattern.flags) not in seen:
                    seen.add((pattern.pattern, pattern.flags))
                    named[name] = pattern
    return named


# How a pattern is used, read from the source: a ``match`` or ``fullmatch`` starts at one
# place, the others at every place. A pattern used in any other way (passed on, iterated over
# in a tuple) is tried every way.
_SCANS = frozenset({"search", "findall", "finditer", "sub", "subn", "split"})
_ANCHORED = frozenset({"match", "fullmatch"})
_HARMLESS = frozenset({"pattern", "flags", "groups", "groupindex"})


def _use(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    """How a reference to a pattern uses it: a method's name, "other", or None (no use)."""
    if isinstance(getattr(node, "ctx", None), ast.Store):
        return None
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr in _HARMLESS:
        return None
    if (
        isinstance(parent, ast.Attribute)
        and parent.attr in _SCANS | _ANCHORED
        and isinstance(parents.get(parent), ast.Call)
    ):
        return parent.attr
    return "other"


@functools.cache
def _index() -> tuple[dict[tuple[str, str], set[str]], dict[str, set[str]]]:
    """((module, identifier) to how it is used there, module to the names it imports), from
    one walk of each module's source."""
    uses: dict[tuple[str, str], set[str]] = {}
    imports: dict[str, set[str]] = {}
    for module in modules():
        if module.__file__ is None:
            continue
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        names = imports.setdefault(module.__name__, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names.update(alias.name for alias in node.names)
            identifier = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else None
            )
            if identifier is not None:
                use = _use(node, parents)
                if use is not None:
                    uses.setdefault((module.__name__, identifier), set()).add(use)
    return uses, imports


def operations(name: str) -> tuple[str, ...]:
    """What to try the pattern called ``name`` with: ``findall`` (it tries every position
    ``search``, ``finditer``, ``sub`` and ``split`` would, and keeps going after a match), and
    ``match`` or ``fullmatch`` where those are how it is used."""
    module_name, _, rest = name.rpartition(".")
    attribute = re.sub(r"\[.*\]$", "", rest)
    if module_name not in sys.modules:  # a class's pattern: module.Class.NAME
        module_name = module_name.rpartition(".")[0]
    index, imports = _index()
    uses = set(index.get((module_name, attribute), ()))
    for other, names in imports.items():
        if other != module_name and attribute in names:
            uses |= index.get((other, attribute), set())
    if not uses or "other" in uses:
        return ("findall", "fullmatch")
    chosen = []
    if uses & _SCANS:
        chosen.append("findall")
    elif "match" in uses:
        chosen.append("match")
    if "fullmatch" in uses:
        chosen.append("fullmatch")
    return tuple(chosen)


def _set_chars(items: list[tuple[Any, Any]]) -> list[str]:
    """Characters a character class matches (or, negated, some it does not name)."""
    chars: list[str] = []
    negated = False
    for op, av in items:
        if op is C.NEGATE:
            negated = True
        elif op is C.LITERAL:
            chars.append(chr(av))
        elif op is C.RANGE:
            low, high = av
            chars += [chr(low), chr(high), chr((low + high) // 2)]
        elif op is C.CATEGORY:
            chars += list(_CATEGORY_CHARS.get(av, ""))
    if negated:
        return [c for c in (*GENERIC, "x", "=", ":") if c not in chars][:4]
    return chars


def _walk(items: Iterable[tuple[Any, Any]], atoms: list[str], literals: list[str]) -> None:
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 2:
            literals.append("".join(run))
        run.clear()

    for op, av in items:
        if op is C.LITERAL:
            run.append(chr(av))
            atoms.append(chr(av))
            continue
        flush()
        if op is C.NOT_LITERAL:
            atoms += [c for c in GENERIC[:3] if c != chr(av)]
        elif op is C.ANY:
            atoms += ["x", "\n"]
        elif op is C.IN:
            atoms += _set_chars(av)
        elif op is C.SUBPATTERN:
            _walk(av[-1], atoms, literals)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            _walk(av[2], atoms, literals)
        elif op is C.BRANCH:
            for branch in av[1]:
                _walk(branch, atoms, literals)
        elif op is C.ATOMIC_GROUP:
            _walk(av, atoms, literals)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            _walk(av[1], atoms, literals)
        elif op is C.GROUPREF_EXISTS:
            for branch in av[1:]:
                if branch is not None:
                    _walk(branch, atoms, literals)
    flush()


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _long(unit: str, size: int = SIZE) -> str:
    """``unit`` repeated to ``size`` characters, then ``TAIL``."""
    return unit * ((size - len(TAIL)) // max(1, len(unit))) + TAIL


def inputs(pattern: re.Pattern[Any]) -> list[tuple[str, Any]]:
    """(a label, a text of about ``SIZE`` characters) to try ``pattern`` on, at most
    ``MAX_INPUTS``; a bytes pattern gets them encoded. Each kind of text is one way a
    backtracking regex goes wrong: a run it can split many ways before the tail fails it; a
    literal (an opening) then such a run; many openings, together or apart, each of which
    scans a run after them; two of its atoms alternating (``a.a.a.``, nested or adjacent
    repeats)."""
    source = pattern.pattern
    text_source = source.decode("latin-1") if isinstance(source, bytes) else source
    flags = pattern.flags & ~re.UNICODE if isinstance(source, bytes) else pattern.flags
    atoms: list[str] = []
    found: list[str] = []
    _walk(_parser.parse(text_source, flags), atoms, found)
    own = _unique(atoms)
    # The opening literal (``<output>``, a fence) first, then the longest.
    literals = _unique([*found[:1], *sorted(found, key=len, reverse=True)])[:2]
    half = SIZE // 2
    kinds: list[list[tuple[str, str]]] = [
        [(f"{c!r} * N", _long(c)) for c in _unique([*own[:4], " ", "\n"])],
        [
            (f"{lit!r} then {c!r} * N", lit + _long(c))
            for lit in literals[:1]
            for c in _unique([" ", "\n", *own[:1]])
        ],
        [(f"{lit!r} * N", _long(lit)) for lit in literals],
        # Openings apart (a run of them may be refused as one): each may scan to the end.
        [(f"{lit + sep!r} * N", _long(lit + sep)) for lit in literals[:1] for sep in ("{", " ")],
        [
            (f"{start!r} * N/2 then {c!r} * N/2", start * (half // len(start)) + _long(c, half))
            for start in _unique([*literals[:1], *own[:1]])
            for c in _unique([" ", *own[1:2]])[:2]
        ],
        [(f"{a + b!r} * N", _long(a + b)) for a, b in itertools.islice(itertools.pairwise(own), 2)],
    ]
    chosen: dict[str, str] = {}
    # Round robin, so that every kind is tried before the cap is reached.
    for row in itertools.zip_longest(*kinds):
        for entry in row:
            if entry is not None and len(chosen) < MAX_INPUTS:
                chosen.setdefault(entry[1], entry[0])
    if isinstance(source, bytes):
        return [(label, text.encode("latin-1", "replace")) for text, label in chosen.items()]
    return [(label, text) for text, label in chosen.items()]


# ----------------------------------------------------------------------------- the trials

# CPU time, not wall time: the machine may be shared, and a linear regex reads 1 MB in far
# less than this however loaded it is.
CPU_SECONDS = 1.0
# A trial still running after this is a hang (and is killed): a second of CPU time takes
# longer than that only on a machine many times oversubscribed.
WALL_SECONDS = 20.0
WORKERS = 2


def _trial(pattern: re.Pattern[Any], text: Any, ops: tuple[str, ...]) -> tuple[str, float]:
    """(the slowest of ``ops`` on ``text``, its CPU seconds)."""
    slowest = ("", 0.0)
    for op in ops:
        started = time.process_time()
        getattr(pattern, op)(text)
        took = time.process_time() - started
        if took > slowest[1]:
            slowest = (op, took)
    return slowest


def _work(
    conn: Connection, named: dict[str, re.Pattern[Any]], ops: dict[str, tuple[str, ...]]
) -> None:
    """A worker: for each pattern name received, each input's (index, operation, seconds),
    announced before it starts, so a hang names the input it hung on."""
    while True:
        name = conn.recv()
        if name is None:
            return
        pattern = named[name]
        for index, (_, text) in enumerate(inputs(pattern)):
            conn.send(("start", index))
            conn.send(("done", index, *_trial(pattern, text, ops[name])))
        conn.send(("end",))


class _Worker:
    def __init__(
        self, context: Any, named: dict[str, re.Pattern[Any]], ops: dict[str, tuple[str, ...]]
    ) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_work, args=(child, named, ops), daemon=True)
        self.process.start()
        child.close()
        self.name: str | None = None
        self.index = -1
        self.since = time.monotonic()

    def give(self, name: str) -> None:
        self.name, self.index, self.since = name, -1, time.monotonic()
        self.conn.send(name)

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


def run_trials(named: dict[str, re.Pattern[Any]]) -> tuple[list[str], int]:
    """(what was slow: ``module.NAME on LABEL: ...``, the number of trials run)."""
    context = multiprocessing.get_context("fork")  # the workers inherit the imported package
    ops = {name: operations(name) for name in named}
    queue = list(named)
    workers = [_Worker(context, named, ops) for _ in range(min(WORKERS, len(queue)))]
    slow: list[str] = []
    trials = 0
    try:
        while queue or any(w.name is not None for w in workers):
            for worker in workers:
                if worker.name is None and queue:
                    worker.give(queue.pop(0))
            busy = {w.conn: w for w in workers if w.name is not None}
            for conn in wait(list(busy), timeout=1.0):
                worker = busy[conn]  # type: ignore[index]
                message = worker.conn.recv()
                worker.since = time.monotonic()
                if message[0] == "start":
                    worker.index = message[1]
                elif message[0] == "done":
                    trials += 1
                    _, index, operation, seconds = message
                    if seconds > CPU_SECONDS:
                        label = inputs(named[worker.name])[index][0]  # type: ignore[index]
                        slow.append(f"{worker.name} on {label}: {operation} {seconds:.2f} s CPU")
                else:
                    worker.name = None
            for i, worker in enumerate(workers):
                if worker.name is not None and time.monotonic() - worker.since > WALL_SECONDS:
                    label = inputs(named[worker.name])[worker.index][0]
                    slow.append(f"{worker.name} on {label}: killed after {WALL_SECONDS:.0f} s")
                    worker.stop()
                    workers[i] = _Worker(context, named, ops)
    finally:
        for worker in workers:
            worker.stop()
    return slow, trials


@pytest.mark.slow
def test_every_regex_is_linear_on_adversarial_text() -> None:
    named = patterns()
    assert len(named) > 200, "the package's patterns were not found"
    started = time.monotonic()
    slow, trials = run_trials(named)
    took = time.monotonic() - started
    print(f"{len(named)} patterns, {trials} trials of 1 MB in {took:.0f} s")
    assert not slow, "regexes slow on adversarial text:\n" + "\n".join(slow)
