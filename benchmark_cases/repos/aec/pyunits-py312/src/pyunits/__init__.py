"""Unit conversion with a small table of factors."""

from .convert import Quantity, convert

__all__ = ["Quantity", "convert"]
