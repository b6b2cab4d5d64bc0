"""Automated environment configuration (AEC) tasks: configure a repository and run its tests.

Kept import-free so that importing one part (``aec.testlogs``) costs only that part.
"""
