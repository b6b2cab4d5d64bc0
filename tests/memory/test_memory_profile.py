"""The offline codebase profile in every ecosystem, and the template queries built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.agents.profile import build_profile
from pytest_enconda.memory.retrieve import template_queries

REPOS = {
    "rust": (
        {"Cargo.toml": '[package]\nname = "x"\nrust-version = "1.70"\n'},
        ("Rust", "1.70", "cargo", "cargo test"),
    ),
    "go": (
        {"go.mod": "module example.com/x\n\ngo 1.21\n"},
        ("Go", "1.21", "go modules", "go test ./..."),
    ),
    "cmake": (
        {"CMakeLists.txt": "set(CMAKE_CXX_STANDARD 17)\nfind_package(ZLIB)\nenable_testing()\n"},
        ("C/C++", "C++17", "cmake", "ctest --test-dir build"),
    ),
    "maven": (
        {
            "pom.xml": "<project><properties><maven.compiler.source>17</maven.compiler.source>"
            "</properties><artifactId>junit</artifactId></project>"
        },
        ("Java", "17", "maven", "mvn -B test"),
    ),
    "gradle": (
        {"build.gradle": "java { sourceCompatibility = JavaVersion.VERSION_11 }\n", "gradlew": ""},
        ("Java", "11", "gradle", "./gradlew test"),
    ),
    "node": (
        {
            "package.json": '{"engines": {"node": ">=18"}, "scripts": {"test": "node --test"}}',
            "yarn.lock": "",
        },
        ("JavaScript/TypeScript", ">=18", "yarn", "yarn test"),
    ),
    "php": (
        {
            "composer.json": '{"require": {"php": "^8.1", "ext-mbstring": "*"}, '
            '"require-dev": {"phpunit/phpunit": "^10"}}'
        },
        ("PHP", "^8.1", "composer", "vendor/bin/phpunit"),
    ),
}


@pytest.mark.parametrize("name", sorted(REPOS))
def test_profile_of_each_ecosystem(tmp_path: Path, name: str) -> None:
    files, (language, version, manager, test_command) = REPOS[name]
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    profile = build_profile(tmp_path)
    assert (
        profile.language,
        profile.language_version,
        profile.package_manager,
        profile.test_command,
    ) == (language, version, manager, test_command)
    aec = profile.to_aec()
    assert aec["language"] == {"name": language, "version_constraint": version}
    queries = template_queries(profile)
    assert 3 <= len(queries) <= 5 and any(language in q for q in queries)


def test_cmake_and_composer_name_their_system_packages(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text("find_package(ZLIB)\nfind_package(OpenSSL)\n")
    assert build_profile(tmp_path).likely_system_packages == ["zlib1g-dev", "libssl-dev"]


def test_poetry_dependencies_name_their_system_packages(tmp_path: Path) -> None:
    # tmuxp: libtmux is a Poetry dependency; its tests start tmux, which nothing else declares.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "tmuxp"\n[tool.poetry.dependencies]\npython = "^3.8"\n'
        'libtmux = "~0.37"\n[tool.poetry.group.docs.dependencies]\npyenchant = "*"\n'
    )
    assert build_profile(tmp_path).likely_system_packages == [
        "tmux",
        "libenchant-2-2",
        "hunspell-en-us",
    ]


@pytest.mark.parametrize(
    ("file", "text"),
    [
        (
            "setup.py",
            "from setuptools import setup\nDEPS = ['psycopg2', 'click']\n"
            "setup(name='q', install_requires=DEPS, extras_require={'tmux': ['libtmux']})\n",
        ),
        (
            "setup.cfg",
            "[metadata]\nname = q\n[options]\ninstall_requires =\n    psycopg2>=2.8\n"
            "[options.extras_require]\ntmux =\n    libtmux\n",
        ),
    ],
)
def test_setup_py_and_setup_cfg_dependencies_name_their_system_packages(
    tmp_path: Path, file: str, text: str
) -> None:
    # qiita: psycopg2 in setup.py's install_requires builds only with libpq's pg_config.
    (tmp_path / file).write_text(text)
    profile = build_profile(tmp_path)
    assert profile.likely_system_packages == ["libpq-dev", "tmux"]
    assert profile.extras == ["tmux"]


def test_qt_dependencies_name_the_libraries_qt_loads_offscreen(tmp_path: Path) -> None:
    # btrack: napari's pytest plugin imports vispy, which stopped pytest: "fontconfig not found".
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "btrack"\n'
        '[project.optional-dependencies]\nnapari = ["napari", "pyqt5"]\n'
    )
    likely = build_profile(tmp_path).likely_system_packages
    assert {"libfontconfig1", "libgl1", "libegl1", "libxkbcommon-x11-0"} <= set(likely)
    assert len(likely) == len(set(likely))
