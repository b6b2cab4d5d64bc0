"""Error types the heuristic agent's static pass finds, scored against a dataset's golden answers.

    python scripts/static_diagnosis_bench.py DATASET --repo-mirror DIR [--trees DIR]
        [--json FILE] [--rules] [--misses TYPE]

The static pass is what the agent concludes before it runs anything: the pre-pass over the
README's commands and prose against the repository's files (``prepass.run_prepass``) and the
Python examples (``prepass.example_findings``). It needs no Docker, so the figures come in
seconds for every instance whose repository a mirror holds; the agent's runtime rules (what
running the commands shows) are not measured here. Types are scored as the run grades them
(``grading.diagnosis.type_counts``: per instance, a type is a true positive when both the
golden answer and the prediction name it). Checkouts are cached under ``--trees`` by
repository and revision.

Figures measured on the split the rules were written against are not held-out figures: say
which data a number comes from.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from pytest_enconda.agents.heuristic.facts import scan
from pytest_enconda.agents.heuristic.prepass import example_findings, run_prepass
from pytest_enconda.agents.heuristic.steps import readme_steps
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.errors import RepositoryUnavailable
from pytest_enconda.grading.diagnosis import type_counts
from pytest_enconda.sandbox.repo import materialize


def _checkout(case, trees: Path, mirror: Path) -> Path | None:
    source = case.spec.repository
    owner_name = "+".join(str(source.url).rstrip("/").split("/")[-2:])
    dest = trees / f"{owner_name}@{source.revision}"
    if (dest / ".enconda-complete").exists():
        return dest
    try:
        materialize(source, case.case_dir, dest, mirror, timeout=300, absent=[])
    except RepositoryUnavailable:
        return None
    (dest / ".enconda-complete").touch()
    return dest


def _read(root: Path):
    def read(rel: str) -> str | None:
        path = (root / rel).resolve()
        # Paths come from the repository's own files: never read outside the checkout.
        if not path.is_relative_to(root.resolve()) or not path.is_file():
            return None
        return path.read_text(errors="replace")[:200_000]

    return read


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--repo-mirror", type=Path, required=True)
    parser.add_argument("--trees", type=Path, default=Path("/tmp/enconda-static-trees"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--rules", action="store_true", help="print each rule's tp and fp")
    parser.add_argument("--misses", help="print the golden descriptions of this type missed")
    args = parser.parse_args()
    cases = [c for c in load_dataset(args.dataset).cases if "merge" not in c.spec.id]
    counts: dict[str, Counter] = defaultdict(Counter)
    rules: dict[str, Counter] = defaultdict(Counter)
    misses: list[str] = []
    measured, repositories, facts_of = 0, set(), {}
    for case in cases:
        if case.golden is None:
            continue
        key = (str(case.spec.repository.url), case.spec.repository.revision)
        if key not in facts_of:
            tree = _checkout(case, args.trees, args.repo_mirror)
            facts_of[key] = (tree, scan(tree)) if tree else None
        if facts_of[key] is None:
            continue
        tree, facts = facts_of[key]
        name = case.spec.readme_target
        steps = readme_steps(case.readme_text, name, facts)
        found = run_prepass(steps, facts, case.readme_text, name)
        found += example_findings(case.readme_text, name, facts, _read(tree))
        golden = [e.error_type for e in case.golden.errors]
        predicted = [f.error_type for f in found if f.error_type]
        per_type, _ = type_counts(golden, predicted)
        for error_type, count in per_type.items():
            counts[error_type].update(tp=count.tp, fp=count.fp, fn=count.fn)
        for finding in found:
            if finding.error_type:
                rules[finding.rule]["tp" if finding.error_type in golden else "fp"] += 1
        if args.misses and args.misses in golden and args.misses not in predicted:
            misses += [
                f"{case.spec.id}: {e.error_description[:200]}"
                for e in case.golden.errors
                if e.error_type == args.misses
            ]
        measured += 1
        repositories.add(key[0])
    total = Counter()
    for count in counts.values():
        total.update(count)
    tp, fp, fn = total["tp"], total["fp"], total["fn"]
    result = {
        "instances": measured,
        "repositories": len(repositories),
        "of_instances": len(cases),
        "per_type": {t: dict(counts[t]) for t in sorted(counts)},
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "rules": {r: dict(c) for r, c in sorted(rules.items())},
    }
    print(
        f"{measured} of {len(cases)} instances ({len(repositories)} repositories with a mirror): "
        f"type P {result['precision']:.2f} R {result['recall']:.2f} F1 {result['f1']:.2f}"
    )
    for error_type, count in result["per_type"].items():
        print(f"  {error_type}: tp {count.get('tp', 0)} fp {count.get('fp', 0)} "
              f"fn {count.get('fn', 0)}")  # fmt: skip
    if args.rules:
        for rule, count in result["rules"].items():
            print(f"  rule {rule}: tp {count.get('tp', 0)} fp {count.get('fp', 0)}")
    for line in misses:
        print("  missed", line)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
