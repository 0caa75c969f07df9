"""``scarwarden serve``: the audit web UI (Flask, the optional ``ui`` extra)."""

from __future__ import annotations

from typing import Any

import click

from scarwarden.cli.commands._common import get_repo, require_ui
from scarwarden.errors import UsageError


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback exposes the memory (and, "
    "without --read-only, commits) to the network: a warning is printed.",
)
@click.option(
    "--port", default=5054, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on."
)
@click.option(
    "--read-only", is_flag=True, help="Refuse every write (recording a human's answer answers 403)."
)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, read_only: bool) -> None:
    """The audit web UI, on loopback (http://127.0.0.1:5054/ by default).

    \b
    Pages:
      /                 the playbook: every rule, tags and citations as links;
                        filter by tag, search
      /rules/PB-01      the rule, each cited episode word for word, its git
                        history (each commit's diff and trailers)
      /episodes/ep-...  the episode in full and every rule citing it
      /ledger           browse by month, tag, agent; full-text search
      /task             recall a task with memory on and off, side by side;
                        after ASK_HUMAN, record the human's answer (a commit);
                        on ACT_AND_FLAG, confirm the rule or answer instead
      /log              the recall log: what agents asked and were given
      /distill          the undistilled episodes and a preview of distilling
                        them, with a button that commits it

    All content is escaped and the pages run no script. The writes (an answer, a
    confirmation, a distillation's commit, a recall logged from the task form) are
    POSTs protected by a per-process token and an Origin/Referer check; --read-only
    turns them off. Served by waitress (a production WSGI server), 4 threads. Needs the
    ui extra: pip install 'scarwarden[ui]' ('.[ui]' in a clone).

    \b
    Examples:
      scarwarden serve                      # (not run: serves until Ctrl-C)
      scarwarden serve --port 8080 --read-only        # (not run: a server)
      scarwarden -C ~/team-memory serve               # (not run: a server)
    """
    require_ui("scarwarden serve")
    from scarwarden.audit.web.app import create_app
    from scarwarden.audit.web.security import allowed_hosts, is_loopback

    repo = get_repo(ctx)
    _check_host(host, port)
    if not is_loopback(host):
        click.echo(
            click.style(
                f"warning: listening on {host}, not loopback: anyone who can reach this "
                "machine can read this memory"
                + ("" if read_only else " and record answers as commits (use --read-only)"),
                fg="yellow",
            ),
            err=True,
        )
    app = create_app(repo.root, read_only=read_only, allowed_hosts=allowed_hosts(host))
    server = _wsgi_server(app, host, port)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    click.echo(
        f"Scarwarden audit UI for {repo.root}{' (read-only)' if read_only else ''}: "
        f"http://{shown}:{server.effective_port}/  (Ctrl-C to stop)",
        err=True,
    )
    server.run()


def _check_host(host: str, port: int) -> None:
    """A usage error (exit 2) for a ``--host`` nothing can listen on (empty, a name that
    does not resolve, ``999.1.1.1``), before the warning and the server: waitress says
    only "Invalid host/port specified"."""
    import socket

    hint = "give an address of this machine: 127.0.0.1 (the default), ::1, 0.0.0.0 or a name that resolves"
    if not host.strip():
        raise UsageError("--host is empty: no address to listen on", hint=hint)
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"--host {host!r} is not an address to listen on: {reason}", hint=hint) from None


def _wsgi_server(app: object, host: str, port: int) -> Any:
    """A production WSGI server (waitress) bound to host:port, not Flask's development
    server and its red warning (issue 18). The app's own checks (Host, Origin, token,
    read-only) are the same whichever server runs it."""
    try:
        from waitress import create_server
    except ImportError:
        from scarwarden.cli.commands._install import install_hint

        raise UsageError(
            "scarwarden serve needs waitress, which is not installed", hint=install_hint("ui")
        ) from None
    try:
        # Proxy headers are never trusted: the UI is meant for loopback, not a proxy.
        return create_server(app, host=host, port=port, threads=4, ident="scarwarden")
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", hint="pick another port with --port"
        ) from None
    except ValueError as exc:  # waitress: "Invalid host/port specified."
        raise UsageError(f"cannot listen on {host}:{port}: {exc}", hint="check --host and --port") from None
