"""Services CI runs beside the tests (pika's ``rabbitmq``, peering-manager's ``postgres`` and
``redis``) are read from the workflow, kept in the sidecar, and started by the test step from
Debian's packages, in verify and in grading alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dataset_factory import one_instance_dataset

from pytest_enconda.cases.sidecar import RepoVerification, read_sidecar
from pytest_enconda.probing.junit import TESTS_START, run_tests_command
from pytest_enconda.repo.ci_services import (
    CiService,
    ci_services,
    service_packages,
    services_prelude,
)
from pytest_enconda.repo.test_commands import TestCommand

PEERING = """
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff .
  test:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:12
        ports: ["5432:5432"]
        env:
          POSTGRES_DB: peering_manager
          POSTGRES_USER: devbox
          POSTGRES_PASSWORD: ${{ secrets.DB_PASSWORD }}
          PGDATA: /var/lib/pg
      redis:
        image: redis:6
      search:
        image: docker.elastic.co/elasticsearch/elasticsearch:7.17.5
    steps:
      - run: python -m pytest tests
"""
PIKA = """
jobs:
  build:
    services:
      rabbitmq:
        image: rabbitmq
        ports:
          - 5672:5672
    steps:
      - run: pytest
"""


def _repo(tmp_path: Path, **workflows: str) -> Path:
    folder = tmp_path / "repo" / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in workflows.items():
        (folder / f"{name}.yml").write_text(text)
    return tmp_path / "repo"


def test_services_and_their_settings_are_read_from_the_workflow(tmp_path: Path) -> None:
    repo = _repo(tmp_path, tests=PEERING)
    found = TestCommand(
        command="python -m pytest tests", source="ci", detail=".github/workflows/tests.yml"
    )
    services, unknown = ci_services(repo, found)
    assert services == [
        # A secret is not a value: the image's default stands in for it.
        CiService(
            kind="postgres",
            image="postgres:12",
            env={"POSTGRES_DB": "peering_manager", "POSTGRES_USER": "devbox"},
        ),
        CiService(kind="redis", image="redis:6"),
    ]
    assert unknown == ["docker.elastic.co/elasticsearch/elasticsearch:7.17.5"]
    assert service_packages(services) == ["postgresql", "redis-server"]


def test_a_command_ci_did_not_give_reads_every_workflow(tmp_path: Path) -> None:
    repo = _repo(tmp_path, main=PIKA, lint="jobs:\n  l:\n    steps:\n      - run: ruff .\n")
    found = TestCommand(command="python -m pytest", source="default", detail="")
    services, unknown = ci_services(repo, found)
    assert [s.kind for s in services] == ["rabbitmq"] and unknown == []
    # The workflow that gave the command is the only one read when CI gave it.
    given = TestCommand(command="pytest", source="ci", detail=".github/workflows/lint.yml")
    assert ci_services(repo, given) == ([], [])


@pytest.mark.parametrize(
    "text",
    [
        "jobs: [1, 2]",
        "jobs:\n  a:\n    services: postgres\n",
        ": : :",
        "jobs:\n  a:\n    services:\n      s: 3\n",
    ],
)
def test_a_workflow_of_another_shape_gives_no_services(tmp_path: Path, text: str) -> None:
    assert ci_services(_repo(tmp_path, ci=text)) == ([], [])


def test_the_test_step_starts_the_services_before_the_tests() -> None:
    postgres = CiService(
        kind="postgres",
        env={"POSTGRES_USER": "dev'box", "POSTGRES_DB": 'x"y', "POSTGRES_PASSWORD": "p"},
    )
    step = run_tests_command("python -m pytest", ["pytest"], services=[postgres])
    assert "apt-get install -y -qq --no-install-recommends $_enconda_missing" in step
    assert "for _p in postgresql;" in step
    start = step.index("pg_ctlcluster")
    assert start < step.index(TESTS_START)
    # Quoted for SQL, fed on a quoted heredoc: no shell expansion, no injection.
    assert "CREATE ROLE \"dev'box\" LOGIN SUPERUSER PASSWORD 'p';" in step
    assert 'CREATE DATABASE "x""y" OWNER "dev\'box";' in step
    assert "pg_ctlcluster" not in run_tests_command("python -m pytest", ["pytest"])
    assert services_prelude([]) == []


def test_the_sidecar_carries_the_services_into_grading(tmp_path: Path) -> None:
    from pytest_enconda.cases.enconda_import import load_dataset

    record = RepoVerification(
        repository="o/a",
        revision="abc",
        status="verified",
        pass_set=["t::a"],
        services=[CiService(kind="rabbitmq", image="rabbitmq")],
    )
    data = one_instance_dataset(tmp_path, record)
    sidecar = next(data.glob("*.json"))
    assert read_sidecar(sidecar).repositories["o/a"].services[0].kind == "rabbitmq"
    load = load_dataset(data, verification=sidecar)
    (case,) = load.cases
    assert case.reference is not None
    assert [s.kind for s in case.reference.services] == ["rabbitmq"]
    text = json.loads(sidecar.read_text())
    text["repositories"]["o/a"]["services"] = [{"kind": "mongodb"}]
    sidecar.write_text(json.dumps(text))
    from pytest_enconda.cases.sidecar import SidecarError

    with pytest.raises(SidecarError, match=r"repositories\.o/a\.services"):
        read_sidecar(sidecar)


# bitcart's: the steps run in the first image, the services in the others.
CIRCLECI = """
version: 2.1
executors:
  main-executor:
    docker:
      - image: cimg/python:3.9
      - image: circleci/redis:alpine
      - image: circleci/postgres:12-alpine-ram
        environment:
          POSTGRES_DB: bitcart_test
          POSTGRES_HOST_AUTH_METHOD: trust
