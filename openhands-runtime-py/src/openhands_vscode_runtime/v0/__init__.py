"""The OpenHands V0 runtime (openhands-ai 1.6.0): ``VsCodeRuntime``, its MCP side, host files and
the IDE tools endpoint. Needs openhands-ai, so nothing outside this folder imports it at module
level (the package's ``VsCodeRuntime`` attribute loads it on first use)."""
