"""A small convolutional image classifier."""

from .model import MiniCNN

__all__ = ["MiniCNN"]
