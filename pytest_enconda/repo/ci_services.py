"""Services a repository's CI runs beside its tests (GitHub Actions ``services:``, CircleCI's
secondary ``docker:`` images), started in the test box from Debian's packages: there is no
registry to pull the CI's images from.

pika's 79 of 102 failing tests said ``AMQPConnectionError``: its workflow runs them next to a
``rabbitmq`` service container. A service is known by its image's name (``postgres:12``,
``bitnami/redis``); its settings are the image's documented environment variables
(``POSTGRES_USER``...), read from the workflow, so the database, user and password the tests
expect exist. Unknown images are left out and said, never guessed at.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..cases.operands import option_shaped

if TYPE_CHECKING:
    from .test_commands import TestCommand

__all__ = ["CiService", "ci_services", "service_packages", "services_prelude"]

Kind = Literal["postgres", "mysql", "redis", "rabbitmq", "memcached"]

# The image's last path part, before its tag → the kind (postgis/postgis is PostgreSQL first).
_IMAGES: dict[str, Kind] = {
    "postgres": "postgres",
    "postgis": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "redis": "redis",
    "redis-stack-server": "redis",
    "rabbitmq": "rabbitmq",
    "memcached": "memcached",
}
# Debian's package for each kind (bullseye, bookworm and trixie alike).
_PACKAGES: dict[Kind, str] = {
    "postgres": "postgresql",
    "mysql": "mariadb-server",
    "redis": "redis-server",
    "rabbitmq": "rabbitmq-server",
    "memcached": "memcached",
}
# The variables each image reads; others (and any holding a workflow expression) are not kept.
_SETTINGS: dict[Kind, tuple[str, ...]] = {
    "postgres": ("POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB", "POSTGRES_HOST_AUTH_METHOD"),
    "mysql": (
        "MYSQL_ROOT_PASSWORD",
        "MYSQL_DATABASE",
        "MYSQL_USER",
        "MYSQL_PASSWORD",
        "MARIADB_ROOT_PASSWORD",
        "MARIADB_DATABASE",
        "MARIADB_USER",
        "MARIADB_PASSWORD",
    ),
    "redis": (),
    "rabbitmq": ("RABBITMQ_DEFAULT_USER", "RABBITMQ_DEFAULT_PASS"),
    "memcached": (),
}
_VALUE = re.compile(r"^[\w.@%+:/-]{0,128}$")
# Seconds a service may take to answer before the tests start anyway.
READY_SECONDS = 90


class CiService(BaseModel):
    """One service the tests expect, as the sidecar keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    image: str = Field(default="", max_length=200, description="the CI's image, as written")
    env: dict[str, str] = Field(
        default_factory=dict, description="the image's settings the workflow gave"
    )


def _image_kind(image: str) -> Kind | None:
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return _IMAGES.get(name)


def _settings(kind: Kind, env: object) -> dict[str, str]:
    if not isinstance(env, dict):
        return {}
    kept: dict[str, str] = {}
    for key, value in env.items():
        text = str(value) if isinstance(value, str | int | float) else None
        if key in _SETTINGS[kind] and text is not None and _VALUE.match(text):
            kept[str(key)] = text
    return kept


def _job_services(document: object) -> list[tuple[str, object]]:
    """(image, env) of every service of every job in a workflow document."""
    jobs = document.get("jobs") if isinstance(document, dict) else None
    found: list[tuple[str, object]] = []
    for job in jobs.values() if isinstance(jobs, dict) else []:
        services = job.get("services") if isinstance(job, dict) else None
        for service in services.values() if isinstance(services, dict) else []:
            if isinstance(service, str):
                found.append((service, {}))
            elif isinstance(service, dict) and isinstance(service.get("image"), str):
                found.append((service["image"], service.get("env")))
    return found


def _circleci_services(document: object) -> list[tuple[str, object]]:
    """(image, environment) of every secondary image of every CircleCI job and executor: the
    first image of a ``docker:`` list is the one the steps run in, the others run beside it
    (bitcart's ``circleci/redis:alpine`` and ``circleci/postgres:12-alpine-ram``)."""
    if not isinstance(document, dict):
        return []
    found: list[tuple[str, object]] = []
    for section in ("executors", "jobs"):
        entries = document.get(section)
        for entry in entries.values() if isinstance(entries, dict) else []:
            images = entry.get("docker") if isinstance(entry, dict) else None
            for image in images[1:] if isinstance(images, list) else []:
                if isinstance(image, dict) and isinstance(image.get("image"), str):
                    found.append((image["image"], image.get("environment")))
    return found


