"""The manual's reference, generated from the code when the site is built (an mkdocs hook).

A page asks for a generated block with a marker line, ``<!-- enconda:NAME ARGS -->``; the hook
replaces it in ``on_page_markdown`` with Markdown made from what the code declares at build time:
the pytest option table (``pytest_enconda.options``), the ``pytest-enconda`` parser
(``pytest_enconda.cli.build_parser``, the memory subcommands included), the pydantic models' JSON
Schema, the registries (aspects, stages, task kinds, agents, judges, backends), the run
directory's paths (``records.RunDir``/``CaseDir``), the error-type table, the metric definitions
and the exception classes. Nothing here is copied by hand, so the pages cannot drift from the code.

An unknown marker fails the build. The functions are plain (no mkdocs import), so the tests call
them too.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- enconda:(?P<name>[\w-]+)(?P<args>[^>]*)-->$", re.MULTILINE)


# ----------------------------------------------------------------------------- pytest options


@dataclass
class Option:
    """One option as ``pytest_enconda.options.add_options`` declares it."""

    names: tuple[str, ...]
    attrs: dict[str, Any]

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def anchor(self) -> str:
        return self.name.lstrip("-")

    @property
    def help(self) -> str:
        return str(self.attrs.get("help") or "")

    @property
    def metavar(self) -> str:
        action = self.attrs.get("action")
        if action in ("store_true", "store_false"):
            return ""
        if self.attrs.get("metavar"):
            return str(self.attrs["metavar"])
        if self.attrs.get("choices"):
            return "{" + ",".join(self.attrs["choices"]) + "}"
        return self.anchor.upper().replace("-", "_")


@dataclass
class _Recorder:
    """Stands in for pytest's parser: records each ``addoption`` of the plugin's group."""

    group: str = ""
    description: str = ""
    options: list[Option] = field(default_factory=list)

    def getgroup(self, name: str, description: str = "") -> _Recorder:
        self.group, self.description = name, description
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append(Option(names, attrs))


def pytest_options() -> _Recorder:
    """The plugin's options, declared by the same function pytest calls."""
    from pytest_enconda.options import add_options

    recorder = _Recorder()
    add_options(recorder)  # type: ignore[arg-type]
    return recorder


def _default(value: Any) -> str:
    if value is None or value == [] or value is False:
        return ""
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_pytest_options() -> str:
    recorder = pytest_options()
    lines = [
        f"All {len(recorder.options)} options of the `{recorder.group}` group "
        f"(*{recorder.description}*), in the order `pytest --help` lists them.",
        "",
        "| option | value | default | repeatable |",
        "| --- | --- | --- | --- |",
    ]
    for option in recorder.options:
        repeat = "yes" if option.attrs.get("action") == "append" else ""
        lines.append(
            f"| [`{option.name}`](#{option.anchor}) | {_code(option.metavar)} | "
            f"{_code(_default(option.attrs.get('default')))} | {repeat} |"
        )
    lines.append("")
    for option in recorder.options:
        usage = " ".join(filter(None, [option.name, option.metavar]))
        lines += [f"### `{usage}` {{#{option.anchor}}}", "", option.help or "(no help text)", ""]
        default = _default(option.attrs.get("default"))
        if default:
            lines += [f"Default: `{default}`.", ""]
    return "\n".join(lines)


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


# ----------------------------------------------------------------------------- the CLI


def cli_parser() -> argparse.ArgumentParser:
    from pytest_enconda.cli import build_parser

    return build_parser()


def subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(full name, (parser, help))`` of every subcommand, nested ones (``memory build``) too."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            full = f"{prefix}{name}"
            yield full, (sub, helps.get(name) or "")
            yield from subcommands(sub, f"{full} ")


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A parser's own arguments: no ``--help``, no subcommand table."""
    return [
        action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
    ]


