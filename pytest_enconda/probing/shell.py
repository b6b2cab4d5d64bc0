"""How a setup script and the test command share an environment: one rule for every path.

A README that says ``python -m venv .venv && source .venv/bin/activate`` (or ``conda activate``)
configures a shell, not a machine: run as its own process, the script's activation is gone when
the test command starts in a fresh shell, and a correct setup fails Pass@1. So the harness runs
the setup script *sourced* in one ``bash -eo pipefail`` shell, saves the variables it has exported
when that shell ends (whatever the exit), and the test command starts by reading them back. The
oracle, ``verify`` (the reference) and the replay of every agent's script use these two functions,
so a reference and an agent are judged in the same kind of environment.

Variables that describe the shell rather than the setup (``PWD``, ``SHLVL``, ...) are not
carried; the harness's own marker variable is not either.
"""

from __future__ import annotations

import shlex

__all__ = ["SETUP_ENV_PATH", "in_setup_env", "setup_command"]

SETUP_ENV_PATH = "/tmp/enconda/setup-env.sh"
# Names that belong to the shell that ran the setup, not to the environment it made.
_NOT_CARRIED = ("PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME", "ENCONDA_EXEC_MARKER")


def setup_command(script_path: str) -> str:
    """Run the setup script in this shell, then save what it exported (also when it failed)."""
    skip = "|".join(_NOT_CARRIED)
    env = shlex.quote(SETUP_ENV_PATH)
    save = f"export -p | grep -Ev '^declare -x ({skip})(=|$)' > {env} || true"
    # The trap runs on every exit, an `exit 0` in the script or a failing command under -e.
    return (
        f"mkdir -p {shlex.quote(SETUP_ENV_PATH.rsplit('/', 1)[0])}; "
        f"trap {shlex.quote(save)} EXIT; "
        f"set -eo pipefail; . {shlex.quote(script_path)}"
    )


def in_setup_env(command: str) -> str:
    """``command`` in the environment the setup script left (unchanged when none was saved)."""
    env = shlex.quote(SETUP_ENV_PATH)
    return f"if [ -f {env} ]; then . {env}; fi\n{command}"
