"""Programs the tests call and the image lacks: their Debian packages, read from the release's own
Contents index (served here by a real HTTP server), are installed by the recipe that follows."""

from __future__ import annotations

import functools
import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_verify_as_of import WHEN, _strategies

from pytest_enconda.sandbox.debian_programs import (
    ContentsError,
    parse_contents,
    program_index,
    program_packages,
)
from pytest_enconda.sandbox.recipes import BASE_RECIPES
from pytest_enconda.verify import attempt as attempts
from pytest_enconda.verify import ladder
from pytest_enconda.verify.recipes import AS_OF

AMD64 = (
    "usr/bin/protoc                                          devel/protobuf-compiler\n"
    "usr/share/doc/protobuf-compiler/copyright               devel/protobuf-compiler\n"
    "usr/bin/convert                  graphics/graphicsmagick-imagemagick-compat,graphics/other\n"
    "usr/lib/x86_64-linux-gnu/libprotoc.so.32                libs/libprotoc32\n"
    "usr/lib/x86_64-linux-gnu/libXrender.so.1                libs/libxrender1\n"
    "usr/lib/x86_64-linux-gnu/libXrender.so.1.3.0            libs/libxrender1\n"
    "usr/lib/x86_64-linux-gnu/libXext.so.6                   libs/libxext6\n"
    "usr/lib/x86_64-linux-gnu/libX11.so.6                    libs/libx11-6\n"
    "usr/lib/x86_64-linux-gnu/libXft.so.2                    libs/libxft2\n"
    "usr/lib/python3/dist-packages/foo/libfake.so.1           python/python3-foo\n"
)
ALL = "usr/bin/dot graphics/graphviz-all\nusr/sbin/a2ensite                 httpd/apache2\n"


