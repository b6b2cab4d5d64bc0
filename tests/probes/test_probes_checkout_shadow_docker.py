"""The checkout proof in a real box, as verify takes it: a release installed from elsewhere with
the checkout's import name is refused even though the tests' folder holds a package of that name;
the checkout installed in its place is proven."""

from __future__ import annotations

from pathlib import Path

import pytest

RELEASE = (
    "mkdir -p /tmp/release/shadowdemo\n"
    "echo 'RELEASE = 1' > /tmp/release/shadowdemo/__init__.py\n"
    'printf \'from setuptools import setup\\nsetup(name="shadowdemo-release", version="1", '
    'packages=["shadowdemo"])\\n\' > /tmp/release/setup.py\n'
    "python -m pip install -q /tmp/release\n"
)


@pytest.mark.slow
@pytest.mark.docker
def test_a_shadowing_checkout_is_refused_and_the_installed_checkout_proven(
    tmp_path: Path, sandbox, base_image
) -> None:
    from recipebox import project, set_up

    from pytest_enconda.verify.checkout import checkout_proof

    setup_py = "from setuptools import setup\nsetup(name='shadowdemo', packages=['shadowdemo'])\n"
    repo = project(tmp_path / "repo", "shadowdemo", {"setup.py": setup_py})
    with set_up(sandbox, base_image, repo, RELEASE, "t/shadow") as (box, _):
        proof = checkout_proof(box, ["shadowdemo"], tmp_path / "release.json", "shadowdemo")
        assert proof.verdict == "release" and proof.refuses, proof
        (module,) = proof.modules
        assert module.distribution == "shadowdemo-release"
        assert module.file is not None and "/data/project" not in module.file
        # From the project folder, as the old proof ran, the checkout shadowed the release.
        shadowed = box.exec(
            "python -c 'import shadowdemo; print(shadowdemo.__file__)'",
            timeout=60,
            workdir="/data/project",
        )
        assert "/data/project/shadowdemo/__init__.py" in shadowed.output
        installed = box.exec(
            "python -m pip uninstall -q -y shadowdemo-release && python -m pip install -q -e .",
            timeout=600,
            workdir="/data/project",
        )
        assert installed.exit_code == 0, installed.output[-2000:]
        proof = checkout_proof(box, ["shadowdemo"], tmp_path / "checkout.json", "shadowdemo")
        assert proof.verdict == "checkout", proof
        assert proof.modules[0].file == "/data/project/shadowdemo/__init__.py"


FLIT = (
    '[build-system]\nrequires = ["flit_core>=3.2,<4"]\nbuild-backend = "flit_core.buildapi"\n'
    '[project]\nname = "flit-demo"\nversion = "1.0"\ndescription = "d"\n'
    '[tool.flit.module]\nname = "flitdemo"\n'
)


@pytest.mark.slow
@pytest.mark.docker
def test_on_python_3_9_a_checkout_built_without_top_level_txt_is_proven(
    tmp_path: Path, sandbox, image_builder
) -> None:
    """compserv/hknweb on bullseye: ``pip install .`` copies the checkout into site-packages
    from a wheel without ``top_level.txt`` (as flit, Poetry and Hatch build it). Python 3.9 has
    no ``packages_distributions``; the probe reads the wheel's RECORD to find the distribution,
    whose PEP 610 record names the checkout."""
    from recipebox import project, set_up

    from pytest_enconda.verify.checkout import checkout_proof

    older = image_builder.ensure_base("bullseye-py3.9", lambda _line: None)
    repo = project(tmp_path / "repo", "flitdemo", {"pyproject.toml": FLIT})
    with set_up(sandbox, older, repo, "python -m pip install -q .\n", "t/flit39") as (box, _):
        proof = checkout_proof(box, ["flitdemo"], tmp_path / "proof.json")
    assert proof.verdict == "checkout", proof
    (module,) = proof.modules
    assert module.file is not None and "/python3.9/" in module.file
    assert module.distribution == "flit-demo" and module.direct_url == "file:///data/project"
