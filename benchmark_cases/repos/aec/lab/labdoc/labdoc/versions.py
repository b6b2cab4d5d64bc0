"""Version comparisons on top of ``packaging``.

>>> is_prerelease("2.0rc1")
True
>>> is_prerelease("2.0")
False
"""

from packaging.version import Version


def newest(versions):
    """The newest version.

    >>> newest(["0.9", "0.10"])
    '0.10'
    """
    return str(max(versions, key=Version))


def is_prerelease(text):
    return Version(text).is_prerelease
