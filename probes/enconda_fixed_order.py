"""A pytest plugin the test step loads (``-p enconda_fixed_order``): every run draws alike.

A project whose configuration turns on a test-order plugin draws a new order each run, and a
test that passes only in some orders is then graded by chance: jacebrowning/memegen's
``--random`` (pytest-random) passed 215 tests in both verification runs, and 3 of them failed
in the oracle's run, in another order. Fixing the seed makes the verification runs and every
graded run meet the same order; a project's shuffling stays on where it was on, and off where
it was off.

- pytest-randomly: ``--randomly-seed`` (also the seed it gives ``random`` before each test);
- pytest-random-order: ``--random-order-seed``, kept as a default so that it does not turn the
  shuffling on;
- pytest-random: ``--random-seed``;
- Hypothesis: ``--hypothesis-seed``, unless the project gave one: its examples are drawn at
  random each run too, so a property that fails for a rare example passed or failed by chance.

Standard library and pytest only (it runs inside the project's pytest); it reports nothing.
"""

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
