"""The checkout proof: does the reference environment import the project from the pinned
checkout? ``probes/checkout_proof.py`` runs where the tests will run and reports each package's
origin; a reference importing an installed release instead is refused.

For cantools, the literal agent on the original README ran ``pip install cantools``: the tests
then exercised the PyPI release, and the PASS set described a different program than the one at
the pinned revision.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

from .. import textio
from ..backends.base import Box
from ..probing.scripts import probe_script
from ..probing.shell import in_setup_env
from ..repo.checkout import CheckoutProof, DistributionOrigin, ModuleOrigin

__all__ = ["PROBE", "checkout_proof", "judge_checkout", "probe_digest"]

PROBE = "checkout_proof.py"


@functools.cache
def probe_digest() -> str:
    """The SHA-256 (hex) of the probe's text: a proof recorded with another (``None`` in a record
    made before the digest was kept) was made by another probe."""
    return hashlib.sha256(probe_script(PROBE).read_bytes()).hexdigest()


def checkout_proof(
    box: Box, packages: list[str], out: Path, distribution: str = ""
) -> CheckoutProof:
    """Run ``checkout_proof.py`` in the setup's environment, from a folder of its own: the
    project folder is on the path only where the reference put it, so the checkout cannot
    shadow an installed release. ``distribution`` is the project's declared name, a proof of
    its own when no module names the checkout."""
    if not packages and not distribution:
        return judge_checkout(packages, None)
    # The probe's folder is taken off its path; it runs from an empty folder of its own.
    target = "/tmp/enconda/checkout_proof.py"
    folder = "/tmp/enconda/checkout-proof"
    box.copy_in(probe_script(PROBE), target)
    names = " ".join(shlex.quote(name) for name in packages)
    # The declared name is the repository's data: an option-shaped one is not passed at all.
    named = f"--distribution={shlex.quote(distribution)} " if _plain(distribution) else ""
    result = box.exec(
        # "--": the names come from the repository's metadata and stay operands.
        in_setup_env(
            f"mkdir -p {folder} && cd {folder} && "
            f"python {target} --project /data/project {named}-- {names} 2>/dev/null"
        ),
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
    proof = judge_checkout(packages, report, distribution if _plain(distribution) else "")
    if proof.verdict == "unmeasured":
        return proof  # no verdict of the probe: a recheck makes it again
    return proof.model_copy(update={"probe_sha256": probe_digest()})


def _plain(name: str) -> bool:
    return bool(name) and not name.startswith("-") and "\n" not in name


def judge_checkout(
    packages: list[str], report: dict[str, Any] | None, distribution: str = ""
) -> CheckoutProof:
    """The verdict on the probe's report (``None`` when the probe did not run). With no module
    to look for, only the project's distribution (``distribution``, its declared name) installed
    from the checkout proves it."""
    if not packages and not distribution:
        return CheckoutProof(verdict="no-packages", detail=NO_PACKAGES)
    if report is None or report.get("error"):
        why = (report or {}).get("error") or "the probe did not run"
        return CheckoutProof(verdict="unmeasured", detail=str(why)[:500])
    if not packages:
        return _judge_distribution(report.get("distribution"))
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
        dist = _judge_distribution(report.get("distribution"))
        if dist.verdict == "checkout":
            return dist.model_copy(update={"modules": origins})
        return CheckoutProof(
            verdict="not-importable",
            detail="none of " + ", ".join(packages) + " is importable by the test interpreter",
            modules=origins,
        )
    return CheckoutProof(verdict="checkout", detail=_from_checkout(found), modules=origins)


def _from_checkout(found: list[ModuleOrigin]) -> str:
    """Which modules lie in the checkout, and which in a copy that ``pip install .`` made of it
    (their distribution records the checkout as its source)."""
    # ``under_checkout`` is None in a report of a probe older than the field: said as before.
    inside = [m.name for m in found if m.under_checkout is not False]
    copied = [m for m in found if m.under_checkout is False]
    said = [f"{', '.join(inside)} imported from the checkout"] if inside else []
    if copied:
        first = copied[0]
        said.append(
            f"{', '.join(m.name for m in copied)} imported from {first.file}, installed from the "
            f"checkout (distribution {first.distribution}, source {first.direct_url})"
        )
    return "; ".join(said)


NO_PACKAGES = (
    "no package, module, entry point or subproject found in the checkout, and no distribution "
    "installed from it: nothing proves the reference uses the checkout"
)


def _judge_distribution(raw: object) -> CheckoutProof:
    if not isinstance(raw, dict):
        return CheckoutProof(verdict="no-packages", detail=NO_PACKAGES)
    dist = DistributionOrigin.model_validate(
        {k: v for k, v in raw.items() if k in DistributionOrigin.model_fields}
    )
    if dist.from_checkout:
        return CheckoutProof(
            verdict="checkout",
            detail=f"distribution {dist.name} installed from the checkout ({dist.direct_url})",
            distribution=dist,
        )
    if dist.error:
        detail = f"{NO_PACKAGES} (distribution {dist.name}: {dist.error})"
        return CheckoutProof(verdict="no-packages", detail=detail[:500], distribution=dist)
    where = dist.direct_url or "an index: no PEP 610 record"
    return CheckoutProof(
        verdict="release",
        detail=f"distribution {dist.name} is installed from {where}, not from the checkout",
        distribution=dist,
    )
