"""Project-level pytest configuration.

The small repositories under benchmark_cases/repos carry their own tests, which belong to those
repositories (run inside task containers), not to this project's runs.
"""

collect_ignore_glob = ["benchmark_cases/repos/*", "reports/*"]
