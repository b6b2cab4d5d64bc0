"""A pytest plugin the test step loads (``-p enconda_fixed_order``): every run draws alike.

A project whose configuration turns on a test-order plugin (jacebrowning/memegen's addopts
give pytest-random's ``--random``) draws a new order each run, and a test that passes only in
some orders is then graded by chance. Fixing the seeds makes the verification runs and every
graded run meet the same order and the same draws; a project's shuffling stays on where it was
on, and off where it was off.

- pytest-randomly: ``--randomly-seed`` (also the seed it gives ``random`` before each test);
- pytest-random-order: ``--random-order-seed``, kept as a default so that it does not turn the
  shuffling on;
- pytest-random: ``--random-seed``;
- Hypothesis: ``--hypothesis-seed``, unless the project gave one: its examples are drawn at
  random each run too, so a property that fails for a rare example passed or failed by chance;
- collection: ``random`` and NumPy's global generator are seeded before each test file is
  collected, so tests parametrized with random draws are the same tests each run (nevergrad
  picks a random subset of its optimizers at import: a graded run collected 11 tests of the
  PASS set under other names);
- each test: ``random`` and NumPy's global generator are seeded again before each test's setup
  (as pytest-randomly does; here from the test's id), so what a test draws does not hang on the
  tests before it, nor on the run (nevergrad's tests skip three in four of themselves with an
  unseeded NumPy draw: six of its 1,490 PASS-set tests were skipped in a graded run).

It also writes each test's id, as the test starts, to the file ``ENCONDA_CURRENT_TEST`` names:
a run the kernel kills for memory leaves no report, and the harness learns which test it was.

Standard library and pytest only (it runs inside the project's pytest); it reports nothing.
"""

import contextlib
import importlib.util
import os
import random
import sys
import zlib

import pytest

SEED = 1


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return  # pytest-xdist's workers take the seed their controller settled
    option = config.option
    if hasattr(option, "randomly_seed"):
        option.randomly_seed = SEED
    seed = getattr(option, "random_order_seed", None)
    if isinstance(seed, str) and seed.startswith("default:"):
        option.random_order_seed = f"default:{SEED}"
    elif seed is not None:
        option.random_order_seed = str(SEED)
    if hasattr(option, "random_seed") and hasattr(option, "random_group"):
        option.random_seed = SEED
    if hasattr(option, "hypothesis_seed") and option.hypothesis_seed is None:
        option.hypothesis_seed = str(SEED)


def pytest_collect_file():
    # No arguments: the spec's names changed across pytest versions (path, file_path), and a
    # hookimpl naming one the project's pytest lacks would stop the whole run.
    numpy = sys.modules.get("numpy")
    if numpy is None:
        try:
            if importlib.util.find_spec("numpy") is not None:
                import numpy
        except Exception:  # a broken NumPy is the project's to report, not the plugin's
            numpy = None
    _seed(numpy)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    current = os.environ.get("ENCONDA_CURRENT_TEST")
    if current:
        with contextlib.suppress(OSError), open(current, "w") as handle:
            handle.write(item.nodeid)
    # A seed of the test's own id: the same each run and whatever ran before, yet not one draw
    # shared by every test (one seed for all would skip all of nevergrad's or none).
    # Only a NumPy the tests imported themselves: importing it here would be the plugin's doing.
    _seed(sys.modules.get("numpy"), (SEED + zlib.crc32(item.nodeid.encode())) % 2**32)


def _seed(numpy, seed=SEED):
    random.seed(seed)
    if numpy is not None:
        # A project's stand-in "numpy" module may lack random.seed.
        with contextlib.suppress(Exception):
            numpy.random.seed(seed)
