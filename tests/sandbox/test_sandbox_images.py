"""Base, environment and task images against the real engine (no mocks)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_enconda.cases.models import EnvironmentLayer
from pytest_enconda.errors import ImageBuildError
from pytest_enconda.sandbox.containers import Sandbox
from pytest_enconda.sandbox.images import ImageBuilder, split_ca_bundle
from pytest_enconda.sandbox.recipes import BASE_RECIPES
from pytest_enconda.sandbox.settings import HOST_CA_BUNDLE, SandboxSettings

BASE = "bookworm-py3.11"


# ------------------------------------------------------------------ hashes (no engine needed)


def test_declared_recipes_cover_three_releases() -> None:
    assert {name: (r.release, r.python) for name, r in BASE_RECIPES.items()} == {
        "bullseye-py3.9": ("bullseye", "3.9"),
        "bookworm-py3.11": ("bookworm", "3.11"),
        "trixie-py3.13": ("trixie", "3.13"),
    }


def test_base_tag_changes_with_recipe_and_ca_bundle_only(tmp_path: Path) -> None:
    settings = SandboxSettings(ca_bundle=None, proxy_env={})
    builder = ImageBuilder(settings)
    recipe = BASE_RECIPES[BASE]
    tag = builder.base_tag(recipe)
    assert tag == ImageBuilder(settings).base_tag(BASE)
    assert tag.startswith("enconda/base:bookworm-py3.11-")
    changed = recipe.model_copy(update={"packages": (*recipe.packages, "less")})
    assert builder.base_tag(changed) != tag
    # Proxy variables are build arguments, not image content: same image, same tag.
    proxied = ImageBuilder(
        settings.model_copy(update={"proxy_env": {"HTTP_PROXY": "http://p:3128"}})
    )
    assert proxied.base_tag(recipe) == tag
    bundle = tmp_path / "ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIBdGVzdA==\n-----END CERTIFICATE-----\n")
    with_ca = ImageBuilder(settings.model_copy(update={"ca_bundle": bundle}))
    assert with_ca.base_tag(recipe) != tag
    # A different mirror is a different rootfs, hence a different base.
    mirrored = ImageBuilder(
        settings.model_copy(update={"debian_mirror": "http://mirror.example/debian"})
    )
    assert mirrored.rootfs_tag(recipe) != builder.rootfs_tag(recipe)
    assert mirrored.base_tag(recipe) != tag


def test_ca_bundle_split_names_each_certificate(tmp_path: Path) -> None:
    bundle = tmp_path / "b.crt"
    one = "-----BEGIN CERTIFICATE-----\nQUFB\n-----END CERTIFICATE-----"
    two = "-----BEGIN CERTIFICATE-----\nQkJC\n-----END CERTIFICATE-----"
    bundle.write_text(f"# comment\n{one}\n\n{two}\n{one}\n")
    files = split_ca_bundle(bundle)
    assert len(files) == 2
    assert all(name.startswith("host-") and name.endswith(".crt") for name in files)
    empty = tmp_path / "empty.crt"
    empty.write_text("nothing here\n")
    with pytest.raises(ImageBuildError, match=r"empty.crt: no PEM certificate"):
        split_ca_bundle(empty)


# ------------------------------------------------------------------ the real engine


@pytest.mark.docker
@pytest.mark.slow
def test_base_bootstrap_contents(
    base_image: str, image_builder: ImageBuilder, sandbox: Sandbox, tmp_path: Path
) -> None:
    labels = image_builder.client.api.inspect_image(base_image)["Config"]["Labels"]
    assert labels["io.enconda.kind"] == "base"
    assert labels["io.enconda.recipe"] == BASE
    assert labels["io.enconda.hash"] == image_builder.base_hash(BASE_RECIPES[BASE])
    with sandbox.container(base_image, case_id="t/base", role="test") as box:
        result = box.exec(
            "python --version && python3 -m venv --help >/dev/null && pip --version"
            " && poetry --version && uv --version && pipenv --version"
            " && git --version && curl --version | head -1 && wget --version | head -1"
            " && tree --version && zip -v | head -2 | tail -1 && unzip -v | head -1 && jq --version"
            " && gcc --version | head -1 && make --version | head -1 && pkg-config --version"
            " && ps --version"
            " && for h in openssl/ssl.h ffi.h zlib.h bzlib.h readline/readline.h sqlite3.h lzma.h"
            "    libxml2/libxml/parser.h libxslt/xslt.h jpeglib.h python3.11/Python.h;"
            "    do test -f /usr/include/$h || test -f /usr/include/x86_64-linux-gnu/$h"
            "    || { echo missing $h; exit 1; }; done"
            " && ! ls /usr/lib/python3*/EXTERNALLY-MANAGED 2>/dev/null"
            " && pwd && echo $SSL_CERT_FILE $REQUESTS_CA_BUNDLE $PIP_CERT $GIT_SSL_CAINFO",
            timeout=120,
        )
        box.copy_out("/etc/ssl/certs/ca-certificates.crt", tmp_path / "bundle.crt")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Python 3.11.")
    assert "/data/project\n" in result.output
    assert result.output.rstrip().endswith(" ".join(["/etc/ssl/certs/ca-certificates.crt"] * 4))
    if HOST_CA_BUNDLE.is_file():
        # Every host certificate (the intercepting proxy's CA among them) is trusted inside.
        inside = set(split_ca_bundle(tmp_path / "bundle.crt"))
        assert set(split_ca_bundle(HOST_CA_BUNDLE)) <= inside


@pytest.mark.docker
def test_unchanged_recipe_is_reused(base_image: str, docker_client, sandbox_settings) -> None:
    before = docker_client.api.inspect_image(base_image)["Id"]
    fresh = ImageBuilder(sandbox_settings, client=docker_client)
    assert fresh.ensure_base(BASE, lambda line: None) == base_image
    assert docker_client.api.inspect_image(base_image)["Id"] == before
    assert fresh.built == []


@pytest.mark.docker
@pytest.mark.slow
def test_changed_recipe_rebuilds(
    base_image: str, image_builder: ImageBuilder, sandbox: Sandbox
) -> None:
    variant = BASE_RECIPES[BASE].model_copy(
        update={
            "name": f"{BASE}-variant",
            "extra_steps": ("RUN echo variant > /etc/enconda-variant",),
        }
    )
    builder = ImageBuilder(image_builder.settings, client=image_builder.client, run_id="t-variant")
    tag = builder.ensure_base(variant, lambda line: None)
    try:
        assert tag != base_image
        assert builder.built == [tag]  # the rootfs was reused, only the base layer rebuilt
        new_id = builder.image_id(tag)
        assert new_id != builder.image_id(base_image)
        with sandbox.container(tag, case_id="t/variant", role="test") as box:
            assert box.exec("cat /etc/enconda-variant", timeout=30).output == "variant\n"
        again = ImageBuilder(builder.settings, client=builder.client)
        assert again.ensure_base(variant, lambda line: None) == tag
        assert again.built == [] and again.image_id(tag) == new_id
    finally:
        builder.remove_base(variant)


@pytest.mark.docker
def test_build_error_names_the_step_and_shows_the_log_tail(
    base_image: str, image_builder: ImageBuilder
) -> None:
    broken = BASE_RECIPES[BASE].model_copy(
        update={
            "name": f"{BASE}-broken",
            "extra_steps": ("RUN echo about-to-fail && exit 3",),
        }
    )
    builder = ImageBuilder(image_builder.settings, client=image_builder.client)
    with pytest.raises(ImageBuildError) as info:
        builder.ensure_base(broken, lambda line: None)
    message = str(info.value)
    assert "base bookworm-py3.11-broken" in message
    assert "failed at Step" in message and "RUN echo about-to-fail && exit 3" in message
    assert "returned a non-zero code: 3" in message
    assert "--- build log tail ---" in message and "\nabout-to-fail" in message
    assert builder.image_id(builder.base_tag(broken)) is None


@pytest.mark.docker
@pytest.mark.slow
def test_environment_layer(base_image: str, image_builder: ImageBuilder, sandbox: Sandbox) -> None:
    assert image_builder.ensure_environment(base_image, None) == base_image
    assert image_builder.ensure_environment(base_image, EnvironmentLayer()) == base_image
    layer = EnvironmentLayer(apt_packages=["hello"], run=["echo env-layer > /etc/enconda-env"])
    tag = image_builder.ensure_environment(base_image, layer, lambda line: None)
    try:
        fresh = ImageBuilder(image_builder.settings, client=image_builder.client)
        assert fresh.ensure_environment(base_image, layer) == tag
        assert fresh.built == []
        with sandbox.container(tag, case_id="t/env", role="test") as box:
            result = box.exec("hello && cat /etc/enconda-env && pwd", timeout=30)
        assert result.output == "Hello, world!\nenv-layer\n/data/project\n"
    finally:
        image_builder.client.api.remove_image(tag)


def _make_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (repo / "README.md").write_text("# original readme\n")
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    (repo / "link.py").symlink_to("pkg/__init__.py")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[core]\n")
    (repo / "pkg" / "__pycache__").mkdir()
    return repo


@pytest.mark.slow
@pytest.mark.docker
def test_task_image_layout_overrides_and_cache(
    base_image: str, image_builder: ImageBuilder, sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = _make_repo(tmp_path)
    overrides = {"README.md": b"# readme with errors\n", "docs/extra.md": b"extra\n"}
    tag = image_builder.ensure_task_image(base_image, repo, overrides, "t/task", lambda line: None)
    made = [tag]
    try:
        labels = image_builder.client.api.inspect_image(tag)["Config"]["Labels"]
        assert labels["io.enconda.kind"] == "task"
        assert labels["io.enconda.case"] == "t/task"
        assert labels["io.enconda.pid"] == ""
        with sandbox.container(tag, case_id="t/task", role="test") as box:
            result = box.exec(
                "cat README.md docs/extra.md && ./run.sh && readlink link.py"
                " && python -c 'import pkg; print(pkg.VALUE)'"
                " && ls -A && stat -c '%U %a' run.sh",
                timeout=30,
            )
        assert result.exit_code == 0, result.output
        assert result.output == (
            "# readme with errors\nextra\nran\npkg/__init__.py\n1\n"
            "README.md\ndocs\nlink.py\npkg\nrun.sh\nroot 755\n"
        )
        fresh = ImageBuilder(image_builder.settings, client=image_builder.client)
        assert fresh.ensure_task_image(base_image, repo, overrides, "t/task") == tag
        assert fresh.built == []
        changed = fresh.ensure_task_image(
            base_image, repo, {**overrides, "README.md": b"# other errors\n"}, "t/task"
        )
        made.append(changed)
        assert changed != tag and fresh.built == [changed]
        (repo / "pkg" / "__init__.py").write_text("VALUE = 2\n")
        edited = fresh.ensure_task_image(base_image, repo, overrides, "t/task")
        made.append(edited)
        assert edited not in (tag, changed)
    finally:
        for ref in made:
            image_builder.client.api.remove_image(ref)


@pytest.mark.docker
def test_override_paths_must_stay_inside_the_project(
    base_image: str, image_builder: ImageBuilder, tmp_path: Path
) -> None:
    repo = _make_repo(tmp_path)
    for bad in ("/etc/passwd", "../escape", "docs/../../x"):
        with pytest.raises(ImageBuildError, match="override path"):
            image_builder.ensure_task_image(base_image, repo, {bad: b"x"}, "t/bad")


_CONCURRENT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from pytest_enconda.sandbox.images import ImageBuilder
    builder = ImageBuilder(run_id="t-concurrent")
    tag = builder.ensure_task_image(sys.argv[1], Path(sys.argv[2]), {}, "t/concurrent",
                                    lambda line: print(line, file=sys.stderr))
    print(json.dumps({"tag": tag, "built": builder.built, "id": builder.image_id(tag)}))
    """
)


