"""Sandbox settings: host-derived defaults, validation, environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_enconda.sandbox.settings import (
    HOST_CA_BUNDLE,
    PROXY_VARIABLES,
    SandboxSettings,
    parse_size,
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in (
        "NETWORK_MODE",
        "CA_BUNDLE",
        "PULL_BASE",
        "DEBIAN_MIRROR",
        "KEEP_CONTAINERS",
        "MEMORY",
    ):
        monkeypatch.delenv(f"ENCONDA_{name}", raising=False)
    return monkeypatch


def test_defaults_follow_the_host(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    clean_env.setenv("no_proxy", "localhost")
    settings = SandboxSettings()
    assert settings.network_mode == "bridge"
    assert settings.proxy_env == {
        "HTTPS_PROXY": "http://proxy.example:3128",
        "no_proxy": "localhost",
    }
    expected_bundle = HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None
    assert settings.ca_bundle == expected_bundle
    assert settings.gpus == "none"
    assert settings.label("run") == "io.enconda.run"
    with pytest.raises(ValidationError):
        settings.network_mode = "host"  # type: ignore[misc]


def test_invalid_values_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"memory\n.*expected a size"):
        SandboxSettings(memory="lots")
    with pytest.raises(ValidationError, match=r"ca_bundle\n.*CA bundle not found"):
        SandboxSettings(ca_bundle=tmp_path / "missing.crt")
    with pytest.raises(ValidationError, match="gpus"):
        SandboxSettings(gpus=0)
    with pytest.raises(ValidationError, match=r"image_prefix\n.*lowercase"):
        SandboxSettings(image_prefix="Bad Prefix")


def test_from_env_overrides(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bundle = tmp_path / "ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nQUFB\n-----END CERTIFICATE-----\n")
    clean_env.setenv("ENCONDA_NETWORK_MODE", "host")
    clean_env.setenv("ENCONDA_CA_BUNDLE", str(bundle))
    clean_env.setenv("ENCONDA_PULL_BASE", "ubuntu:22.04")
    clean_env.setenv("ENCONDA_KEEP_CONTAINERS", "true")
    settings = SandboxSettings.from_env(cpus=1.5)
    assert settings.network_mode == "host"
    assert settings.ca_bundle == bundle
    assert settings.pull_base == "ubuntu:22.04"
    assert settings.keep_containers is True
    assert settings.cpus == 1.5
    clean_env.setenv("ENCONDA_CA_BUNDLE", "none")
    assert SandboxSettings.from_env().ca_bundle is None


def test_enconda_memory_sets_the_box_limit(clean_env: pytest.MonkeyPatch) -> None:
    # verify's out-of-memory reason tells the user to raise ENCONDA_MEMORY: it must be read.
    assert SandboxSettings.from_env().memory_bytes == 4 * 1024**3
    clean_env.setenv("ENCONDA_MEMORY", "10g")
    assert SandboxSettings.from_env().memory_bytes == 10 * 1024**3
    clean_env.setenv("ENCONDA_MEMORY", "lots")
    with pytest.raises(ValidationError, match=r"memory\n.*expected a size"):
        SandboxSettings.from_env()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4g", 4 * 1024**3), ("512M", 512 * 1024**2), ("20GiB", 20 * 1024**3), ("1000", 1000)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_proxy_credentials_can_be_kept_out_of_containers() -> None:
    from pytest_enconda.sandbox.settings import has_credentials, strip_credentials

    env = {"HTTPS_PROXY": "http://user:secret@proxy:3128", "NO_PROXY": "localhost,.internal"}
    kept = SandboxSettings(proxy_env=env)
    assert has_credentials(kept.proxy_env)
    stripped = SandboxSettings(proxy_env=env, strip_proxy_credentials=True)
    assert stripped.proxy_env == {
        "HTTPS_PROXY": "http://proxy:3128",
        "NO_PROXY": "localhost,.internal",
    }
    assert not has_credentials(stripped.proxy_env)
    assert strip_credentials("http://[::1]:8080") == "http://[::1]:8080"
    assert strip_credentials("http://u@[::1]:8080") == "http://[::1]:8080"
