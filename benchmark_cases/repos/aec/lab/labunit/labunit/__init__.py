from .stats import mean, median

__all__ = ["mean", "median"]
