"""The shipped probes: test modules (``probe_*.py``) and standard-library scripts run inside task
containers or under the agent's interpreter (installed as the package ``pytest_enconda.probes``)."""