jobs:
  test:
    executor: main-executor
    steps: [checkout]
  docs:
    docker:
      - image: cimg/python:3.9
      - image: memcached:1.6
      - image: quay.io/acme/search:1
"""


def _circleci(tmp_path: Path, text: str = CIRCLECI) -> Path:
    folder = tmp_path / "repo" / ".circleci"
    folder.mkdir(parents=True)
    (folder / "config.yml").write_text(text)
    return tmp_path / "repo"


def test_circlecis_secondary_images_are_the_services(tmp_path: Path) -> None:
    repo = _circleci(tmp_path)
    services, unknown = ci_services(repo)
    assert services == [
        CiService(kind="redis", image="circleci/redis:alpine"),
        CiService(
            kind="postgres",
            image="circleci/postgres:12-alpine-ram",
            env={"POSTGRES_DB": "bitcart_test", "POSTGRES_HOST_AUTH_METHOD": "trust"},
        ),
        CiService(kind="memcached", image="memcached:1.6"),
    ]
    assert unknown == ["quay.io/acme/search:1"]  # and never the image the steps run in
    # A command CircleCI gave reads CircleCI alone; one a workflow gave, that workflow alone.
    given = TestCommand(command="pytest", source="ci", detail=".circleci/config.yml")
    assert ci_services(repo, given) == (services, unknown)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "t.yml").write_text(PIKA)
    workflow = TestCommand(command="pytest", source="ci", detail=".github/workflows/t.yml")
    assert [s.kind for s in ci_services(repo, workflow)[0]] == ["rabbitmq"]
    assert [s.kind for s in ci_services(repo)[0]] == ["rabbitmq", "redis", "postgres", "memcached"]


def test_a_linked_ci_folder_is_not_read(tmp_path: Path) -> None:
    outside = _circleci(tmp_path / "elsewhere").parent / "repo" / ".circleci"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".circleci").symlink_to(outside)
    assert ci_services(repo) == ([], [])


def _hba_edit(service: CiService) -> str:
    lines = services_prelude([service])
    edit = next(i for i, line in enumerate(lines) if "pg_hba.conf" in line)
    assert edit < next(i for i, line in enumerate(lines) if "pg_ctlcluster" in line)
    return lines[edit]


def test_the_socket_is_trusted_and_tcp_too_where_ci_gave_no_password() -> None:
    """As the image: its socket trusts; over TCP a password is asked for unless the CI's service
    had none (it could only have run trusting) or was told to trust."""
    assert "(peer)$" in _hba_edit(CiService(kind="postgres", env={"POSTGRES_PASSWORD": "p"}))
    everything = "(peer|scram-sha-256|md5)$"
    assert everything in _hba_edit(CiService(kind="postgres"))
    told = {"POSTGRES_PASSWORD": "p", "POSTGRES_HOST_AUTH_METHOD": "trust"}
    assert everything in _hba_edit(CiService(kind="postgres", env=told))


# uk-polling-stations': a `setup: true` config.yml hands over to deploy-config.yml.
UKPS = """
version: 2.1
jobs:
  build_and_test:
    docker:
      - image: cimg/python:3.10.13-browsers
        environment:
          PGHOST: 127.0.0.1
      - image: cimg/postgres:14.5-postgis
        environment:
          POSTGRES_USER: postgres
          POSTGRES_DB: polling_stations
