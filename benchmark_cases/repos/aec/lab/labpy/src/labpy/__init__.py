from .core import slug, words
from .config import load_config

__all__ = ["slug", "words", "load_config"]
