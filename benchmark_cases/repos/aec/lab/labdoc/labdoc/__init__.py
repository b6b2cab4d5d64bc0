"""Version helpers.

>>> from labdoc import newest
>>> newest(["1.2", "1.10", "1.9"])
'1.10'
"""

from .versions import is_prerelease, newest

__all__ = ["is_prerelease", "newest"]
