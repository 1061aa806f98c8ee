"""`kenning serve mcp`: the read-only MCP server (stdio by default, streamable HTTP on a loopback port)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kenning.cli.common import ConfigOpt, DbOpt, console, fail, user_errors

serve_app = typer.Typer(help="Serve the vault to other programs.", no_args_is_help=True)


@serve_app.command("mcp")
def serve_mcp(
    http: Annotated[Optional[str], typer.Option("--http", help="Serve streamable HTTP on HOST:PORT (loopback only, "
                                                "e.g. 127.0.0.1:8765; endpoint /mcp) instead of stdio.",
                                                show_default=False)] = None,
    workspace: Annotated[Optional[str], typer.Option("--workspace", "-w", help="Default workspace for the tools.",
                                                     show_default=False)] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
) -> None:
    """An MCP server with the read-only tools why, beliefs_list, belief_history, search, context, knowledge_brief,
    neighbors, inspect_knowledge, sql and describe_knowledge_schema."""
    from kenning.api import Vault
    from kenning.serve.mcp_server import LoopbackOnly, parse_http, serve_http, serve_stdio

    with user_errors():
        vault = Vault.open(db, config_path=config, readonly=True)   # fail now, not on the first call
        path = vault.path
        vault.close()
    if http:
        try:
            host, port = parse_http(http)
        except LoopbackOnly as e:
            fail(str(e))
        console.print(f"kenning MCP server on http://{host}:{port}/mcp (vault {path}, read-only)")
        serve_http(path, host, port, config, workspace)
    else:
        serve_stdio(path, config, workspace)
