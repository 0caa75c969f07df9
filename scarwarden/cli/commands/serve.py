"""``scarwarden serve``: the audit web UI (Flask, the optional ``ui`` extra)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import click

from scarwarden.cli.commands._common import get_repo
from scarwarden.errors import UsageError
from scarwarden.repo import MemoryRepo


def require_ui(what: str) -> None:
    """Raise a clear usage error (exit 2) when Flask/Jinja are not installed."""
    try:
        import flask  # noqa: F401
        import jinja2  # noqa: F401
    except ImportError:
        raise UsageError(f"{what} needs Flask, which is not installed",
                         hint="pip install 'scarwarden[ui]'") from None


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback exposes the memory (and, "
                   "without --read-only, commits) to the network: a warning is printed.")
@click.option("--port", default=5054, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
@click.option("--read-only", is_flag=True,
              help="Refuse every write (recording a human's answer answers 403).")
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
                        after ASK_HUMAN, record the human's answer (a commit)

    All content is escaped and the pages run no script. The one write is a POST
    protected by a per-process token and an Origin/Referer check; --read-only
    turns it off. Needs the ui extra: pip install 'scarwarden[ui]'.

    \b
    Examples:
      scarwarden serve
      scarwarden serve --port 8080 --read-only
      scarwarden -C path/to/repo serve
    """
    require_ui("scarwarden serve")
    from scarwarden.audit.web.app import LOOPBACK_HOSTS, create_app

    repo = get_repo(ctx)
    loopback = is_loopback(host)
    if not loopback:
        click.echo(click.style(
            f"warning: listening on {host}, not loopback: anyone who can reach this "
            "machine can read this memory" + ("" if read_only else
                                              " and record answers as commits (use --read-only)"),
            fg="yellow"), err=True)
    allowed = (set(LOOPBACK_HOSTS) | {host.strip("[]")}) if loopback else None
    app = create_app(repo.root, read_only=read_only, allowed_hosts=allowed)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    click.echo(f"Scarwarden audit UI for {repo.root}{' (read-only)' if read_only else ''}: "
               f"http://{shown}:{port}/  (Ctrl-C to stop)", err=True)
    try:
        app.run(host=host, port=port, threaded=True, debug=False, use_reloader=False)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                         hint="pick another port with --port") from None


def demo_section(repo: MemoryRepo, echo: Callable[[str], None]) -> None:
    """How to open the UI on the demo memory, and one semantic diff of a tiny change."""
    from dataclasses import replace

    from scarwarden.audit.diff.compare import semantic_diff
    from scarwarden.audit.diff.render import render_text
    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    echo("Every rule links to the scars that taught it. To browse this demo memory:")
    echo("  scarwarden demo --keep /tmp/sw && scarwarden -C /tmp/sw/demo-memory serve")
    echo("  (or in a fresh git repository: scarwarden init --demo && scarwarden serve)")
    echo("then open http://127.0.0.1:5054/ and click PB-01. For a pull request:")
    echo("  scarwarden review --base main      # the report, with the evidence quoted")
    echo("  scarwarden audit --html site/      # the same pages as static files")
    book = load_playbook(repo)
    rule = book.get("PB-14")
    if rule is None or rule.retired:
        return
    original = repo.playbook_path.read_bytes()
    edited = replace(
        rule,
        text=rule.text.replace("on all social channels", "on every social channel"),
        tags=rule.tags + tuple(t for t in ("social",) if t not in rule.tags),
        episode_ids=rule.episode_ids + tuple(
            e for e in ("ep-t3gn9ngxyq",) if e not in rule.episode_ids))
    save_playbook(repo, book.with_rule(edited))
    try:
        echo("")
        echo("A reviewer's hand edit to PB-14, as `scarwarden diff` shows it (HEAD vs the "
             "working tree):")
        echo("")
        for line in render_text(semantic_diff(repo)).rstrip("\n").splitlines():
            echo(("  " + line).rstrip())
    finally:
        repo.playbook_path.write_bytes(original)
