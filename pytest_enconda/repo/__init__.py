"""What a repository's own files declare: its Python range, extras, test command and
requirements, CI jobs and their services, tox/nox and Makefile targets, lockfiles, VCS version
tools. Read from a host copy of the checkout, never run; a file that cannot be parsed
contributes nothing."""
