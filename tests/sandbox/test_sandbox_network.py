"""Package registries from inside a fresh container, through the host's network and CA."""

from __future__ import annotations

import pytest

from pytest_enconda.sandbox.containers import Sandbox
from pytest_enconda.sandbox.settings import DEFAULT_NETWORK_MODE, SandboxSettings

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_default_network_mode_is_the_tested_one() -> None:
    assert SandboxSettings(proxy_env={}).network_mode == DEFAULT_NETWORK_MODE == "bridge"


def test_pip_install_from_pypi(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/pip", role="test") as box:
        result = box.exec(
            "pip install --no-cache-dir six==1.16.0"
            " && python -c 'import six; print(six.__version__)'",
            timeout=300,
        )
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("1.16.0")


def test_uv_and_https_tools_trust_the_host_ca(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/uv", role="test") as box:
        result = box.exec(
            "uv venv --quiet /tmp/venv && uv pip install --quiet --no-cache -p /tmp/venv six"
            " && /tmp/venv/bin/python -c 'import six; print(\"six ok\")'"
            " && curl -sSf -o /dev/null https://pypi.org/simple/six/ && echo curl ok"
            " && git ls-remote https://pypi.org/ >/dev/null 2>&1; echo git tls exit $?",
            timeout=300,
        )
    assert result.exit_code == 0, result.output
    assert "six ok" in result.output and "curl ok" in result.output
    # pypi.org is no git server: only a TLS failure (exit 128, "certificate") would be wrong.
    assert "certificate" not in result.output.lower()


def test_apt_install_from_debian(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/apt", role="test") as box:
        result = box.exec(
            "apt-get update -qq && apt-get install -y -qq --no-install-recommends hello"
            " >/dev/null && hello",
            timeout=300,
        )
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("Hello, world!")