@pytest.mark.docker
def test_two_processes_asking_for_one_image_build_it_once(
    base_image: str, image_builder: ImageBuilder, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for index in range(300):
        (repo / f"f{index}.txt").write_text(f"{index}\n" * 2000)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _CONCURRENT, base_image, str(repo)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [worker.communicate(timeout=300) for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], outputs
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    try:
        assert results[0]["tag"] == results[1]["tag"]
        assert results[0]["id"] == results[1]["id"]
        assert sorted(len(result["built"]) for result in results) == [0, 1]
    finally:
        image_builder.client.api.remove_image(results[0]["tag"])


@pytest.mark.docker
def test_unpullable_base_is_a_clear_build_error(docker_client, sandbox_settings) -> None:
    settings = sandbox_settings.model_copy(
        update={"pull_base": "enconda-no-registry.invalid/none:latest"}
    )
    builder = ImageBuilder(settings, client=docker_client)
    with pytest.raises(ImageBuildError, match=r"cannot pull base image .*\(setting pull_base\)"):
        builder.ensure_base(BASE, lambda line: None)


@pytest.mark.docker
def test_pull_base_uses_a_local_image_without_debootstrap(
    base_image: str, image_builder: ImageBuilder
) -> None:
    """Where the named image is already present nothing is pulled or bootstrapped."""
    rootfs = image_builder.rootfs_tag(BASE_RECIPES[BASE])
    settings = image_builder.settings.model_copy(update={"pull_base": rootfs})
    builder = ImageBuilder(settings, client=image_builder.client)
    assert builder.ensure_rootfs(BASE_RECIPES[BASE], lambda line: None) == rootfs
    assert builder.built == []
    dockerfile = builder._base_files(BASE_RECIPES[BASE])["Dockerfile"].decode()
    assert dockerfile.startswith(f"FROM {rootfs}\n")
    assert builder.base_tag(BASE) != image_builder.base_tag(BASE)
