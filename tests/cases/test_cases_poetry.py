"""One translation of Poetry's constraints for every reader of ``[tool.poetry]``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pytest_enconda.repo.poetry import poetry_requirement, poetry_specifier


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("^1.2", ">=1.2,<2"),
        ("^1.2.3", ">=1.2.3,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("^0", ">=0,<1"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1.2", ">=1.2,<1.3"),
        ("~1", ">=1,<2"),
        ("1.2", "==1.2"),
        ("1.2.*", "==1.2.*"),
        (">=1.2,<2", ">=1.2,<2"),
        (">= 1.2, < 2.0", ">=1.2,<2.0"),
        (">=1.2 <2", ">=1.2,<2"),
        ("~=1.4", "~=1.4"),
        ("!=1.3", "!=1.3"),
        ("*", ""),
        ("", ""),
        ("^2.7 || ^3.6", None),
        ("^1.2b1", None),
        ("latest", None),
    ],
)
def test_poetry_constraints_as_pep440(constraint: str, expected: str | None) -> None:
    assert poetry_specifier(constraint) == expected


def test_bare_version_read_as_lowest_when_asked_but_wildcards_stay_exact() -> None:
    assert poetry_specifier("3.9", bare=">=") == ">=3.9"
    assert poetry_specifier("3.9.*", bare=">=") == "==3.9.*"


def test_requirements_from_strings_tables_and_sources() -> None:
    assert poetry_requirement("numpy", "^1.24") == "numpy>=1.24,<2"
    assert poetry_requirement("numpy", {"version": "~1.24", "optional": True}) == (
        "numpy>=1.24,<1.25"
    )
    # Not from an index, or several constraints by marker: the name alone.
    assert poetry_requirement("hazm", {"git": "https://example.invalid/hazm.git"}) == "hazm"
    assert poetry_requirement("torch", [{"version": "^2", "markers": "x"}]) == "torch"
    assert poetry_requirement("six", "*") == "six"
    assert poetry_requirement("old", "^2.7 || ^3.6") == "old"
    # Extras travel with the name (strawberry-django-auth's `channels = {extras = ["daphne"]}`).
    assert poetry_requirement("channels", {"extras": ["daphne"], "version": ">=4.0.0"}) == (
        "channels[daphne]>=4.0.0"
    )
    assert poetry_requirement("pillow", {"extras": ["captcha", "a b"], "git": "u"}) == (
        "pillow[captcha]"
    )


@given(
    st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=3),
    st.sampled_from(["^", "~"]),
)
def test_ranges_admit_their_own_version_and_exclude_the_next_breaking_one(
    parts: list[int], operator: str
) -> None:
    version = ".".join(map(str, parts))
    spec = poetry_specifier(f"{operator}{version}")
    assert spec is not None
    specifiers = SpecifierSet(spec)  # always valid PEP 440
    assert Version(version) in specifiers
    upper = spec.split(",<")[1]
    assert Version(upper) not in specifiers


@given(st.text(max_size=30))
def test_any_text_is_translated_or_refused_never_invalid(constraint: str) -> None:
    spec = poetry_specifier(constraint)
    if spec:
        SpecifierSet(spec)
