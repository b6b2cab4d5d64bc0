"""A model server's reply that is not JSON is reported as malformed JSON, not as litellm's own
"HTTP 500" (issue 48 item 8): through litellm's real HTTP path against the scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from scripted_llm import ScriptedServer

from pytest_enconda.agents.llm import model_failure


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    scripted.start()
    yield scripted
    scripted.stop()


@pytest.mark.slow  # importing litellm: 15-30 s on a loaded machine
def test_a_malformed_reply_is_named_as_such(server: ScriptedServer) -> None:
    litellm = pytest.importorskip("litellm")
    server.default = (200, b"{this is not json")
    with pytest.raises(Exception) as raised:
        litellm.completion(
            model="openai/scripted",
            api_base=server.api_base,
            api_key="not-a-key",
            messages=[{"role": "user", "content": "hi"}],
            num_retries=0,
        )
    # litellm itself calls it an internal server error with status 500.
    assert getattr(raised.value, "status_code", None) == 500
    failure = model_failure(raised.value, "scripted")
    assert failure is not None and failure.status is None
    message = str(failure)
    assert message.startswith("model scripted unavailable: the response was malformed JSON ("), (
        message
    )
    assert "HTTP 500" not in message and "Expecting property name" in message


@pytest.mark.slow
def test_a_real_http_error_keeps_its_status(server: ScriptedServer) -> None:
    litellm = pytest.importorskip("litellm")
    server.default = (500, {"error": {"message": "backend exploded"}})
    with pytest.raises(Exception) as raised:
        litellm.completion(
            model="openai/scripted",
            api_base=server.api_base,
            api_key="not-a-key",
            messages=[{"role": "user", "content": "hi"}],
            num_retries=0,
        )
    failure = model_failure(raised.value, "scripted")
    assert failure is not None and failure.status == 500
    assert "HTTP 500" in str(failure) and "malformed" not in str(failure)


def test_the_decode_error_is_found_anywhere_in_the_chain() -> None:
    try:
        try:
            json.loads("{oops")
        except json.JSONDecodeError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        failure = model_failure(ConnectionError("outer"), "m")
        assert failure is not None and "malformed" not in str(failure)
        chained = ConnectionError("transport")
        chained.__cause__ = outer
        failure = model_failure(chained, "m")
        assert failure is not None and "the response was malformed JSON" in str(failure)
