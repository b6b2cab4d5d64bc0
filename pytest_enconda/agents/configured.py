"""Agents whose ``--agent-option`` values (with ``--model``, ``--api-base``) form one model."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError


def options_error(exc: ValidationError, agent: str) -> str:
    names = {"model": "--model", "api_base": "--api-base"}
    parts = []
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else "<options>"
        flag = names.get(field, f"--agent-option {field}=...")
        parts.append(f"{flag}: {err['msg']}")
    return f"--agent={agent}: " + "; ".join(parts)


class ConfiguredAgent:
    """Validates the options into ``config_model`` at construction, naming the flag at fault."""

    name: ClassVar[str]
    config_model: ClassVar[type[BaseModel]]

    def __init__(self, **options: Any) -> None:
        try:
            self.config: Any = self.config_model(**options)
        except ValidationError as exc:
            raise ValueError(options_error(exc, self.name)) from None

    @classmethod
    def check_options(cls, **options: Any) -> None:
        cls(**options)

    def describe(self) -> dict[str, Any]:
        return {"agent": self.name, **self.config.model_dump()}
