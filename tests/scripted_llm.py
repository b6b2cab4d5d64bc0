"""An OpenAI-compatible chat-completions server on 127.0.0.1 with scripted answers (for tests).

It counts the requests it receives and can answer 500, garbage or slowly. ``tool_call`` builds
an answer that calls the ``bash`` tool (mini-swe-agent's one tool); ``usage_served`` sums the
token counts of every answer the server sent, so a test can compare them with what the harness
recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERDICT_YES = '{"similar": true, "confidence": 0.9, "reason": "same package and command"}'
VERDICT_NO = '{"similar": false, "confidence": 0.8, "reason": "different package"}'


def completion(content: str, prompt_tokens: int = 120, completion_tokens: int = 20) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "judge-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def tool_call(
    command: str,
    thought: str = "",
    prompt_tokens: int = 300,
    completion_tokens: int = 40,
    call_id: str = "call_1",
) -> dict:
    """An answer whose message calls the ``bash`` tool with ``command``."""
    body = completion(thought, prompt_tokens, completion_tokens)
    body["model"] = "scripted-agent"
    choice = body["choices"][0]
    choice["finish_reason"] = "tool_calls"
    choice["message"]["content"] = thought or None
    choice["message"]["tool_calls"] = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
    ]
    return body


def step_of(request: dict) -> int:
    """How many answers the model has given in this conversation (the next one's index)."""
    return sum(1 for message in request.get("messages", []) if message.get("role") == "assistant")


def prompt_text(request: dict) -> str:
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "\n".join(parts)


class ScriptedServer:
    """Answers from ``script`` (status, body) in order, then ``default``; records every request."""

    def __init__(self) -> None:
        self.script: list[tuple[int, Any]] = []
        self.default: tuple[int, Any] = (200, completion(VERDICT_YES))
        self.responder: Callable[[dict], tuple[int, Any]] | None = None
        self.delay = 0.0
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.usage_served = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    if server.responder is not None:
                        status, payload = server.responder(body)
                    elif server.script:
                        status, payload = server.script.pop(0)
                    else:
                        status, payload = server.default
                    if status == 200 and isinstance(payload, dict):
                        for key, value in (payload.get("usage") or {}).items():
                            if key in server.usage_served:
                                server.usage_served[key] += int(value)
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up first (a timeout test does so on purpose): nothing to
                    # answer, and no traceback on stderr, where a later test in this process
                    # reads a command's messages.
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
