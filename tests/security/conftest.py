"""The sandbox fixtures (real Docker engine, real bubblewrap) for the security tests."""

from tests.sandbox.conftest import bwrap_ready, docker_client, host_listener, workspace

__all__ = ["bwrap_ready", "docker_client", "host_listener", "workspace"]
