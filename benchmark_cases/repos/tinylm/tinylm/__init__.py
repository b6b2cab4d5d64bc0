"""A tiny causal transformer language model over bytes."""

from .model import TinyLM, TinyLMConfig

__all__ = ["TinyLM", "TinyLMConfig"]
