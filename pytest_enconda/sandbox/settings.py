"""Settings of the Docker sandbox: network, trust, limits, naming.

Kept free of Docker imports: the plugin builds these from its options at startup.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..cache import default_cache_dir

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
DEFAULT_NETWORK_MODE = "bridge"

# pip's download caches only (`http` of pip < 23.3, `http-v2` after): its `wheels/` holds the
# wheels it *built*, in that box, against whatever system libraries the box had installed. Shared,
# they leaked across cases and agents: gftools' pycairo, built where the oracle had apt-installed
# libcairo2-dev, let the heuristic agent's `pip install ".[qa]"` pass in a later run where it had
# failed to build (2026-11-27 ablation). uv's folder is still shared whole (see README).
PACKAGE_CACHES = {
    "pip-http": "/root/.cache/pip/http",
    "pip-http-v2": "/root/.cache/pip/http-v2",
    "uv": "/root/.cache/uv",
}
# Set in every box that shares those caches. uv waits 300 s by default for a lock another box
# holds on the same wheel: two research cases fetching one ~900 MB torch at once on a loaded
# machine ended the second's golden setup with "Timeout (300s) when waiting for lock" (the main
# job, 2026-11-29): the harness's sharing, charged to the agent. The step's budget still bounds it.
PACKAGE_CACHE_ENV = {"UV_LOCK_TIMEOUT": "86400"}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """``"4g"``, ``"512M"``, ``"20GiB"`` or a plain byte count, as bytes."""
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"expected a size such as '4g', '512m' or a byte count, got {text!r}")
    return int(float(match.group(1)) * _FACTORS[match.group(2).lower()])


def _host_ca_bundle() -> Path | None:
    return HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None


def _host_proxy_env() -> dict[str, str]:
    return {name: os.environ[name] for name in PROXY_VARIABLES if os.environ.get(name)}


def strip_credentials(url: str) -> str:
    """``http://user:secret@proxy:3128`` as ``http://proxy:3128`` (other values unchanged)."""
    parts = urlsplit(url)
    if not parts.username and not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def has_credentials(proxy_env: dict[str, str]) -> bool:
    return any(strip_credentials(value) != value for value in proxy_env.values())


class SandboxSettings(BaseModel):
    """How containers and images are made. ``from_env()`` adds ``ENCONDA_*`` overrides."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # bridge was checked here to reach PyPI (https, through the intercepting proxy) and
    # deb.debian.org (http); it keeps containers off the host's ports, so it is the default.
    network_mode: str = DEFAULT_NETWORK_MODE
    ca_bundle: Path | None = Field(default_factory=_host_ca_bundle)
    # Proxy variables reach every container and build, where the agent can read them: a proxy
    # that needs credentials should get them on the host side (a local forwarding proxy), or
    # they can be stripped here when the registries are reachable without them.
    proxy_env: dict[str, str] = Field(default_factory=_host_proxy_env)
    strip_proxy_credentials: bool = False
    pull_base: str | None = None
    # Clusters without a shared engine share images through a registry: tags are content
    # hashes, so a pulled image is exactly the one this machine would have built.
    image_registry: str | None = None
    debian_mirror: str = "http://deb.debian.org/debian"
    debian_security_mirror: str = "http://deb.debian.org/debian-security"
    cpus: Annotated[float, Field(gt=0)] = 2
    memory: str = "4g"
    shm_size: str = "1g"
    pids_limit: Annotated[int, Field(gt=0)] = 4096
    gpus: Literal["none", "all"] | Annotated[int, Field(gt=0)] = "none"
    package_cache: bool = True
    image_prefix: str = "enconda"
    keep_containers: bool = False
    labels_prefix: str = "io.enconda"
    cache_dir: Path = Field(default_factory=default_cache_dir)

    @model_validator(mode="after")
    def _strip(self) -> SandboxSettings:
        if self.strip_proxy_credentials and has_credentials(self.proxy_env):
            stripped = {key: strip_credentials(value) for key, value in self.proxy_env.items()}
            object.__setattr__(self, "proxy_env", stripped)
        return self

    @field_validator("memory", "shm_size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value

    @field_validator("ca_bundle")
    @classmethod
    def _bundle_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"CA bundle not found: {value}")
        return value

    @field_validator("image_registry")
    @classmethod
    def _registry(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().rstrip("/")
        if not re.fullmatch(r"[A-Za-z0-9.-]+(:\d+)?(/[a-z0-9]+(?:[._/-][a-z0-9]+)*)?", value):
            raise ValueError(f"expected a registry as HOST[:PORT][/PREFIX], got {value!r}")
        return value

    @field_validator("image_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9]+(?:[._/-][a-z0-9]+)*", value):
            raise ValueError(f"expected a lowercase Docker repository name, got {value!r}")
        return value

    @classmethod
    def from_env(cls, **overrides: object) -> SandboxSettings:
        """Defaults, then ``ENCONDA_*`` environment variables, then ``overrides``."""
        values: dict[str, object] = {}
        env = os.environ
        if env.get("ENCONDA_NETWORK_MODE"):
            values["network_mode"] = env["ENCONDA_NETWORK_MODE"]
        if env.get("ENCONDA_CA_BUNDLE"):
            bundle = env["ENCONDA_CA_BUNDLE"]
            values["ca_bundle"] = None if bundle.lower() == "none" else Path(bundle)
        if env.get("ENCONDA_PULL_BASE"):
            values["pull_base"] = env["ENCONDA_PULL_BASE"]
        if env.get("ENCONDA_IMAGE_REGISTRY"):
            values["image_registry"] = env["ENCONDA_IMAGE_REGISTRY"]
        if env.get("ENCONDA_DEBIAN_MIRROR"):
            values["debian_mirror"] = env["ENCONDA_DEBIAN_MIRROR"]
        if env.get("ENCONDA_MEMORY"):
            # A box's memory limit: verify's out-of-memory message tells the user to raise it.
            values["memory"] = env["ENCONDA_MEMORY"]
        if env.get("ENCONDA_STRIP_PROXY_CREDENTIALS"):
            values["strip_proxy_credentials"] = env["ENCONDA_STRIP_PROXY_CREDENTIALS"].lower() in (
                "1",
                "true",
                "yes",
            )
        if env.get("ENCONDA_KEEP_CONTAINERS"):
            values["keep_containers"] = env["ENCONDA_KEEP_CONTAINERS"].lower() in (
                "1",
                "true",
                "yes",
            )
        values.update(overrides)
        return cls.model_validate(values)

    def label(self, key: str) -> str:
        return f"{self.labels_prefix}.{key}"

    @property
    def memory_bytes(self) -> int:
        return parse_size(self.memory)
