"""The static pre-pass alone on a released dataset, without containers.

``python -m pytest_enconda.agents.heuristic.static_eval DATA MIRROR [--cache DIR] [--split
tune|held-out]`` exports each
repository of ``DATA/repo_info.jsonl`` that ``MIRROR`` holds (``owner+name/repo`` bare snapshots,
as the ``fetch`` tool leaves them, or ``owner_name``/``owner/name`` clones) at its pinned
revision, runs the pre-pass on every instance README of that repository and compares the
predicted error types with the golden ones, per instance as sets (the paper's definition):
TP/FP/FN summed over instances, P/R/F1 from the sums, per type and per rule.

It measures only what the agent finds before running anything; the agent's runtime rules need
the task container (run it with ``--agent=heuristic``).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from .examples import example_findings
from .prepass import run_prepass
from .repo_view import scan
from .steps import readme_steps


def _in_mirror(mirror: Path, repository: str) -> bool:
    """Whether the mirror holds the repository where ``materialize`` looks for it."""
    from ...sandbox.repo import mirror_candidates

    return any(
        path.is_dir() for path in mirror_candidates(mirror, f"https://github.com/{repository}")
    )


def _export(mirror: Path, repository: str, revision: str, dest: Path) -> tuple[str | None, int]:
    """The tree at ``revision`` into ``dest``, which exists only if the export succeeded, as an
    agent's run checks it out (``materialize``: a snapshot lacking large files' contents goes on
    without them); returns the problem, if any, and how many files the snapshot lacked."""
    from ...cases.models import RepoSource
    from ...errors import EncondaError
    from ...sandbox.repo import materialize

    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    source = RepoSource(kind="url", url=f"https://github.com/{repository}", revision=revision)
    absent: list[str] = []
    try:
        materialize(source, partial.parent, partial, mirror_dir=mirror, absent=absent)
    except EncondaError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        return str(exc).strip().splitlines()[0][:200], 0
    partial.rename(dest)
    return None, len(absent)


SPLITS = ("all", "tune", "held-out")


def split_of(repository: str) -> str:
    """A fixed half of the repositories for writing rules ("tune") and the other half for
    measuring them ("held-out"): a hash of the name, so that no one chooses the halves."""
    digest = hashlib.sha256(repository.lower().encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "held-out"


def evaluate(data: Path, mirror: Path, cache: Path, split: str = "all") -> dict:
    info = {}
    for line in (data / "repo_info.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            info[record["repository"]] = record["revision"]
    counts = {kind: collections.Counter() for kind in ("tp", "fp", "fn")}
    rules: collections.Counter[str] = collections.Counter()
    rules_tp: collections.Counter[str] = collections.Counter()
    repos, instances, skipped = 0, 0, {}
    absent: dict[str, int] = {}
    for repository, revision in sorted(info.items()):
        folder = data / "instances" / ("error_gen_" + repository.replace("/", "_"))
        if not _in_mirror(mirror, repository) or not folder.is_dir():
            continue
        if split != "all" and split_of(repository) != split:
            continue
        dest = cache / repository.replace("/", "+") / revision
        if not dest.exists():
            problem, lacking = _export(mirror, repository, revision, dest)
            if problem:
                skipped[repository] = problem
                continue
            if lacking:
                absent[repository] = lacking
        repos += 1
        facts = scan(dest)

        def read(rel: str, root: Path = dest) -> str | None:
            path = root / rel
            return path.read_text(errors="replace") if path.is_file() else None

        for instance in sorted(p for p in folder.iterdir() if p.is_dir()):
            readmes = [
                p for p in instance.iterdir() if p.name.startswith("README") and p.suffix != ".json"
            ]
            golden_file = instance / "README.json"
            if not readmes or not golden_file.is_file():
                continue
            text = readmes[0].read_text(errors="replace")
            golden = {e["error_type"] for e in json.loads(golden_file.read_text())["errors"]}
            steps = readme_steps(text, readmes[0].name, facts)
            found = run_prepass(steps, facts, text, readmes[0].name)
            found += example_findings(text, readmes[0].name, facts, read)
            instances += 1
            for finding in found:
                if finding.error_type:
                    rules[finding.rule] += 1
                    rules_tp[finding.rule] += finding.error_type in golden
            predicted = {f.error_type for f in found if f.error_type}
            counts["tp"].update(predicted & golden)
            counts["fp"].update(predicted - golden)
            counts["fn"].update(golden - predicted)

    def prf(tp: int, fp: int, fn: int) -> dict[str, float]:
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        return {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "P": p,
            "R": r,
            "F1": 2 * p * r / (p + r) if p + r else 0.0,
        }

    types = sorted(set().union(*counts.values()))
    return {
        "split": split,
        "repositories": repos,
        "instances": instances,
        "not_exported": skipped,
        "absent_files": absent,
        "per_type": {t: prf(counts["tp"][t], counts["fp"][t], counts["fn"][t]) for t in types},
        "all": prf(*(sum(counts[k].values()) for k in ("tp", "fp", "fn"))),
        "rules": {
            r: {"predicted": n, "type_in_golden": rules_tp[r]} for r, n in rules.most_common()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", type=Path, help="dataset folder with repo_info.jsonl, instances/")
    parser.add_argument("mirror", type=Path, help="folder of repository snapshots")
    parser.add_argument("--cache", type=Path, help="where exported trees are kept")
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default="all",
        help="the repositories whose misses rules may be written from (tune), the others "
        "(held-out), or all",
    )
    args = parser.parse_args(argv)
    if args.cache is not None:
        result = evaluate(args.data, args.mirror, args.cache, args.split)
    else:
        with tempfile.TemporaryDirectory(prefix="enconda-static-") as tmp:
            result = evaluate(args.data, args.mirror, Path(tmp), args.split)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
