"""Rust with Cargo: ``cargo test``'s per-binary summaries and per-test lines, the toolchain
version from ``rust-version`` or ``rust-toolchain``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Checkout, Ecosystem, Found, Outcome, ProfileFields, first, ints, source_error
from .testfiles import TestFiles

# --- cargo test -------------------------------------------------------------------------------

_CARGO_RESULT = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; "
    r"(\d+) measured; (\d+) filtered out"
)
_CARGO_COMPILE = re.compile(r"^error: could not compile `[^`]+`")
_CARGO_MARK = re.compile(r"^\s+(?:Compiling|Running|Doc-tests) \S+")


def _cargo(lines: list[str]) -> Found | None:
    found = Found("cargo")
    marked = False
    for line in lines:
        match = _CARGO_RESULT.match(line)
        if match:
            passed, failed, ignored, _measured, _filtered = ints(match)
            found.add("passed", passed)
            found.add("failed", failed)
            found.add("skipped", ignored)
            found.summary = True
            found.evidence.append(line)
        elif _CARGO_COMPILE.match(line):
            found.compile_error = True
            found.evidence.append(line)
        elif _CARGO_MARK.match(line):
            marked = True
    return found if found.summary or (found.compile_error and marked) else None


# --- per-test lines: test path::name ... ok ------------------------------------------------------

_CARGO_TEST = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\b")
# What is not named here failed.
_CARGO_OUTCOME: dict[str, Outcome] = {"ok": "passed", "ignored": "skipped"}


def _cargo_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    for index, line in enumerate(lines):
        if match := _CARGO_TEST.match(line):
            yield index, match.group(1), _CARGO_OUTCOME.get(match.group(2), "failed")


def _profile(checkout: Checkout) -> ProfileFields:
    version = first(r'^rust-version\s*=\s*"([^"]+)"', checkout.text("Cargo.toml"))
    toolchain = checkout.text("rust-toolchain.toml") or checkout.text("rust-toolchain")
    return ProfileFields(
        package_manager="cargo",
        config_file="Cargo.toml",
        language_version=version or first(r'(?:channel\s*=\s*"([^"]+)"|^([\w.-]+)\s*$)', toolchain),
        install_command="cargo build",
        test_command="cargo test",
        test_framework="cargo test",
        build_tools=["cargo"],
    )


RUST = Ecosystem(
    name="rust",
    title="Rust",
    languages=("rust",),
    manifests=("Cargo.toml",),
    # Debian's cargo brings rustc with it.
    debian_packages=("cargo",),
    programs=("cargo", "rustc"),
    # Cargo's integration tests; unit tests live in src/ beside the code (#[cfg(test)]), which
    # is not restored: the agent's build may need its own src/ (a generated file). Cargo.toml
    # says which tests exist (`test = false`, [[test]]); build.rs runs when the tests build.
    test_files=TestFiles(
        paths=("tests/",),
        configs=(".cargo/config.toml", ".cargo/config", "Cargo.toml", "build.rs"),
        sections=("Cargo.toml",),
        sources=("*.rs",),
    ),
    toolchain=("cargo", "rustc"),
    build_commands=(r"cargo\s+(?:\+\S+\s+)?(?:build|fetch)",),
    test_commands=(r"cargo\s+(?:\+\S+\s+)?test",),
    test_command="cargo test",
    verdict_lines=(_CARGO_RESULT.pattern, _CARGO_COMPILE.pattern, r"^test \S+ \.\.\. FAILED"),
    count_lines=(r"^test \S+ \.\.\. (?:ok|ignored)\b",),
    log_parsers=(_cargo,),
    name_parsers=(_cargo_names,),
    compile_errors=(source_error("rs"), r"error\[E\d{4}\]: "),
    profile=_profile,
)
