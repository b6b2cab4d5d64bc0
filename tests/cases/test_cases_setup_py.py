"""One reader of setup.py's keywords, shared by name, python_requires, extras and tests_require."""

from __future__ import annotations

from pytest_enconda.repo.setup_py import setup_keywords


def test_setup_call_keywords_resolve_names_and_additions() -> None:
    text = """
from setuptools import Extension, setup
NAME = "demo-pkg"
TEST = ["pytest"] + ["mock"]
ext = Extension(name="demo._speedups", sources=["x.c"])
setup(name=NAME, python_requires=">=3.8", tests_require=TEST,
      extras_require=dict(test=TEST, plot="matplotlib"), ext_modules=[ext])
"""
    keywords = setup_keywords(text)
    assert keywords["name"] == "demo-pkg"
    assert keywords["python_requires"] == ">=3.8"
    assert keywords["tests_require"] == ["pytest", "mock"]
    assert keywords["extras_require"] == {"test": ["pytest", "mock"], "plot": "matplotlib"}


def test_another_calls_name_is_never_taken_for_the_projects() -> None:
    text = """
import setuptools
ext = setuptools.Extension(name="demo._speedups", sources=["x.c"])
args = dict(python_requires=">=3.9", install_requires=["numpy"])
setuptools.setup(**args)
"""
    keywords = setup_keywords(text)
    assert "name" not in keywords
    # A splatted dict's keywords are the setup call's.
    assert keywords["python_requires"] == ">=3.9"
    assert keywords["install_requires"] == ["numpy"]


def test_unparsable_or_unknowable_values() -> None:
    assert setup_keywords("setup(name=") == {}
    assert setup_keywords("\x00") == {}
    assert setup_keywords("setup(name=compute())") == {"name": None}
