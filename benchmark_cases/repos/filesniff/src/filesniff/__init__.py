"""Detect file types from their content with libmagic and flag misleading extensions."""

from .sniffing import Finding, expected_types, sniff, sniff_file

__all__ = ["Finding", "expected_types", "sniff", "sniff_file"]
__version__ = "0.5.0"
