"""Heavy libraries imported once, on first need, by whichever part asks first (agents, judges).

The plugin loads in every pytest run; litellm alone takes seconds to import.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_LITELLM: Any = None
_IMPORT_LOCK = threading.Lock()


def litellm() -> Any:
    global _LITELLM
    with _IMPORT_LOCK:
        if _LITELLM is None:
            # Without this, importing litellm fetches a price list from GitHub and retries for
            # seconds where GitHub is unreachable; the bundled copy is enough for cost figures.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm as module

            module.suppress_debug_info = True
            _LITELLM = module
    return _LITELLM
