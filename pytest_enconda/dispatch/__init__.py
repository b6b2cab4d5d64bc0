"""Where cases' pipelines run: this process (default), or a Ray cluster (``--dispatch ray``).

Standard library only at import: the engines (``ray``) load when a run asks for them.
"""
