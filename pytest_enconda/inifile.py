"""The host backend's option values are not where pytest's configuration comes from.

pytest chooses its rootdir and configuration file before any installed plugin is loaded, from
the command line's free arguments, and at that point ``--python PATH --repo DIR`` are options it
does not know: it takes ``PATH`` and ``DIR`` for paths to collect. ``--repo ~/src/repo`` (or
``--python ~/src/repo/.venv/bin/python``) then makes the graded repository's own
``pyproject.toml``/``pytest.ini``/``setup.cfg``/``tox.ini`` pytest's configuration: its
``addopts`` (``--cov=pkg`` without pytest-cov is "unrecognized arguments"), its markers and
filters, and the repository as rootdir (the cache written into it).

Once the plugin is loaded (``pytest_load_initial_conftests``, the first hook it receives with
the configuration), the choice is made again from the arguments pytest now parses correctly:
the paths to collect, and ``--cases`` folders, which are collected too. Where that choice
differs, the configuration is replaced before the command line is parsed in full: the first
choice's ``addopts`` are taken out of the arguments and the second's put in, and its
``pythonpath`` entries out of ``sys.path``. pytest offers no public way to do this; if its
internals are not as expected the run stops with a usage error saying how to avoid the problem
(``--repo=DIR --python=PATH``: an option written with ``=`` is never taken for a path).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

_HOST_OPTIONS = ("python", "repo", "report")


def _host_run(namespace: Any) -> bool:
    return any(getattr(namespace, name, None) is not None for name in _HOST_OPTIONS)


def rechoose(config: pytest.Config, args: list[str]) -> None:
    """Choose pytest's rootdir and configuration file again without the host options' values
    (a host run only); ``args`` is the command line pytest is about to parse, changed in place."""
    if not _host_run(config.known_args_namespace):
        return
    from _pytest.config.findpaths import determine_setup

    namespace = config.known_args_namespace
    old_addopts = list(config.getini("addopts"))
    if old_addopts and args[: len(old_addopts)] == old_addopts:
        own_args = args[len(old_addopts) :]
    else:
        own_args = list(args)
    # The free arguments without what the first choice's addopts added (``--cov pkg`` would
    # otherwise leave ``pkg`` among them).
    own = config._parser.parse_known_args(own_args, namespace=copy.copy(config.option))
    paths = [str(arg) for arg in own.file_or_dir or []]
    paths.extend(str(path) for path in getattr(own, "cases", None) or [])
    rootpath, inipath, inicfg, ignored = determine_setup(
        inifile=namespace.inifilename,
        override_ini=namespace.override_ini,
        args=paths,
        rootdir_cmd_arg=namespace.rootdir or None,
        invocation_dir=config.invocation_params.dir,
    )
    if (rootpath, inipath) == (config.rootpath, config.inipath):
        return
    chosen = config.inipath or config.rootpath
    try:
        _replace(config, args, own_args, rootpath, inipath, inicfg, ignored)
    except (AttributeError, TypeError) as exc:  # pytest's internals moved
        raise pytest.UsageError(
            f"pytest took its configuration from {chosen}, because it read the values of "
            "--python/--repo as paths to collect before pytest-enconda was loaded, and it could "
            f"not be chosen again ({type(exc).__name__}: {exc}): write the options with '=' "
            "(--python=PATH --repo=DIR), which pytest never takes for paths"
        ) from None


def _replace(
    config: pytest.Config,
    args: list[str],
    own_args: list[str],
    rootpath: Path,
    inipath: Path | None,
    inicfg: Any,
    ignored: Any,
) -> None:
    old_pythonpath = [str(path) for path in config.getini("pythonpath")]
    config._rootpath = rootpath
    config._inipath = inipath
    config._inicfg = inicfg
    config._ignored_config_files = ignored
    config._inicache.clear()
    config._parser.extra_info["rootdir"] = str(rootpath)
    config._parser.extra_info["inifile"] = str(inipath)
    new_addopts = list(config.getini("addopts"))
    args[:] = new_addopts + own_args
    if new_addopts:
        config.pluginmanager.consider_preparse(new_addopts, exclude_only=False)
    config.known_args_namespace = config._parser.parse_known_args(
        args, namespace=copy.copy(config.option)
    )
    if config.known_args_namespace.confcutdir is None:  # as pytest sets it
        config.known_args_namespace.confcutdir = str(inipath.parent if inipath else rootpath)
    for path in old_pythonpath:
        if path in sys.path:
            sys.path.remove(path)
    # The cleanup pytest registered removes the new entries (it reads the ini again then).
    for path in reversed(config.getini("pythonpath")):
        sys.path.insert(0, str(path))
    config._checkversion()