def _circleci_files(repo: Path) -> list[Path]:
    """``config.yml`` first, then the configurations it continues with (uk-polling-stations'
    ``setup: true`` config hands over to ``deploy-config.yml``, where the jobs are)."""
    folder = repo / ".circleci"
    if not folder.is_dir():
        return []
    files = (p for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))
    return sorted(files, key=lambda p: (p.name != "config.yml", p.name))[:20]


def ci_services(repo: Path, found: TestCommand | None = None) -> tuple[list[CiService], list[str]]:
    """The services CI starts beside the tests (of the workflow that gave ``found`` when CI gave
    it, else of every GitHub workflow and CircleCI's configuration), one per kind, and the
    images no kind matched."""
    import yaml

    from .files import read_text
    from .test_commands import _workflows

    repo = Path(repo)
    readers: list[tuple[Path, Callable[[object], list[tuple[str, object]]]]]
    if found is not None and found.source == "ci" and found.detail.startswith(".github/"):
        readers = [(repo / found.detail, _job_services)]
    elif found is not None and found.source == "ci" and found.detail.startswith(".circleci/"):
        readers = [(repo / found.detail, _circleci_services)]
    else:
        readers = [(path, _job_services) for path in _workflows(repo)]
        readers += [(path, _circleci_services) for path in _circleci_files(repo)]
    services: dict[Kind, CiService] = {}
    unknown: list[str] = []
    root = repo.resolve()
    for path, read in readers:
        if not path.resolve().is_relative_to(root):
            continue  # a linked folder (.circleci -> /etc) is not the repository's
        try:
            document = yaml.safe_load(read_text(path))
        except yaml.YAMLError:
            continue
        for image, env in read(document):
            kind = _image_kind(image)
            if kind is None:
                if image not in unknown and "${{" not in image:
                    unknown.append(image)
                continue
            services.setdefault(kind, CiService(kind=kind, image=image, env=_settings(kind, env)))
    return list(services.values()), unknown[:20]


def _postgis(service: CiService) -> bool:
    """PostGIS images (``postgis/postgis``, CircleCI's ``cimg/postgres:14.5-postgis``)."""
    return service.kind == "postgres" and "postgis" in service.image.lower()


def service_packages(services: Sequence[CiService]) -> list[str]:
    """The Debian packages that provide the services."""
    return list(dict.fromkeys(_PACKAGES[service.kind] for service in services))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _sql(runner: str, statements: list[str]) -> str:
    """Statements fed to ``runner`` on stdin (no shell expansion of their text)."""
    body = "\n".join(statements)
    failed = "echo 'enconda: the service was not configured' >&2"
    return f"{runner} <<'ENCONDA_SQL' || {failed}\n{body}\nENCONDA_SQL"


def _wait(check: str, what: str) -> str:
    return (
        f"for _i in $(seq {READY_SECONDS}); do {check} >/dev/null 2>&1 && break; sleep 1; done; "
        f"{check} >/dev/null 2>&1 || echo 'enconda: {what} did not answer' >&2"
    )


def _postgres(env: dict[str, str], postgis: bool = False) -> list[str]:
    user = env.get("POSTGRES_USER") or "postgres"
    password = env.get("POSTGRES_PASSWORD") or "postgres"
    database = env.get("POSTGRES_DB") or user
    statements = [f"ALTER ROLE postgres PASSWORD {_literal(password)};"]
    if user != "postgres":
        statements.append(
            f"CREATE ROLE {_identifier(user)} LOGIN SUPERUSER PASSWORD {_literal(password)};"
        )
    if database != "postgres":
        statements.append(f"CREATE DATABASE {_identifier(database)} OWNER {_identifier(user)};")
    if postgis:
        # As the PostGIS image does: the extension in the database and in new ones' template.
        for name in dict.fromkeys(("template1", database)):
            statements += [
                f"\\connect {_identifier(name)}",
                "CREATE EXTENSION IF NOT EXISTS postgis;",
            ]
    # The image trusts its socket; over TCP it asks for the password unless told to trust, and
    # a CI whose service has no password (bitcart's CircleCI, a workflow's secret dropped here)
    # ran one that trusted.
    trusting = not env.get("POSTGRES_PASSWORD") or env.get("POSTGRES_HOST_AUTH_METHOD") == "trust"
    methods = "peer|scram-sha-256|md5" if trusting else "peer"
    # PostGIS is packaged per server version (bullseye has no unversioned package).
    extension = (
        [
            "_pgv=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1); "
            "dpkg -s postgresql-$_pgv-postgis-3 >/dev/null 2>&1 || (apt-get update -qq && "
            "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
            "postgresql-$_pgv-postgis-3) >/dev/null || echo 'enconda: postgis did not install' >&2"
        ]
        if postgis
        else []
    )
    return [
        *extension,
        f"sed -i -E 's/ ({methods})$/ trust/' /etc/postgresql/*/main/pg_hba.conf",
        # Debian's cluster is named by its version; the first one found is started.
        'for _v in /etc/postgresql/*/main; do pg_ctlcluster "$(basename "$(dirname "$_v")")" '
        "main start; break; done",
        _wait("pg_isready -q -h 127.0.0.1", "postgres"),
        _sql("runuser -u postgres -- psql -q -v ON_ERROR_STOP=0", statements),
    ]


