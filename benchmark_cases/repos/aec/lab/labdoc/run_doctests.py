"""Runs every module's doctests; exits 1 when one fails."""

import doctest
import sys

import labdoc
import labdoc.versions

failed = attempted = 0
for module in (labdoc, labdoc.versions):
    result = doctest.testmod(module, verbose="-v" in sys.argv)
    failed += result.failed
    attempted += result.attempted
print(f"doctests: {attempted} run, {failed} failed")
sys.exit(1 if failed else 0)
