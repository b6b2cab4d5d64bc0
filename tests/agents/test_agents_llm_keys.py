"""The key a model-driven agent sends, and litellm's price list read from its bundled copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pytest_enconda.agents.llm import api_key_for


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("ENCONDA_AGENT_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_api_base_key_is_ours_then_the_providers_usual_variable(
    no_keys: pytest.MonkeyPatch,
) -> None:
    base = "http://127.0.0.1:8000/v1"
    # Nothing set: local servers ignore the key, but the OpenAI client wants one.
    assert api_key_for(base, "qwen2.5-coder") == "no-key"
    no_keys.setenv("OPENAI_API_KEY", "sk-usual")
    # A bare name gets litellm's openai/ prefix, so the OpenAI variable is the usual one.
    assert api_key_for(base, "qwen2.5-coder") == "sk-usual"
    assert api_key_for(base, "openai/gpt-4o") == "sk-usual"
    assert api_key_for(base, "anthropic/claude-sonnet-4-5") == "no-key"
    no_keys.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert api_key_for(base, "anthropic/claude-sonnet-4-5") == "sk-ant"
    no_keys.setenv("ENCONDA_AGENT_API_KEY", "sk-ours")
    assert api_key_for(base, "qwen2.5-coder") == "sk-ours"


def test_hosted_models_leave_the_key_to_litellm(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-usual")
    assert api_key_for(None, "openai/gpt-4o") is None


PROBE = textwrap.dedent(
    """
    import json, os, socket
    attempts = []
    real_connect = socket.socket.connect

    def refuse(self, address):
        attempts.append(repr(address))
        raise OSError("network refused by the test")

    def resolve(host, *args, **kwargs):
        attempts.append(str(host))
        raise socket.gaierror("name resolution refused by the test")

    socket.socket.connect = refuse
    socket.getaddrinfo = resolve
    socket.create_connection = lambda address, *a, **k: refuse(None, address)
    from pytest_enconda.agents.swe_agent import _import_minisweagent
    _import_minisweagent()
    import litellm
    from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info
    print(json.dumps({
        "source": get_model_cost_map_source_info(),
        "env": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
        "attempts": attempts,
        "priced": bool(litellm.model_cost.get("gpt-4o-mini")),
    }))
    """
)


def test_swe_agent_import_reads_the_bundled_price_list_without_network() -> None:
    pytest.importorskip("minisweagent")
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["env"] == "True"
    assert result["attempts"] == []
    assert result["source"]["source"] == "local" and result["source"]["is_env_forced"]
    assert result["priced"] is True
