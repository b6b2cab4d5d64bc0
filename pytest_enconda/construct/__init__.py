"""``pytest-enconda construct``: new benchmark instances from working READMEs.

Injection (rule-based per type, or a model), validation in Docker built on ``verify``, offline and
judge filters with the label audit, split and merge into levels, written in EnConda-Bench's
released layout with the verification sidecar beside it. Imported by the CLI only.
"""