"""


def test_a_postgis_image_adds_postgis_and_its_extension(tmp_path: Path) -> None:
    repo = _circleci(tmp_path, "version: 2.1\nsetup: true\n")
    (repo / ".circleci" / "deploy-config.yml").write_text(UKPS)
    services, unknown = ci_services(repo)
    assert services == [
        CiService(
            kind="postgres",
            image="cimg/postgres:14.5-postgis",
            env={"POSTGRES_USER": "postgres", "POSTGRES_DB": "polling_stations"},
        )
    ]
    assert unknown == []
    assert service_packages(services) == ["postgresql"]  # PostGIS's name follows the server's
    script = "\n".join(services_prelude(services))
    assert '\\connect "polling_stations"\nCREATE EXTENSION IF NOT EXISTS postgis;' in script
    assert '\\connect "template1"' in script
    assert "postgresql-$_pgv-postgis-3" in script
    assert "postgis" not in "\n".join(services_prelude([CiService(kind="postgres")]))


@pytest.mark.docker
@pytest.mark.slow
def test_a_passwordless_postgis_takes_a_login_and_has_the_extension(
    sandbox, base_image, tmp_path: Path
) -> None:
    """uk-polling-stations' CircleCI database: user postgres, no password, over TCP and by the
    socket, PostGIS in its database."""
    repo = _circleci(tmp_path, UKPS)
    services, _ = ci_services(repo)
    script = "\n".join(services_prelude(services))
    query = "select current_database(), postgis_lib_version() is not null"
    check = (
        f"psql -w -h 127.0.0.1 -U postgres -d polling_stations -tAc '{query}' && "
        "psql -w -U postgres -d polling_stations -tAc 'select 1'"
    )
    with sandbox.container(base_image, case_id="t/trust", role="test") as box:
        started = box.exec(script, timeout=900, workdir="/")
        run = box.exec(check, timeout=60, workdir="/")
    assert started.exit_code == 0 and "enconda:" not in started.output, started.output[-3000:]
    assert run.exit_code == 0, run.output
    assert run.output.split() == ["polling_stations|t", "1"]


@pytest.mark.docker
@pytest.mark.slow
def test_postgres_and_redis_answer_in_a_box_as_ci_configured_them(sandbox, base_image) -> None:
    """Debian's packages installed and started by the prelude itself (the base has neither):
    the CI's user logs in over TCP with its password to its database, and redis answers."""
    services = [
        CiService(
            kind="postgres",
            env={"POSTGRES_USER": "devbox", "POSTGRES_PASSWORD": "devpw", "POSTGRES_DB": "pm"},
        ),
        CiService(kind="redis"),
    ]
    script = "\n".join(services_prelude(services))
    check = (
        "PGPASSWORD=devpw psql -h 127.0.0.1 -U devbox -d pm -tAc 'select current_user' && "
        "redis-cli ping"
    )
    with sandbox.container(base_image, case_id="t/services", role="test") as box:
        started = box.exec(script, timeout=900, workdir="/")
        run = box.exec(check, timeout=60, workdir="/")
    assert started.exit_code == 0, started.output[-3000:]
    assert "enconda:" not in started.output, started.output[-3000:]
    assert run.exit_code == 0, run.output
    assert run.output.split() == ["devbox", "PONG"]


def test_verify_records_the_services_and_its_recipe_installs_their_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitutil import git
    from verifyfake import fake_context

    from pytest_enconda.verify import ladder

    origin = _repo(tmp_path, tests=PEERING)
    (origin / "setup.py").write_text("from setuptools import setup\nsetup(name='mini')\n")
    git(origin, "init", "--quiet", "--initial-branch=main")
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    snapshot = tmp_path / "o+n" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(snapshot))
    scripts: list[str] = []

    def attempt(ctx, record, image, label, script, *_):  # type: ignore[no-untyped-def]
        scripts.append(script)
        record.attempts.append(f"{label}: failed")
        return False

    monkeypatch.setattr(ladder, "attempt", attempt)
    monkeypatch.setattr(ladder, "_system_packages", lambda *_a: [])
    lines: list[str] = []
    ctx = fake_context(
        tmp_path, snapshot, lines, logs=tmp_path / "logs", agent="readme", recipe_as_of=False
    )
    monkeypatch.setattr(ladder, "_agent_script", lambda *_a, **_k: "")
    record = ladder.verify_repository(ctx, "o/n", git(origin, "rev-parse", "HEAD"))  # type: ignore[arg-type]
    assert [s.kind for s in record.services] == ["postgres", "redis"]
    assert record.unknown_services == ["docker.elastic.co/elasticsearch/elasticsearch:7.17.5"]
    assert scripts and "postgresql" in scripts[-1] and "redis-server" in scripts[-1]
    assert any(
        "CI services started beside the tests: postgres, redis; not known:" in line
        for line in lines
    )
