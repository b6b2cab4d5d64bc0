"""A tiny MLP-Mixer language model over bytes."""

from .model import MixLM, MixLMConfig

__all__ = ["MixLM", "MixLMConfig"]
