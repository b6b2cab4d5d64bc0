"""Stage 2: the Docker sandbox (base, environment and task images; containers; cleanup).

Import the submodules directly (``sandbox.settings``, ``sandbox.images``, ``sandbox.containers``,
``sandbox.cleanup``, ``sandbox.repo``); this package stays import-free so that loading the plugin
does not import docker-py.
"""
