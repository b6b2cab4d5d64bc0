"""The LLM judge: any model litellm can call, asked for a JSON verdict at temperature 0.

Written for unattended benchmark runs: retries with exponential backoff on transient failures, an
on-disk response cache keyed by model and prompt (our own: litellm's disk cache has changed shape
across versions), bounded concurrency, token and cost accounting. A request that still fails, or
an answer that is not the requested JSON, is a *judge error*: grading counts and shows it, and
never reads it as "not similar".

litellm is imported on first use: it takes seconds to import and the plugin loads in every run.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...artifacts import atomic_write_text
from ...lazy import litellm
from .base import JudgeRequest, JudgeStats, Verdict

CACHE_VERSION = 1
MAX_TOKENS = 300
# Client errors that a retry cannot fix (bad request, authentication, unknown model).
_PERMANENT_STATUS = frozenset({400, 401, 403, 404, 422})

SYSTEM_PROMPT = """\
You grade an AI agent's diagnosis of an erroneous README (environment setup instructions).
You compare the agent's text with the golden one and decide whether they are the same.
- For a description: do both identify the same error (same command, step, file, package or \
version, and the same problem with it)?
- For a fix: does the predicted fix make the same correction, so that following it would fix the \
error the same way?
Wording, formatting, order of sentences and extra explanation do not matter. A different \
command, flag, package name, version, file path, or order of steps does.
Answer with only a JSON object, no other text:
{"similar": true or false, "confidence": a number from 0 to 1, "reason": "one short sentence"}"""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # "success": the AEC trajectory judge's answer (``aec.judge``), asked through ``ask``.
    similar: bool = Field(validation_alias=AliasChoices("similar", "success"))
    confidence: float = Field(default=0.5)
    reason: str = ""

    @field_validator("confidence", mode="before")
    @classmethod
    def _clip(cls, value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 0.5
        return min(1.0, max(0.0, number))


def build_messages(request: JudgeRequest) -> list[dict[str, str]]:
    noun = "error description" if request.aspect == "description" else "fix"
    parts = [f"Aspect: {noun}"]
    if request.context:
        parts.append(f"Context: {request.context}")
    parts.append(f"Golden {noun}:\n<<<\n{request.golden}\n>>>")
    if request.aspect == "fix" and request.candidates:
        listed = "\n".join(f"- {c}" for c in request.candidates)
        parts.append(
            "Fixes considered when the error was written (only the golden one is right; the "
            f"others are plausible but wrong):\n{listed}"
        )
    parts.append(f"Predicted {noun}:\n<<<\n{request.predicted}\n>>>")
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def parse_answer(content: str) -> _Answer:
    """The verdict object in a model's answer (bare, fenced, or amid text); ValueError if none."""
    text = content.strip()
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            try:
                return _Answer.model_validate(value)
            except ValidationError as exc:
                raise ValueError(f"verdict object is invalid: {exc.errors()[0]['msg']}") from None
        start = text.find("{", start + 1)
    raise ValueError(f"no JSON verdict in the answer: {text[:200]!r}")


def default_cache_dir() -> Path:
    from ...cache import default_cache_dir as harness_cache_dir

    return harness_cache_dir() / "judge"


