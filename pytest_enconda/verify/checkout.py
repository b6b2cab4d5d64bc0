"""The checkout proof: does the reference environment import the project from the pinned
checkout? ``probes/checkout_proof.py`` runs where the tests will run and reports each package's
origin; a reference importing an installed release instead is refused.

For cantools, the literal agent on the original README ran ``pip install cantools``: the tests
then exercised the PyPI release, and the PASS set described a different program than the one at
the pinned revision.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from .. import textio
from ..backends.base import Box
from ..probing.scripts import probe_script
from ..probing.shell import in_setup_env
from ..repo.checkout import CheckoutProof, ModuleOrigin

__all__ = ["checkout_proof", "judge_checkout"]


def checkout_proof(box: Box, packages: list[str], out: Path) -> CheckoutProof:
    """Run ``checkout_proof.py`` where the tests will run: the setup's environment, from the
    project folder."""
    if not packages:
        return judge_checkout(packages, None)
    target = "/tmp/enconda/checkout_proof.py"
    box.copy_in(probe_script("checkout_proof.py"), target)
    names = " ".join(shlex.quote(name) for name in packages)
    result = box.exec(
        # "--": the names come from the repository's metadata and stay operands.
        in_setup_env(f"python {target} --project /data/project -- {names} 2>/dev/null"),
        timeout=120,
    )
    report = None
    for line in reversed(result.output.strip().splitlines()):
        if line.startswith("{"):
            try:
                report = textio.parse_json(line)
            except ValueError:
                report = None
            break
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return judge_checkout(packages, report)


def judge_checkout(packages: list[str], report: dict[str, Any] | None) -> CheckoutProof:
    """The verdict on the probe's report (``None`` when the probe did not run)."""
    if not packages:
        return CheckoutProof(
            verdict="no-packages", detail="no top-level package or module found in the checkout"
        )
    if report is None or report.get("error"):
        why = (report or {}).get("error") or "the probe did not run"
        return CheckoutProof(verdict="unmeasured", detail=str(why)[:500])
    origins = [
        ModuleOrigin.model_validate({k: v for k, v in m.items() if k in ModuleOrigin.model_fields})
        for m in report.get("modules", [])
        if isinstance(m, dict)
    ]
    found = [m for m in origins if m.file]
    elsewhere = [m for m in found if not m.from_checkout]
    if elsewhere:
        first = elsewhere[0]
        release = f" (installed distribution {first.distribution})" if first.distribution else ""
        return CheckoutProof(
            verdict="release",
            detail=f"{first.name} is imported from {first.file}{release}, not from the checkout",
            modules=origins,
        )
    if not found:
        return CheckoutProof(
            verdict="not-importable",
            detail="none of " + ", ".join(packages) + " is importable by the test interpreter",
            modules=origins,
        )
    names = ", ".join(m.name for m in found)
    return CheckoutProof(
        verdict="checkout", detail=f"{names} imported from the checkout", modules=origins
    )
