"""Stage 3: agents, strategies behind the ``Agent`` protocol, chosen by name."""