class LlmJudge:
    """``llm:<model>``; ``api_base`` points litellm at an OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        cache_dir: Path | None = None,
        concurrency: int = 4,
        timeout: float = 60,
        retries: int = 3,
        backoff: float = 1.0,
        completion_kwargs: Mapping[str, Any] | None = None,
        price: tuple[float, float] | None = None,
        ledger: Any = None,
    ) -> None:
        """``price``: USD per million prompt and completion tokens (``--judge-price``) for a
        model litellm cannot price; ``ledger``: the run's ``CostLedger``, which each request
        reserves from before it is sent and settles after, as the agents' calls do."""
        if not model:
            raise ValueError("llm judge: expected a model name, as in llm:<model>")
        if concurrency < 1:
            raise ValueError(f"llm judge: concurrency must be at least 1, got {concurrency}")
        if importlib.util.find_spec("litellm") is None:
            raise ValueError(
                "llm judge: litellm is not installed (pip install 'pytest-enconda[llm]')"
            )
        self.name = f"llm:{model}"
        # An OpenAI-compatible server needs litellm's "openai/" provider prefix.
        self.model = model if (api_base is None or "/" in model) else f"openai/{model}"
        self.api_base = api_base
        self.api_key = api_key or os.environ.get("ENCONDA_JUDGE_API_KEY")
        if api_base and not self.api_key:
            # The provider's usual variable, as for the agents; local servers ignore the
            # placeholder, which the OpenAI client requires.
            from ...agents.llm import PROVIDER_KEYS

            provider = self.model.partition("/")[0] or "openai"
            self.api_key = os.environ.get(PROVIDER_KEYS.get(provider, ""), "") or "no-key"
        self.price = price
        self.ledger = ledger
        self.cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
        self.concurrency = concurrency
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.completion_kwargs = dict(completion_kwargs or {})
        self._stats = JudgeStats(name=self.name)
        self._lock = threading.Lock()

    # --- cache -----------------------------------------------------------------------------

    def cache_key(self, messages: list[dict[str, str]]) -> str:
        payload = {"v": CACHE_VERSION, "model": self.model, "messages": messages}
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> Verdict | None:
        path = self._cache_path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            answer = _Answer.model_validate(data["answer"])
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            return None  # absent or damaged: ask again
        return Verdict(
            similar=answer.similar,
            confidence=answer.confidence,
            reason=answer.reason,
            cached=True,
            cost_usd=0.0,
        )

    def _cache_put(self, key: str, answer: _Answer, content: str, usage: dict[str, Any]) -> None:
        record = {
            "model": self.model,
            "answer": answer.model_dump(),
            "raw": content,
            "usage": usage,
            "created": time.time(),
        }
        # A read-only cache only costs repeated requests.
        with contextlib.suppress(OSError):
            atomic_write_text(self._cache_path(key), json.dumps(record, indent=1) + "\n")

    # --- calls -------------------------------------------------------------------------------

    def _count(self, **increments: float) -> None:
        with self._lock:
            for key, value in increments.items():
                setattr(self._stats, key, getattr(self._stats, key) + value)

    def _complete(self, messages: list[dict[str, str]]) -> Any:
        module = litellm()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "timeout": self.timeout,
            "max_tokens": MAX_TOKENS,
            # Retries are ours (counted, with backoff); none inside litellm or the OpenAI client.
            "num_retries": 0,
            "max_retries": 0,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        kwargs.update(self.completion_kwargs)
        return module.completion(**kwargs)

    def _cost(self, response: Any) -> float | None:
        """The user's price first, else litellm's; None (unknown, not free) without either."""
        from ...agents.llm import response_cost

        return response_cost(response, self.model, self.price)

    def _reserve(self) -> float:
        """Reserve a request's estimated cost from the run's ledger; past ``--max-cost`` the
        request is not sent and the grading is not run (``RunStopped``)."""
        if self.ledger is None:
            return 0.0
        estimate, reason = self.ledger.reserve()
        if reason is not None:
            from ...errors import RunStopped

            raise RunStopped(f"not run: {reason} (llm judge)")
        return estimate

    def judge(self, request: JudgeRequest) -> Verdict:
        return self.ask(build_messages(request))

    def ask(self, messages: list[dict[str, str]]) -> Verdict:
        """Any yes/no question in these messages, answered as ``{"similar"|"success": bool,
        "confidence", "reason"}``: cached, retried and counted as every verdict is."""
        self._count(calls=1)
        key = self.cache_key(messages)
        cached = self._cache_get(key)
        if cached is not None:
            self._count(cache_hits=1)
            return cached
        last_error = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                self._count(retries=1)
                time.sleep(self.backoff * 2 ** (attempt - 1))
            estimate = self._reserve()
            self._count(requests=1)
            try:
                response = self._complete(messages)
            except Exception as exc:
                if self.ledger is not None:
                    self.ledger.settle(estimate, None, called=False)
                status = getattr(exc, "status_code", None)
                last_error = f"{type(exc).__name__}: {exc}"[:500]
                if status in _PERMANENT_STATUS:
                    break
                continue
            usage = getattr(response, "usage", None)
            prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
            cost = self._cost(response)
            if self.ledger is not None:
                self.ledger.settle(estimate, cost)
            self._count(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost or 0.0,
                cost_unknown=int(cost is None),
            )
            try:
                content = response.choices[0].message.content or ""
            except (AttributeError, IndexError):
                content = ""
            try:
                answer = parse_answer(content)
            except ValueError as exc:
                # Asking again at temperature 0 mostly returns the same text: no retry.
                self._count(errors=1)
                verdict = Verdict.judge_error(f"unparseable answer from {self.model}: {exc}")
                verdict.prompt_tokens = prompt_tokens
                verdict.completion_tokens = completion_tokens
                verdict.cost_usd = cost
                return verdict
            self._cache_put(
                key,
                answer,
                content,
                {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "cost": cost,
                },
            )
            return Verdict(
                similar=answer.similar,
                confidence=answer.confidence,
                reason=answer.reason,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
            )
        self._count(errors=1)
        attempts = self.retries + 1
        return Verdict.judge_error(f"{self.model} failed after {attempts} attempt(s): {last_error}")

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        if len(requests) <= 1 or self.concurrency == 1:
            return [self.judge(request) for request in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(self.judge, requests))

    def stats(self) -> JudgeStats:
        with self._lock:
            return self._stats.model_copy()