def _packages_named_by(log: Path, settings: Any, tmp_path: Path, output: str) -> list[str]:
    """The Debian packages, from the real index, of the programs ``log`` names (protoc only)."""
    missing = attempts._missing_programs(log)
    assert missing == ["protoc"], output[-2000:]
    release = BASE_RECIPES["bookworm-py3.11"].release
    found = program_packages(missing, release, settings.debian_mirror, tmp_path / "cache")
    return list(found.values())


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A Debian mirror's two Contents files over HTTP on 127.0.0.1, and the paths it served."""
    root = tmp_path / "mirror"
    main = root / "dists" / "bookworm" / "main"
    main.mkdir(parents=True)
    (main / "Contents-amd64.gz").write_bytes(gzip.compress(AMD64.encode()))
    (main / "Contents-all.gz").write_bytes(gzip.compress(ALL.encode()))
    served: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            served.append(self.path)

    handler = functools.partial(Handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    server.server_close()


def test_programs_map_to_the_package_that_installs_them() -> None:
    index = parse_contents(AMD64.splitlines() + ALL.splitlines())
    assert index == {
        "protoc": "protobuf-compiler",
        "libprotoc.so.32": "libprotoc32",
        "libXrender.so.1": "libxrender1",
        "libXrender.so.1.3.0": "libxrender1",
        "libXext.so.6": "libxext6",
        "libX11.so.6": "libx11-6",
        "libXft.so.2": "libxft2",
        "convert": "graphicsmagick-imagemagick-compat",
        "dot": "graphviz-all",
        "a2ensite": "apache2",
    }


def test_the_index_is_fetched_once_and_then_read_from_the_cache(
    tmp_path: Path, mirror: tuple[str, list[str]]
) -> None:
    url, served = mirror
    cache = tmp_path / "cache"
    found = program_packages(["protoc", "dot", "no-such-program"], "bookworm", url, cache)
    assert found == {"protoc": "protobuf-compiler", "dot": "graphviz-all"}
    assert sorted(served) == [
        "/dists/bookworm/main/Contents-all.gz",
        "/dists/bookworm/main/Contents-amd64.gz",
    ]
    assert program_index("bookworm", url, cache)["a2ensite"] == "apache2"
    assert len(served) == 2  # the second answer came from the cache
    with pytest.raises(ContentsError, match=r"Contents-amd64\.gz"):
        program_index("trixie", url, cache)  # the mirror has no such release


def test_the_recipe_after_a_run_that_lacked_protoc_installs_protobuf_compiler(
    tmp_path: Path, monkeypatch: Any, mirror: tuple[str, list[str]]
) -> None:
    """protoletariat: 42 of 56 failed tests said "No such file or directory: 'protoc'"."""
    url, _ = mirror
    tried, lines = _strategies(
        tmp_path, monkeypatch, url, lambda label: ["protoc"] if label == "recipe" else []
    )
    assert [(label, before) for label, before, _ in tried] == [
        ("recipe", ""),
        ("recipe+programs", ""),
        (AS_OF, WHEN),
    ]
    assert "protobuf-compiler" not in tried[0][2]
    assert "protobuf-compiler" in tried[1][2] and "protobuf-compiler" in tried[2][2]
    assert "o/n: the tests called programs the image lacks; the recipe installs " in "\n".join(
        lines
    )


@pytest.mark.slow
@pytest.mark.docker
def test_a_test_calling_protoc_passes_once_the_recipe_installs_its_package(
    tmp_path: Path, sandbox, base_image, sandbox_settings
) -> None:
    """In real boxes and from Debian's real index: the test fails on the missing program, the
    log names it, the index names its package, and the recipe with that package passes it."""
    from recipebox import project, set_up

    from pytest_enconda.probing.junit import JUNIT_PATH, read_junit, run_tests_command
    from pytest_enconda.verify.recipes import recipe_script

    calls = (
        "import subprocess\n\n"
        "def test_protoc():\n"
        "    subprocess.run(['protoc', '--version'], check=True)\n"
    )
    repo = project(tmp_path / "repo", "protodemo", {"tests/test_protoc.py": calls})
    step = run_tests_command("python -m pytest tests", ["pytest<9"])
    test_id = "tests.test_protoc::test_protoc"
    outcomes = {}
    packages: list[str] = []
    for attempt in (1, 2):
        script = recipe_script(repo, packages)
        with set_up(sandbox, base_image, repo, script, f"t/programs{attempt}") as (box, _):
            run = box.exec(step, timeout=600, workdir="/data/project")
            log = tmp_path / f"test{attempt}.log"
            log.write_text(run.output)
            box.copy_out(JUNIT_PATH, tmp_path / "junit.xml")
            outcomes[attempt] = read_junit(tmp_path / "junit.xml")[test_id]
        if attempt == 1:
            packages = _packages_named_by(log, sandbox_settings, tmp_path, run.output)
    assert outcomes == {1: "failed", 2: "passed"}
    assert packages == ["protobuf-compiler"]


def test_the_log_names_missing_programs_then_missing_libraries(tmp_path: Path) -> None:
    """datamol: 233 of its tests failed on RDKit's "libXrender.so.1: cannot open shared object
    file"; a data file named with a dot is not taken for a program."""
    log = tmp_path / "test1.log"
    log.write_text(
        "E   ImportError: libXrender.so.1: cannot open shared object file: No such file or "
        "directory\n"
        "E   FileNotFoundError: [Errno 2] No such file or directory: 'protoc'\n"
        "E   FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'\n"
        "/bin/sh: 1: sox: not found\n"
        "protoc-gen-x is not installed nor found in ../src.\n"
        "protoc-gen-mypy: program not found or is not executable\n"
    )
    assert attempts._missing_programs(log) == [
        "protoc",
        "protoc-gen-mypy",
        "protoc-gen-x",
        "sox",
        "libXrender.so.1",
    ]


def test_a_recipe_is_retried_while_its_tests_name_new_libraries_six_times_at_most(
    tmp_path: Path, monkeypatch: Any, mirror: tuple[str, list[str]]
) -> None:
    """datamol's RDKit named libXrender.so.1, then with it installed libXext.so.6: the loader
    names one missing library at a time."""
    url, _ = mirror
    names = ["libXrender.so.1", "libXext.so.6", "libX11.so.6", "libprotoc.so.32", "convert"]
    named = iter([[name] for name in names] + [["libXft.so.2"], ["protoc"], []])
    tried, _ = _strategies(
        tmp_path, monkeypatch, url, lambda _label: next(named), recipe_as_of=False
    )
    labels = [label for label, _, _ in tried]
    assert labels == ["recipe", "recipe+programs"] + [
        f"recipe+programs{n}" for n in range(2, ladder.MAX_PROGRAM_ROUNDS + 1)
    ]
    assert ladder.MAX_PROGRAM_ROUNDS == 6
    last = tried[-1][2]
    assert all(package in last for package in ("libxrender1", "libxext6", "libx11-6", "libxft2"))
    assert "protobuf-compiler" not in last  # named after the last round


LDD = (
    "/x/dist-packages/vtkmodules/libvtkRenderingOpenGL2.so\tlibXcursor.so.1\n"
    "/x/dist-packages/vtkmodules/libvtkRenderingOpenGL2.so\tlibGLU.so.1\n"
    "/x/dist-packages/vtkmodules/libvtkRenderingOpenGL2.so\tlibXrender.so.1\n"
    "/x/dist-packages/vtkmodules/libvtkRenderingOpenGL2.so\tlibXau-154567c4.so.6.0.0\n"
    "/x/dist-packages/PyQt5/Qt5/plugins/libqwebengine.so\tlibQt5WebEngineCore.so.5\n"
    "/x/dist-packages/other.so\tlibXcursor.so.1\n"
)


def test_the_scan_names_what_the_extensions_lacking_the_named_library_lack() -> None:
    found = attempts.unresolved_libraries(LDD, ["libXrender.so.1"])
    # Not Qt WebEngine: no extension that lacks libXrender needs it; not a bundled copy.
    assert found == ["libGLU.so.1", "libXcursor.so.1", "libXrender.so.1"]
    assert attempts.unresolved_libraries(LDD, ["libnothing.so.1"]) == []
    assert attempts.unresolved_libraries("not a dynamic executable\n", ["libGLU.so.1"]) == []


@pytest.mark.docker
def test_one_scan_names_all_the_libraries_an_extension_lacks(
    tmp_path: Path, sandbox, base_image
) -> None:
    """OpenPulse's VTK named libXrender, libGLU, then libXcursor, one recipe round each: the scan
    names every missing library of an extension under site-packages at once. The extension here
    is this machine's libXcursor (bookworm, as the base), which the base lacks the X libraries
    of."""
    library = Path("/usr/lib/x86_64-linux-gnu/libXcursor.so.1")
    if not library.exists():
        pytest.skip(f"{library} is not on this machine (apt-get install libxcursor1)")
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "_fake.cpython-311-x86_64-linux-gnu.so").write_bytes(library.read_bytes())
    with sandbox.container(base_image, case_id="t/ldd", role="test") as box:
        box.copy_in(folder, "/usr/local/lib/python3.11/dist-packages/fakeext")
        run = box.exec(attempts.LDD_SCAN, timeout=300, workdir="/")
    found = attempts.unresolved_libraries(run.output, ["libX11.so.6"])
    assert {"libXrender.so.1", "libXfixes.so.3", "libX11.so.6"} <= set(found), run.output
    assert all(name.startswith("lib") for name in found)


