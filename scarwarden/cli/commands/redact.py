from __future__ import annotations

from collections.abc import Mapping

import click

from scarwarden.cli.commands._common import echo_json, get_repo, split_list
from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo


@click.command()
@click.argument("episode_id")
@click.option(
    "--reason",
    required=True,
    help="Why: it is recorded in the stub and in a new episode (at most 10,000 characters).",
)
@click.option(
    "--fields",
    "fields",
    multiple=True,
    help="Only these fields (repeatable or comma-separated); default: all but id and at. "
    "An empty list is refused (exit 2).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def redact(ctx: click.Context, episode_id: str, reason: str, fields: tuple[str, ...], as_json: bool) -> None:
    """Take an episode's content back: the one permitted change to an episode.

    Replaces the episode's fields with '[redacted]' and a 'redacted:' block (when, who,
    why, which fields, and the SHA-256 of the removed content, so the redaction is
    provable), records the act as a new episode that refs it, and commits both in one
    commit, which is the only form of edit the gate accepts. Rules citing it are
    flagged 'evidence redacted' everywhere; 'distill' proposes retiring a rule left
    with no unredacted evidence. The old content stays in git history: see
    docs/privacy.md for purging it with git filter-repo. Rotate a leaked credential.

    Fields an earlier redaction removed are skipped; when nothing is left to redact it
    says so, commits nothing and exits 0.

    \b
    Examples:
      scarwarden redact ep-hkgnqdz88f --reason "pasted a customer's API key"
      scarwarden redact ep-04yqq457qh --fields action,outcome --reason "card number"
    """
    from scarwarden.files.redact import redact as run_redact

    repo = get_repo(ctx)
    done = run_redact(
        repo,
        episode_id,
        reason,
        fields=split_list(fields) if fields else None,
        check=lambda env: _gate(repo, env),
    )
    if as_json:
        echo_json(done.to_json())
        return
    if done.record is None:
        which = f" ({', '.join(done.already)} already redacted)" if done.already else ""
        click.echo(f"Nothing left to redact in {done.episode_id}{which}; nothing was committed")
        return
    if done.already:
        click.echo(f"Already redacted, skipped: {', '.join(done.already)}")
    digest = (done.sha256 or "")[:12]
    click.echo(f"Redacted {', '.join(done.fields)} of {done.episode_id} (sha256 {digest}...)")
    click.echo(f"Recorded as {done.record.id}; commit {(done.commit or '')[:10]}")
    click.echo("The old content is still in git history: docs/privacy.md says how to purge it.", err=True)
    if done.media_kept:
        which = "image stays" if len(done.media_kept) == 1 else "images stay"
        click.echo(f"warning: the attached {which} in the tree: {', '.join(done.media_kept)}", err=True)
        click.echo("  hint: media files are append-only; docs/privacy.md says what that means", err=True)


def _gate(repo: MemoryRepo, env: Mapping[str, str]) -> None:
    """The provenance gate on the commit about to be made: it must accept the redaction."""
    from scarwarden.gate.check import check_staged

    report = check_staged(repo, env=env)
    if not report.ok:
        raise ValidationError(
            "the redaction does not pass the provenance gate; nothing was changed",
            problems=list(report.problems),
        )
