"""`kenning ui`: the local web app over the vault (browse, explain, correct)."""

from __future__ import annotations

import secrets
from typing import Annotated, Optional

import typer

from kenning.cli.common import ConfigOpt, DbOpt, console, fail, user_errors


def ui_command(
    port: Annotated[int, typer.Option("--port", help="The port to listen on.")] = 8765,
    host: Annotated[str, typer.Option("--host", help="The address to bind. Loopback (127.0.0.1) unless you give "
                                      "another one explicitly — then every request needs the access token.")]
    = "127.0.0.1",
    token: Annotated[Optional[str], typer.Option("--token", help="The access token for a non-loopback --host "
                                                 "(default: a random one, printed once).", show_default=False)]
    = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze 'now' (confidence decay, review commits) "
                                                 "at this UTC time.", show_default=False)] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Open the vault in your browser: home, search, why (quotes with ✓/✗), nodes and entities, self-beliefs,
    timeline, conversations, review (confirm / reject / correct, with undo). Serves only 127.0.0.1 by default;
    pages read through a read-only vault; the review forms carry a CSRF token. Stop with Ctrl-C."""
    try:
        import uvicorn

        from kenning.serve.web.app import create_app, is_loopback
    except ImportError as e:
        fail(f"kenning ui needs the web extras ({e.name} is missing): pip install 'kenning[serve]'")
    from kenning.api import Vault
    from kenning.pipeline.clock import Clock

    with user_errors():
        vault = Vault.open(db, config_path=config, readonly=True)    # fail now (no vault), not on the first page
        path = vault.path
        vault.close()
        now = Clock.from_option(as_of).frozen_at
    access = None
    if not is_loopback(host):
        access = token or secrets.token_urlsafe(24)
        console.print(f"[yellow]warning:[/] serving {host}, not loopback: anyone who can reach this port and has the "
                      "token can read your vault and change it through the review forms.")
    elif token:
        access = token
    if not 0 < port < 65536:
        fail(f"--port {port} is not a port (1–65535)")
    _check_bindable(host, port)
    app = create_app(path, config_path=str(config) if config else None, access_token=access, now=now)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/" + (f"?token={access}" if access else "")
    console.print(f"Kenning UI for {path} on {url}  (Ctrl-C stops it)", highlight=False)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _check_bindable(host: str, port: int) -> None:
    """Say why the server cannot start (port taken, address not on this machine) before uvicorn's traceback would."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(infos[0][4])
    except OSError as e:
        fail(f"cannot serve on {host}:{port}: {e.strerror or e} — is another `kenning ui` running? try --port "
             f"{port + 1}" + ("" if host == "127.0.0.1" else ", or an address of this machine for --host"))


def register(app: typer.Typer) -> None:
    app.command("ui")(ui_command)
