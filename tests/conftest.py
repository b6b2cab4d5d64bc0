"""Shared test configuration."""

# pytester's in-process runs drop modules first imported during a run; numpy (behind scipy,
# which grading uses) cannot be imported twice in one process, so load it before any run.
import scipy.optimize  # noqa: F401
