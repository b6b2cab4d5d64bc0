"""Trajectory-derived memory: environment-configuration experience kept as repository-agnostic
{problem, solution, action} triples in one SQLite file, retrieved by BM25 (or an embedding model)
for a new repository's profile or a failing command's error.

Nothing here is imported by the plugin at load time; sqlite3 and litellm are imported on use.
"""
