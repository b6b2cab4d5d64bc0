"""Stage 5: grading, pure functions over a case's saved artifacts."""
