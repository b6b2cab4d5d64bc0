"""A README line runs a test runner only where the runner is a command of it, never an argument:
`apt-get install ... phpunit ...` is a setup step (the heuristic agent left the PHP case's whole
install line out of its setup, reading it as a test step)."""

from __future__ import annotations

import pytest

from pytest_enconda.agents.readme import is_test_command, split_test_command


@pytest.mark.parametrize(
    "command",
    [
        "apt-get update && apt-get install -y php-cli php-bcmath phpunit composer",
        "pip install pytest pytest-cov",
        "npm install --save-dev jest",
        "yarn add mocha",
        "echo run pytest afterwards",
        "make",
        "cargo build --release",
    ],
)
def test_a_runner_named_as_an_argument_is_no_test_step(command: str) -> None:
    assert not is_test_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "python -m pytest tests",
        "cd tests && pytest",
        "vendor/bin/phpunit --debug --verbose",
        "./vendor/bin/phpunit",
        "timeout 600 pytest -x",
        "CI=1 npm test",
        "sudo make check",
        "cargo test --all",
        "go test ./...",
        "xvfb-run -a pytest",
        "mvn -q test",
        "(cd build && ctest)",
        "tox -e py311",
        "node --test dist/",
    ],
)
def test_a_runner_run_as_a_command_is_a_test_step(command: str) -> None:
    assert is_test_command(command)


def test_the_php_install_line_stays_in_the_setup() -> None:
    install = "apt-get update && apt-get install -y php-cli php-bcmath phpunit composer"
    setup, test = split_test_command([install, "composer dump-autoload", "vendor/bin/phpunit"])
    assert setup == [install, "composer dump-autoload"] and test == "vendor/bin/phpunit"
