"""Stage 6: results, summaries and tables of a run."""