def _usage(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    metavar = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}"
        if action.choices
        else action.dest.upper().replace("-", "_")
    )
    return f"{names} {metavar}"


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | help |", "| --- | --- | --- |"]
    for action in arguments(parser):
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else str(default)
        if callable(getattr(default, "total_seconds", None)):
            shown = str(default)
        repeat = " (repeatable)" if isinstance(action, argparse._AppendAction) else ""
        rows.append(
            f"| `{_cell(_usage(action))}` | {_code(_cell(shown))} | "
            f"{_cell(action.help or '(no help text)')}{repeat} |"
        )
    return rows


def _anchor(name: str) -> str:
    return name.replace(" ", "-")


def render_cli() -> str:
    parser = cli_parser()
    commands = list(subcommands(parser))
    lines = [
        f"`{parser.prog}`: {parser.description}",
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    for name, (_sub, help_text) in commands:
        lines.append(f"| [`{parser.prog} {name}`](#{_anchor(name)}) | {_cell(help_text)} |")
    lines += ["", "Options before the subcommand:", "", *_argument_rows(parser), ""]
    for name, (sub, help_text) in commands:
        depth = "###" if " " in name else "##"
        lines += [f"{depth} `{parser.prog} {name}` {{#{_anchor(name)}}}", ""]
        lines += [_cell(sub.description or help_text), ""]
        usage = sub.format_usage().strip().removeprefix("usage: ")
        lines += ["```text", usage, "```", ""]
        if arguments(sub):
            lines += [*_argument_rows(sub), ""]
        if sub.epilog:
            lines += [_cell(sub.epilog), ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- JSON Schema


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def json_schema(target: str) -> dict[str, Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(_load(target)).json_schema()


def _type(prop: dict[str, Any], prefix: str = "") -> str:
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{prefix}{name.lower()})"
    if "anyOf" in prop:
        return " or ".join(_type(option, prefix) for option in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(json.dumps(value) for value in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), prefix)}"
    if kind == "object" and "additionalProperties" in prop:
        extra = prop["additionalProperties"]
        value = _type(extra, prefix) if isinstance(extra, dict) else "any"
        return f"map of string to {value}"
    return str(kind)


def _fields(schema: dict[str, Any], prefix: str) -> list[str]:
    required = set(schema.get("required", []))
    rows = [
        "| field | type | required | default | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, prop in schema.get("properties", {}).items():
        default = json.dumps(prop["default"]) if "default" in prop else ""
        rows.append(
            f"| `{name}` | {_cell(_type(prop, prefix))} | {'yes' if name in required else ''} | "
            f"{_code(_cell(default))} | {_cell(prop.get('description', ''))} |"
        )
    return rows


def render_schema(target: str, title: str | None = None) -> str:
    schema = json_schema(target)
    name = title or schema.get("title") or target.rsplit(":", 1)[-1]
    prefix = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + "-"
    extra = schema.get("additionalProperties")
    lines = [f"Model: `{target.replace(':', '.')}`.", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    if extra is False:
        lines += ["Unknown keys are refused.", ""]
    lines += _fields(schema, prefix)
    for def_name, definition in schema.get("$defs", {}).items():
        lines += ["", f"#### {def_name} {{#{prefix}{def_name.lower()}}}", ""]
        if definition.get("description"):
            lines += [_cell(definition["description"]), ""]
        if "properties" in definition:
            lines += _fields(definition, prefix)
        else:
            lines += [f"Type: {_cell(_type(definition, prefix))}."]
    lines += [
        "",
        f'??? note "JSON Schema of {name}"',
        "",
        "    ```json",
        *("    " + line for line in json.dumps(schema, indent=2).splitlines()),
        "    ```",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- tables


def render_error_types() -> str:
    from pytest_enconda.error_types import TABLE

    lines = ["| code | name | what is wrong | the dataset writes |", "| --- | --- | --- | --- |"]
    for row in TABLE:
        spellings = ", ".join(f"`{name}`" for name in row.dataset_names)
        lines.append(f"| `{row.code}` | {row.name} | {_cell(row.description)} | {spellings} |")
    return "\n".join(lines)


def render_metric_definitions() -> str:
    from pytest_enconda.grading.aggregate import DEFINITIONS

    lines = []
    for key, text in DEFINITIONS.items():
        lines += [f"`{key}`", f":   {_cell(text)}", ""]
    return "\n".join(lines)


def render_items() -> str:
    from pytest_enconda.aspects import ASPECTS
    from pytest_enconda.stages import STAGES

    lines = [
        "| item | task kind | output file it grades | passes when |",
        "| --- | --- | --- | --- |",
    ]
    for aspect in ASPECTS.values():
        lines.append(
            f"| `{aspect.name}` | {aspect.task_kind} | {_code(aspect.contract_file or '')} | "
            f"{_cell(aspect.graded_by)} |"
        )
    for stage in STAGES.values():
        lines.append(
            f"| `probe_pyramid.py::{stage.probe}` (`{stage.name}`) | {stage.task_kind} | | "
            f"{_cell(stage.description)}{' Needs a GPU.' if stage.needs_gpu else ''} |"
        )
    return "\n".join(lines)


def render_task_kinds() -> str:
    from pytest_enconda.kinds import TASK_KINDS

    lines = [
        "| `suite` | what it is | `case.toml` table | README file | output files |",
        "| --- | --- | --- | --- | --- |",
    ]
    for kind in TASK_KINDS.values():
        table = f"`[{kind.table}]`" if kind.table else ""
        readme = "required" if kind.needs_readme else "none (the repository's own)"
        outputs = ", ".join(f"`{name}`" for name in kind.outputs)
        lines.append(
            f"| `{kind.name}` | {_cell(kind.description)} | {table} | {readme} | {outputs} |"
        )
    return "\n".join(lines)


def _registries() -> list[tuple[str, Any]]:
    from pytest_enconda.agents.registry import AGENTS
    from pytest_enconda.aspects import ASPECTS
    from pytest_enconda.backends import BACKENDS
    from pytest_enconda.ecosystems import ECOSYSTEMS
    from pytest_enconda.grading.judges import JUDGES
    from pytest_enconda.kinds import TASK_KINDS
    from pytest_enconda.stages import STAGES

    return [
        ("pytest_enconda.aspects.ASPECTS", ASPECTS),
        ("pytest_enconda.stages.STAGES", STAGES),
        ("pytest_enconda.kinds.TASK_KINDS", TASK_KINDS),
        ("pytest_enconda.agents.registry.AGENTS", AGENTS),
        ("pytest_enconda.grading.judges.JUDGES", JUDGES),
        ("pytest_enconda.backends.BACKENDS", BACKENDS),
        ("pytest_enconda.ecosystems.ECOSYSTEMS", ECOSYSTEMS),
    ]


def render_registries() -> str:
    lines = [
        "| extension point | registry | entry-point group | registered now |",
        "| --- | --- | --- | --- |",
    ]
    for path, registry in _registries():
        names = ", ".join(f"`{name}`" for name in registry.names())
        lines.append(f"| {registry.kind} | `{path}` | `{registry.group}` | {names} |")
    return "\n".join(lines)


def render_agent_options() -> str:
    from pytest_enconda.agents import registry

    lines: list[str] = []
    for name in registry.available():
        factory = registry.factory_of(name)
        module = inspect.getmodule(factory)
        doc = (module.__doc__ if module else "") or ""
        lines += [f"### `{name}` {{#agent-{name}}}", "", _cell(doc.split("\n\n")[0]), ""]
        model = getattr(factory, "config_model", None)
        if model is None:
            lines += ["No options.", ""]
            continue
        lines += [
            "| `--agent-option` key | type | default | meaning |",
            "| --- | --- | --- | --- |",
        ]
        for key, info in model.model_fields.items():
            given = None if info.is_required() else info.get_default(call_default_factory=True)
            default = "" if info.is_required() else repr(given)
            annotation = getattr(info.annotation, "__name__", None) or str(info.annotation)
            lines.append(
                f"| `{key}` | `{_cell(annotation)}` | {_code(_cell(default))} | "
                f"{_cell(info.description or '')} |"
            )
        lines.append("")
    return "\n".join(lines)


def run_directory_paths() -> list[tuple[str, str, str]]:
    """(path relative to the run directory, attribute, first docstring line) of every path the
    run directory's classes name."""
    from pytest_enconda.records import CaseDir, RunDir

    root = Path("RUN")
    out: list[tuple[str, str, str]] = []
    for owner, instance, prefix in (
        (RunDir, RunDir(root), ""),
        (CaseDir, CaseDir(root, "CASE"), "case."),
    ):
        for attr, member in inspect.getmembers(owner):
            if attr.startswith("_") or attr in ("case", "relative", "at"):
                continue
            doc = ""
            if isinstance(member, property):
                value = getattr(instance, attr)
                doc = inspect.getdoc(member.fget) or ""
            elif inspect.isfunction(member):
                params = list(inspect.signature(member).parameters)[1:]
                if len(params) != 1:
                    continue
                value = getattr(instance, attr)(f"<{params[0]}>")
                doc = inspect.getdoc(member) or ""
            else:
                continue
            if isinstance(value, Path):
                rel = value.relative_to(root).as_posix().replace("CASE", "<case>")
                out.append((rel, f"{prefix}{attr}", doc.split("\n\n")[0]))
    return sorted(out)


def render_run_directory() -> str:
    lines = ["| path | what | `records` attribute |", "| --- | --- | --- |"]
    for rel, attr, doc in run_directory_paths():
        lines.append(f"| `{rel}` | {_cell(doc)} | `{attr}` |")
    return "\n".join(lines)


def render_exceptions() -> str:
    from pytest_enconda import errors

    lines = ["| exception | is a | what it means |", "| --- | --- | --- |"]
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if cls.__module__ != errors.__name__ or not issubclass(cls, Exception):
            continue
        base = cls.__mro__[1].__name__
        own = cls.__dict__.get("__doc__") or f"A `{base}`; its message says what failed."
        doc = inspect.cleandoc(own).split("\n\n")[0]
        lines.append(f"| `{name}` | `{base}` | {_cell(doc)} |")
    return "\n".join(lines)


def render_csv_columns() -> str:
    from pytest_enconda.report.exports import CSV_COLUMNS

    return ", ".join(f"`{column}`" for column in CSV_COLUMNS) + "."


def render_markers() -> str:
    from pytest_enconda.kinds import TASK_KINDS
    from pytest_enconda.plugin import MARKERS

    lines = ["| marker | meaning |", "| --- | --- |"]
    for name, description in MARKERS.items():
        lines.append(f"| `{name}` | {_cell(description)} |")
    for kind in TASK_KINDS.values():
        if kind.name not in MARKERS:
            lines.append(f"| `{kind.name}` | {_cell(kind.description or kind.name)} |")
    return "\n".join(lines)


ROOT = Path(__file__).resolve().parents[2]


def render_shipped_cases(suite: str) -> str:
    """The shipped cases of one suite, read from their ``case.toml`` (and golden file)."""
    import tomllib

    folders = sorted((ROOT / "benchmark_cases" / suite).glob("*/case.toml"))
    if not folders:
        raise ValueError(f"no shipped cases under benchmark_cases/{suite}")
    extra = {"diagnosis": "error types", "aec": "language", "research": "entry point"}[suite]
    lines = [f"| case | what it holds | {extra} |", "| --- | --- | --- |"]
    for path in folders:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
        if suite == "diagnosis":
            golden = json.loads((path.parent / spec["golden"]).read_text(encoding="utf-8"))
            value = ", ".join(sorted({error["error_type"] for error in golden["errors"]}))
        elif suite == "aec":
            value = spec.get("aec", {}).get("language", "")
        else:
            value = f"`{spec.get('research', {}).get('entry_point', '')}`"
        lines.append(f"| `{spec['id']}` | {_cell(spec.get('title', ''))} | {value} |")
    return "\n".join(lines)


def render_benchmarks() -> str:
    from pytest_enconda.bench import COMMANDS

    lines = ["| `python -m pytest_enconda.bench ...` | measures |", "| --- | --- |"]
    for name, module in COMMANDS.items():
        doc = (importlib.import_module(module).__doc__ or "").strip().split("\n\n")[0]
        lines.append(f"| `{name}` | {_cell(doc)} |")
    return "\n".join(lines)


def render_layers() -> str:
    """The package's layers, as ``tests/test_import_graph.py`` checks them."""
    import importlib.util

    path = ROOT / "tests" / "test_import_graph.py"
    spec = importlib.util.spec_from_file_location("_enconda_import_graph", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = ["| layer | modules of `pytest_enconda` |", "| --- | --- |"]
    for name, heads in module.LAYERS:
        shown = ", ".join(f"`{head}`" if head else "the package itself" for head in sorted(heads))
        lines.append(f"| {name} | {shown} |")
    return "\n".join(lines)


# Another page of the manual, written apart from this hook: the plugin's requests beyond the
# sandbox. Linked, and put in the navigation, once it exists with that section.
EXTERNAL_CALLS = ROOT / "docs" / "security.md"


def _has_external_calls() -> bool:
    return (
        EXTERNAL_CALLS.is_file()
        and re.search(
            r"^## External calls\s*$", EXTERNAL_CALLS.read_text(encoding="utf-8"), re.MULTILINE
        )
        is not None
    )


def render_external_calls() -> str:
    if not _has_external_calls():
        return ""
    return (
        "## External calls\n\nEvery request the plugin makes beyond the sandbox (model providers, "
        "package indexes, Debian's mirrors, the Hugging Face hub, PyPI's JSON) is listed in "
        "[External calls](../security.md#external-calls)."
    )


def render_ecosystems() -> str:
    from pytest_enconda.ecosystems import ECOSYSTEMS

    lines = [
        "| ecosystem | `[aec] language` | detected by | Debian toolchain | verbose test command |",
        "| --- | --- | --- | --- | --- |",
    ]
    for eco in ECOSYSTEMS.values():
        languages = ", ".join(f"`{language}`" for language in eco.languages)
        files = ", ".join(f"`{name}`" for name in eco.detection_files)
        if eco.fallback:
            files += " (only where no other ecosystem's files are)"
        packages = ", ".join(f"`{name}`" for name in eco.debian_packages)
        lines.append(
            f"| {eco.title} | {languages} | {files} | {packages} | {_code(eco.test_command)} |"
        )
    return "\n".join(lines)


RENDERERS: dict[str, Callable[..., str]] = {
    "pytest-options": render_pytest_options,
    "cli": render_cli,
    "schema": render_schema,
    "error-types": render_error_types,
    "metric-definitions": render_metric_definitions,
    "items": render_items,
    "task-kinds": render_task_kinds,
    "registries": render_registries,
    "agent-options": render_agent_options,
    "run-directory": render_run_directory,
    "exceptions": render_exceptions,
    "csv-columns": render_csv_columns,
    "markers": render_markers,
    "shipped-cases": render_shipped_cases,
    "benchmarks": render_benchmarks,
    "layers": render_layers,
    "external-calls": render_external_calls,
    "ecosystems": render_ecosystems,
}


def expand(markdown: str, where: str = "") -> str:
    """``markdown`` with every marker replaced by its generated block."""

    def replace(match: re.Match[str]) -> str:
        name, args = match.group("name"), match.group("args").split()
        if name not in RENDERERS:
            raise ValueError(f"{where}: unknown reference marker {name!r}")
        return RENDERERS[name](*args)

    return MARKER.sub(replace, markdown)


# ----------------------------------------------------------------------------- mkdocs hooks


def on_config(config: Any, **_kwargs: Any) -> Any:
    """``docs/security.md`` joins the Explanation section once it exists."""
    if not EXTERNAL_CALLS.is_file():
        return config
    nav = config.get("nav") or []
    listed = json.dumps(nav)
    for section in nav:
        if isinstance(section, dict) and "Explanation" in section and '"security.md"' not in listed:
            section["Explanation"].append({"External calls": "security.md"})
    return config


def on_page_markdown(markdown: str, page: Any, **_kwargs: Any) -> str:
    return expand(markdown, page.file.src_uri)
