"""Quick column statistics and Markdown previews of CSV files."""

from .stats import column_stats, infer_type
from .table import Table, read_csv, to_markdown

__all__ = ["Table", "column_stats", "infer_type", "read_csv", "to_markdown"]
__version__ = "0.9.2"