def test_a_setup_whose_build_lacks_a_program_names_it_for_the_next_recipe(
    tmp_path: Path,
) -> None:
    """tensorflow/model-analysis: its setup.py stops with "protoc is not installed nor found in
    ../src" before any test runs; the setup log names the program as a test log would."""
    from verifyfake import fake_context

    from pytest_enconda.backends.fake import FakeBackend, canned
    from pytest_enconda.cases.sidecar import RepoVerification

    said = (
        "running build_py\n"
        "protoc is not installed nor found in ../src.  Please compile it or install the binary "
        "package.\nerror: failed-wheel-build-for-install\n"
    )

    # The fake box writes the answer to the setup's log, as the setup's output would be.
    backend = FakeBackend(tmp_path / "fake", responder=lambda *_a: canned(said, 1))
    ctx = fake_context(tmp_path, None, [], backend=backend)
    record = RepoVerification(repository="o/n", revision="r", status="unverified")
    record.undeclared_programs = ["from-an-earlier-attempt"]
    image = backend.add_image("image")
    assert not attempts.attempt(ctx, record, image, "recipe", "#!/bin/bash\n", tmp_path, [])
    assert record.undeclared_programs == ["protoc"]
    assert record.attempts[-1].startswith("recipe: setup exited with 1: ")


@pytest.mark.slow
@pytest.mark.docker
def test_a_build_that_needs_protoc_installs_once_the_recipe_has_its_package(
    tmp_path: Path, sandbox, base_image, sandbox_settings
) -> None:
    """In real boxes: a setup.py that refuses to build without protoc (as tensorflow/model-
    analysis's does) fails the recipe, its log names the program, Debian's real index its
    package, and the recipe with it installs the checkout."""
    from recipebox import project

    from pytest_enconda.backends.base import started
    from pytest_enconda.backends.docker import DockerBackend
    from pytest_enconda.verify.recipes import recipe_script

    setup_py = (
        "import shutil, sys\n"
        "from setuptools import setup\n"
        "if shutil.which('protoc') is None:\n"
        "    sys.exit('protoc is not installed nor found in ../src.')\n"
        "setup(name='protobuild', version='1', packages=['protobuild'])\n"
    )
    repo = project(tmp_path / "repo", "protobuild", {"setup.py": setup_py})
    packages: list[str] = []
    exits = []
    for attempt in (1, 2):
        (repo / "setup.sh").write_text("set -e\n" + recipe_script(repo, packages))
        log = tmp_path / f"setup{attempt}.log"
        backend = DockerBackend(sandbox=sandbox)
        with started(
            backend, base_image, case_id=f"t/build-programs{attempt}", role="test", network=True
        ) as box:
            box.copy_in(repo, "/data/project")
            run = box.exec("bash setup.sh", timeout=600, workdir="/data/project", log_path=log)
            exits.append(run.exit_code)
        if attempt == 1:
            packages = _packages_named_by(log, sandbox_settings, tmp_path, run.output)
    assert packages == ["protobuf-compiler"]
    assert exits[0] != 0 and exits[1] == 0, run.output[-2000:]
