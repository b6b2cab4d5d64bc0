from .config import load_config
from .core import slug, words

__all__ = ["load_config", "slug", "words"]
