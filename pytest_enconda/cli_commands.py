"""What each ``pytest-enconda`` subcommand does, given its parsed arguments (``cli`` declares
the parser and maps each subcommand here). A bad input raises ``InputError`` naming it (exit 2);
a failed operation raises another ``EncondaError`` (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from .diskspace import human
from .errors import InputError

if TYPE_CHECKING:
    from .sandbox.settings import SandboxSettings


def _named(subject: object, message: object) -> str:
    """``subject: message``, without naming the subject twice when the message already does."""
    text = str(message)
    return text if text.startswith(str(subject)) else f"{subject}: {text}"


def _os_problem(exc: OSError, subject: object) -> InputError:
    where = exc.filename if exc.filename is not None else subject
    return InputError(f"{where}: {exc.strerror or exc}")


def _what_is(path: Path) -> str:
    if path.is_symlink() and not path.exists():
        return "a dangling symbolic link"
    if not path.exists():
        return "nothing there"
    if path.is_dir():
        return "a folder"
    if path.is_file():
        return "a file"
    return "a special file (a FIFO, socket or device)"


def _output(option: str, path: Path, folder: bool) -> None:
    """An output that exists as something else is refused before any work is done: found
    only at the first write, it would cost the work before it (a verification, a build)."""
    if not (path.exists() or path.is_symlink()):
        return
    if path.is_dir() if folder else path.is_file():
        return
    expected = "a folder" if folder else "a file"
    raise InputError(f"{option} {path}: expected {expected}, found {_what_is(path)}")


def _settings(args: argparse.Namespace) -> SandboxSettings:
    from .sandbox.settings import SandboxSettings

    overrides: dict[str, object] = {}
    if getattr(args, "pull_base", None):
        overrides["pull_base"] = args.pull_base
    if getattr(args, "network", None):
        overrides["network_mode"] = args.network
    return SandboxSettings.from_env(**overrides)


def cmd_images(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from .sandbox.images import ImageBuilder

    builder = ImageBuilder(_settings(args))
    images = builder.list_images([args.kind] if args.kind else None)
    table = Table(title=f"pytest-enconda images ({len(images)})")
    for column in ("kind", "recipe / case", "hash", "size", "created", "image"):
        table.add_column(column)
    for info in images:
        table.add_row(
            info.kind,
            info.name,
            info.hash,
            human(info.size),
            info.created.strftime("%Y-%m-%d %H:%M"),
            info.ref,
        )
    Console().print(table)
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from .sandbox.images import ImageBuilder

    builder = ImageBuilder(_settings(args))
    table = Table(title="base image recipes")
    for column in ("name", "debian", "python", "tag", "built"):
        table.add_column(column)
    for name, recipe in sorted(builder.recipes.items()):
        tag = builder.base_tag(recipe)
        built = "yes" if builder.image_id(tag) else "no"
        table.add_row(name, recipe.release, recipe.python, tag, built)
    Console().print(table)
    return 0


def cmd_build_base(args: argparse.Namespace) -> int:
    import time

    from rich.console import Console

    from .sandbox.common import stderr_progress
    from .sandbox.images import ImageBuilder

    console = Console(stderr=True)
    builder = ImageBuilder(_settings(args))
    started = time.monotonic()
    tag = builder.ensure_base(args.name, stderr_progress("[build]"), force=args.force)
    what = "built" if tag in builder.built else "already present (recipe unchanged)"
    console.print(f"[green]{tag}[/green] {what} in {time.monotonic() - started:.1f}s")
    print(tag)
    return 0


def cmd_cleanup(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from .sandbox.cleanup import list_leftovers, remove_leftovers

    settings = _settings(args)
    console = Console()
    leftovers = list_leftovers(args.run, settings=settings)
    if not args.all and not args.run:
        leftovers = [item for item in leftovers if item.orphaned]
    table = Table(title="leftover containers" + (" (dry run)" if args.dry_run else ""))
    for column in ("name", "run", "case", "role", "status", "owner"):
        table.add_column(column)
    for item in leftovers:
        owner = {True: "alive", False: "dead", None: "other host"}[item.owner_alive]
        table.add_row(item.name, item.run, item.case, item.role, item.status, owner)
    console.print(table)
    if args.dry_run:
        return 0
    removed = remove_leftovers(args.run, all_runs=args.all, settings=settings)
    console.print(f"removed {len(removed)} container(s)")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .sandbox.cleanup import prune_images

    older_than = args.older_than
    if older_than is None and args.max_size is None:
        older_than = timedelta(days=7)
    report = prune_images(older_than, args.max_size, settings=_settings(args), dry_run=args.dry_run)
    console = Console()
    verb = "would remove" if args.dry_run else "removed"
    for ref in report.removed:
        console.print(f"{verb} {ref}")
    for failure in report.failed:
        console.print(f"[yellow]kept[/yellow] {failure}")
    console.print(
        f"{verb} {len(report.removed)} image(s), {human(report.freed_bytes)}; "
        f"{human(report.kept_bytes)} of task/snapshot/env images left (bases are never pruned)"
    )
    return 0


def cmd_imports(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from .probing.imports import check_imports_host

    repo = Path(args.repo_dir)
    if not repo.is_dir():
        # Not "some missing" (1): nothing was measured.
        print(f"pytest-enconda: C0 not measured: {repo}: not a directory", file=sys.stderr)
        return 2
    result = check_imports_host(repo, args.python, timeout=args.timeout)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        print(result.summary())
        if result.unparsable:
            print(f"{result.unparsable} file(s) did not parse and were not counted")
    # 0: every import resolves; 1: some are missing; 2: C0 could not be measured.
    if result.error is not None:
        if not args.json:
            print(f"pytest-enconda: C0 not measured: {result.error}", file=sys.stderr)
        return 2
    return 1 if result.missing_count else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime
    from pathlib import Path

    from .cases.sidecar import SIDECAR_NAME, SidecarError, read_sidecar
    from .verify import VerifyOptions, verify_dataset
    from .verify.recheck import recheck_dataset, recheck_summary

    dataset = Path(args.dataset)
    if not dataset.is_dir():
        raise InputError(f"{dataset}: expected a dataset folder, found {_what_is(dataset)}")
    options = {}
    for item in args.agent_option or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--agent-option {item!r}: expected KEY=VALUE")
        options[key] = value
    if (args.start_at != "agent" and args.no_recipe) or (
        args.start_at == "as-of" and args.no_as_of
    ):
        raise InputError(
            f"--start-at {args.start_at} starts at an attempt that --no-recipe or --no-as-of "
            "switches off"
        )
    out = Path(args.out) if args.out else dataset / SIDECAR_NAME
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    logs = Path(args.logs) if args.logs else Path("reports") / f"verify-{stamp}"
    _output("--out", out, folder=False)
    _output("--logs", logs, folder=True)
    if out.is_file():
        # Read here as well as by verify_dataset: a bad sidecar is the user's to fix, found
        # before any container starts.
        try:
            read_sidecar(out)
        except SidecarError as exc:
            reason = str(exc).removeprefix(f"{out}: ")
            raise InputError(f"--out {out}: {reason}") from None
    if args.recheck and not out.is_file():
        raise InputError(f"--recheck: --out {out}: no sidecar to recheck (verify writes it)")
    run = recheck_dataset if args.recheck else verify_dataset
    sidecar = run(
        VerifyOptions(
            dataset=dataset,
            out=out,
            logs=logs,
            agent=args.agent,
            agent_options=options,
            recipe_fallback=not args.no_recipe,
            recipe_as_of=not args.no_as_of,
            first_attempt=args.start_at,
            repo_mirror=Path(args.repo_mirror) if args.repo_mirror else None,
            workers=args.n,
            setup_seconds=args.setup_timeout,
            agent_setup_seconds=args.agent_setup_timeout,
            test_seconds=args.test_timeout,
            min_pass_share=args.min_pass_share,
            only=tuple(args.repo or ()),
            redo=args.redo,
        ),
        progress=lambda line: print(line, flush=True),
    )
    if args.recheck:
        print(recheck_summary(sidecar))
        return 0
    counts = sidecar.counts()
    print(
        f"verify: {counts['verified']} of {counts['repositories']} repositories verified "
        f"(the reference uses the checkout and passes at least {args.min_pass_share:.0%} of its "
        "tests in both runs)"
    )
    return 0


def cmd_construct(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .construct.models import CONSTRUCT_TYPES
    from .construct.run import ConstructOptions, construct, summary_lines

    types = tuple(t.strip().upper() for t in (args.types or ",".join(CONSTRUCT_TYPES)).split(","))
    unknown = [t for t in types if t not in CONSTRUCT_TYPES]
    if unknown:
        raise InputError(
            f"--types: {', '.join(map(repr, unknown))} not among {', '.join(CONSTRUCT_TYPES)}"
        )
    try:
        levels = tuple(sorted({int(x) for x in args.levels.split(",") if x.strip()}))
    except ValueError:
        levels = ()
    # A level is a number of errors merged into one README: more than a few dozen is no level.
    if not levels or min(levels) < 1 or max(levels) > 100:
        raise InputError(
            f"--levels {args.levels!r}: expected numbers from 1 to 100 such as 1,2,3,5"
        )
    from .construct.sources import names_a_repository

    for source in args.sources:
        if not Path(source).is_dir() and not (args.repo_mirror and names_a_repository(source)):
            raise InputError(
                f"{source}: expected a repository folder, a dataset folder or OWNER/NAME with "
                f"--repo-mirror, found "
                f"{_what_is(Path(source))}"
            )
    _output("--out", Path(args.out), folder=True)
    if args.logs:
        _output("--logs", Path(args.logs), folder=True)
    options = ConstructOptions(
        sources=tuple(args.sources),
        out=Path(args.out),
        types=types,
        per_readme=args.per_readme,
        per_type=args.per_type,
        levels=levels,
        injector=args.injector,
        llm_api_base=args.llm_api_base,
        judge=args.judge,
        judge_api_base=args.judge_api_base,
        seed=args.seed,
        owner=args.owner,
        repo_mirror=Path(args.repo_mirror) if args.repo_mirror else None,
        workers=args.n,
        setup_seconds=args.setup_timeout,
        test_seconds=args.test_timeout,
        logs=Path(args.logs) if args.logs else None,
    )
    try:
        report = construct(options, progress=lambda line: print(line, flush=True))
    except OSError as exc:
        # A file construct could not read or write (a source's, one under OUT): named with
        # its reason, not a traceback.
        raise _os_problem(exc, options.out) from None
    for line in summary_lines(report):
        print(line)
    # Every repository, a dataset's too, is snapshotted (README prepared) into OUT/mirror.
    print(f"run it: pytest --cases {options.out} --repo-mirror {options.out / 'mirror'}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime
    from pathlib import Path

    from .report.compare import CompareError, compare_runs, render_markdown, write_comparison

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else Path("reports") / f"compare-{stamp}"
    _output("--out", out, folder=True)
    try:
        runs = compare_runs([Path(p) for p in args.runs], intersection=args.intersection)
    except CompareError as exc:
        raise InputError(str(exc)) from None
    print(render_markdown(runs))
    try:
        md, page = write_comparison(runs, out)
    except OSError as exc:
        raise _os_problem(exc, f"--out {out}") from None
    print(f"written: {md} and {page}")
    return 0


def cmd_regrade(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .report.compare import CompareError
    from .report.regrade import RegradeError, regrade
    from .report.tables import render_markdown

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: expected a run directory, found {_what_is(run_dir)}")
    try:
        out, summary, kept = regrade(
            run_dir,
            judge=args.judge,
            out=Path(args.out) if args.out else None,
            judge_api_base=args.judge_api_base,
            concurrency=args.judge_concurrency,
        )
    except (RegradeError, CompareError) as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise _os_problem(exc, args.out or run_dir) from None
    print(render_markdown(summary))
    for line in kept:
        print(line)
    print(f"regraded run: {out} (report.html, summary.json, tables.md, results.csv)")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import __version__
    from .agents.readme_commands import extract_commands
    from .cases.audit import GRADING_FLAGS, audit_cases
    from .cases.enconda_import import load_dataset
    from .report.audit_files import AUDIT_DIR, write_audit
    from .report.label_noise import label_noise

    dataset = Path(args.dataset)
    if not dataset.is_dir():
        raise InputError(f"{dataset}: expected a dataset folder, found {_what_is(dataset)}")
    out = Path(args.out) if args.out else dataset / AUDIT_DIR
    _output("--out", out, folder=True)
    verification = Path(args.verification) if args.verification else None
    if verification is not None and not verification.is_file():
        raise InputError(
            f"--verification {verification}: expected the sidecar file of `pytest-enconda "
            f"verify`, found {_what_is(verification)}"
        )
    load = load_dataset(dataset, verification=verification)
    for problem in load.problems:
        print(f"not audited: {problem.file}: {problem.reason}", file=sys.stderr)
    report = audit_cases(
        load.cases, extract_commands, dataset=str(dataset), harness_version=__version__
    )
    noise = label_noise(load.cases, dataset=str(dataset))
    try:
        paths = write_audit(report, out, noise)
    except OSError as exc:
        raise _os_problem(exc, f"--out {out}") from None
    for flag, count in report.counts.items():
        grading = " (matters for grading)" if flag in GRADING_FLAGS else ""
        print(f"{flag}: {count}{grading}")
    print(
        f"audit: {report.instances} instances, {len(report.verified_subset)} in the verified "
        f"subset; wrote {', '.join(str(path) for path in paths)}"
    )
    sidecars = sorted(
        {case.reference.sidecar for case in load.cases if case.reference and case.reference.sidecar}
    )
    print(
        f"audit: references from {', '.join(sidecars)}"
        if sidecars
        else "audit: no verification sidecar (--verification), so no instance is flagged "
        "trivial_reference or unverified_reference"
    )
    for rule in noise.rules:
        if rule.disagrees:
            listed = ", ".join(f"{name} {count}" for name, count in rule.by_type.items())
            print(f"type labels disagree on {rule.title}: {listed} distinct errors")
    return 0


def cmd_test_log(args: argparse.Namespace) -> int:
    import json

    from .aec.testlogs import parse_test_log, read_log

    try:
        text, truncated = read_log(args.file)
    except OSError as exc:
        raise InputError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        # A FIFO or a device: a stream is given on standard input instead.
        raise InputError(
            f"{args.file}: {exc}; expected a log file, or - for standard input"
        ) from None
    result = parse_test_log(text, args.exit_code, truncated=truncated)
    if args.json:
        print(json.dumps(result.summary()))
    else:
        counts = ", ".join(
            f"{value} {name}"
            for name in ("passed", "failed", "skipped", "errors")
            if (value := getattr(result, name)) is not None
        )
        cut = " (log cut to its head and tail)" if result.truncated else ""
        print(f"{result.framework}: {result.verdict} ({result.reason}){cut}")
        print(f"  counts: {counts or 'none in the log'}")
        for line in result.evidence:
            print(f"  | {line}")
    # Like `imports`: 0 success, 1 failure, 2 inconclusive (and a log that cannot be read).
    return {"success": 0, "failure": 1, "inconclusive": 2}[result.verdict]


def cmd_import_msb(args: argparse.Namespace) -> int:
    from .aec.msb_import import (
        TEST_COMMANDS,
        check_instances_file,
        import_instances,
        language_of,
        load_references,
    )

    references = None
    if args.references is not None:
        try:
            references = load_references(args.references)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            # load_references's reasons begin with the file; said once, after the option.
            reason = str(reason).removeprefix(f"{args.references}: ")
            raise InputError(
                f"--references {args.references}: cannot read the references: {reason}"
            ) from None
    out = Path(args.out)
    _output("--out", out, folder=True)
    if args.language is not None and language_of(args.language) is None:
        raise InputError(
            f"--language {args.language!r}: expected one of {', '.join(sorted(TEST_COMMANDS))}"
        )
    sources = [Path(path) for path in args.files]
    for source in sources:
        # Every file is checked before any case is written: a typo in the third name must not
        # leave the first two files' cases written and the command failed.
        try:
            check_instances_file(source)
        except OSError as exc:
            raise _os_problem(exc, source) from None
        except ValueError as exc:
            raise InputError(_named(source, exc)) from None
    total = 0
    failed = False
    for path in sources:
        try:
            imported, problems = import_instances(
                path,
                out,
                language=args.language,
                repo_mirror=args.repo_mirror,
                references=references,
            )
        except OSError as exc:
            raise _os_problem(exc, path) from None
        except ValueError as exc:
            raise InputError(_named(path, exc)) from None
        for problem in problems:
            print(f"problem: {problem}", file=sys.stderr)
        failed = failed or bool(problems)
        for item in imported:
            note = f" ({item.problem})" if item.problem else ""
            golden = f", golden setup from {item.reference}" if item.reference else ""
            print(f"{item.case_id}: {item.language}, PASS set of {item.pass_set}{golden}{note}")
        total += len(imported)
    print(f"import-msb: {total} AEC cases in {args.out} (run: pytest {args.out} --agent=...)")
    return 1 if failed else 0