def _mysql(env: dict[str, str]) -> list[str]:
    root = env.get("MARIADB_ROOT_PASSWORD") or env.get("MYSQL_ROOT_PASSWORD") or ""
    database = env.get("MARIADB_DATABASE") or env.get("MYSQL_DATABASE") or ""
    user = env.get("MARIADB_USER") or env.get("MYSQL_USER") or ""
    password = env.get("MARIADB_PASSWORD") or env.get("MYSQL_PASSWORD") or ""
    statements = [
        # The CI image's root logs in with its password over TCP; Debian's only by socket.
        "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password "
        f"USING PASSWORD({_literal(root)});",
        f"CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY {_literal(root)};",
        "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;",
    ]
    if database:
        statements.append(f"CREATE DATABASE IF NOT EXISTS `{database.replace('`', '')}`;")
    if user:
        statements += [
            f"CREATE USER IF NOT EXISTS {_literal(user)}@'%' IDENTIFIED BY {_literal(password)};",
            f"GRANT ALL ON *.* TO {_literal(user)}@'%';",
        ]
    return [
        "(service mariadb start || service mysql start) >/dev/null 2>&1 || "
        "(mysqld_safe >/dev/null 2>&1 &)",
        _wait("mysqladmin ping", "mysql"),
        _sql("mysql -uroot", statements),
    ]


def _rabbitmq(env: dict[str, str]) -> list[str]:
    lines = [
        "(service rabbitmq-server start || rabbitmq-server -detached) >/dev/null 2>&1",
        _wait("rabbitmqctl -q status", "rabbitmq"),
    ]
    user, password = env.get("RABBITMQ_DEFAULT_USER"), env.get("RABBITMQ_DEFAULT_PASS")
    # From the repository's CI file: a name beginning with '-' would be a rabbitmqctl option.
    if user and password and not option_shaped(user) and not option_shaped(password):
        quoted = f"{shlex.quote(user)} {shlex.quote(password)}"
        lines.append(
            f"rabbitmqctl -q add_user {quoted} >/dev/null 2>&1; "
            f"rabbitmqctl -q set_permissions {shlex.quote(user)} '.*' '.*' '.*' >/dev/null 2>&1; "
            f"rabbitmqctl -q set_user_tags {shlex.quote(user)} administrator >/dev/null 2>&1"
        )
    return lines


def _start(service: CiService) -> list[str]:
    if service.kind == "postgres":
        return _postgres(service.env, _postgis(service))
    if service.kind == "mysql":
        return _mysql(service.env)
    if service.kind == "rabbitmq":
        return _rabbitmq(service.env)
    if service.kind == "redis":
        return ["redis-server --daemonize yes >/dev/null", _wait("redis-cli ping", "redis")]
    return ["memcached -d -u nobody"]


def services_prelude(services: Sequence[CiService]) -> list[str]:
    """Shell lines that start the services before the tests, installing the packages an
    environment lacks (an agent's setup need not have); a service that fails to start is said,
    and the tests run anyway, as CI's would fail on it."""
    if not services:
        return []
    packages = " ".join(service_packages(services))
    lines = [
        f"_enconda_missing=$(for _p in {packages}; do "
        "dpkg -s $_p >/dev/null 2>&1 || echo $_p; done)",
        'if [ -n "$_enconda_missing" ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive '
        "apt-get install -y -qq --no-install-recommends $_enconda_missing) >/dev/null "
        '|| echo "enconda: services\' packages did not install: $_enconda_missing" >&2; fi',
    ]
    for service in services:
        lines += _start(service)
    return lines
