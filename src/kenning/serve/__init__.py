"""Surfaces that serve a vault to other programs: the MCP server (read-only)."""
