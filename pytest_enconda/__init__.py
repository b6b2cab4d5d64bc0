"""pytest-enconda: benchmark AI agents at environment configuration.

Kept import-free on purpose: the plugin loads in every pytest run where it is installed.
"""

__version__ = "0.1.0"
