"""``--max-cost``: the run-wide ceiling on model spending, and the prices it needs. No case
starts once the ceiling is spent (said once per process), and a case whose agent or judge is
refused a model call mid-run is cut: either way the case is *not finished* (``RunStopped``): its
items are skipped and counted apart, no outcome is saved, so ``--resume`` with a higher ceiling
runs exactly those cases, and the run exits with status 2. A model litellm cannot price counts
$0 unless ``--model-price`` (or ``--judge-price``) gives one, which the run warns about."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RunStopped

if TYPE_CHECKING:
    from .settings import EncondaSettings


class CostCeiling:
    """The ceiling of one run in this process."""

    def __init__(
        self,
        settings: EncondaSettings,
        run_root: Path,
        *,
        agent: Callable[[], Any],
        progress: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.run_root = run_root
        self.agent = agent
        self.progress = progress
        self._said = False

    def judge_price(self) -> tuple[float, float] | None:
        """``--judge-price``, else ``--model-price`` when the judge runs the agent's model."""
        settings = self.settings
        if settings.judge_price is not None:
            return settings.judge_price
        model = settings.judge.partition(":")[2] if settings.judge.startswith("llm:") else None
        return settings.model_price if model and model == settings.model else None

    def judge_pricing_warning(self) -> str | None:
        """Why the llm judge's calls cannot count against ``--max-cost``, if they cannot."""
        settings = self.settings
        if settings.max_cost is None or not settings.judge.startswith("llm:"):
            return None
        if self.judge_price() is not None:
            return None
        from .agents.llm import litellm_prices, model_for

        model = settings.judge.partition(":")[2]
        if litellm_prices(model_for(model, settings.judge_api_base)):
            return None
        return (
            f"warning: --max-cost ${settings.max_cost:g} cannot count the llm judge's calls: "
            f"litellm has no price for {model}; give one with --judge-price IN,OUT"
        )

    def pricing_warning(self) -> str | None:
        """Why ``--max-cost`` cannot be enforced for this run's model, if it cannot: litellm has
        no price for it (a local server) and ``--model-price`` gives none, so its calls count $0.
        """
        settings = self.settings
        if settings.max_cost is None or settings.model_price is not None or not settings.model:
            return None
        if not getattr(type(self.agent()), "needs_model", False):
            return None
        from .agents.llm import litellm_prices, model_for

        if litellm_prices(model_for(settings.model, settings.api_base)):
            return None
        return (
            f"warning: --max-cost ${settings.max_cost:g} cannot be enforced: litellm has no "
            f"price for {settings.model}, so its calls count $0; give one with "
            "--model-price IN,OUT (USD per million prompt and completion tokens)"
        )

    def check(self) -> None:
        """No case starts (nothing is built for it) once ``--max-cost`` is spent."""
        if self.settings.max_cost is None:
            return
        from .agents.llm import cost_ledger

        # The run's one ledger: on a cluster's node, the driver's (not the node's own file).
        reason = cost_ledger(self.run_root, self.settings.max_cost).exhausted()
        if reason:
            self.say(reason)
            raise RunStopped(f"not run: {reason}")

    def say(self, reason: str) -> None:
        if not self._said:
            self._said = True
            self.progress(
                f"cost ceiling reached ({reason}); cases not started or cut are not finished"
            )
