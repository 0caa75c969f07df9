"""``scarwarden audit-image``: an image checked against the learnt rules, with citations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.errors import NoModelConfigured, Problem, ScarwardenError

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.visual import ImageAudit
    from scarwarden.repo import MemoryRepo


#: The largest image ``audit-image`` reads without --record (40 MiB).
AUDIT_MAX_BYTES = 40 * 1024 * 1024


@click.command("audit-image")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=str))
@click.option("--task", required=True, help="What the image is for (its words recall the rules).")
@click.option("--json", "as_json", is_flag=True, help="Print the audit as JSON.")
@click.option("--strict", is_flag=True, help="Exit 1 when any rule is violated (CI); exit 4 without a model.")
@click.option("--record", is_flag=True, help="Record the audit as an episode with the image attached.")
@click.pass_context
def audit_image(ctx: click.Context, file: str, task: str, as_json: bool, strict: bool, record: bool) -> None:
    """Check an image against the rules the team learnt, each verdict citing its rule.

    The rules sent are every visual rule ('- Applies to: images') and the rules the
    task recalls. The vision model (model.vision_model, SCARWARDEN_MODEL_VISION;
    default qwen3-vl-plus) answers per rule pass / violates / unclear with the reason
    and the visible evidence; code checks it cites only rules it was sent. Images over
    media.send_max_bytes or media.send_max_side are resized first (the 'vision'
    extra, Pillow), so a 20 MB photo (up to 40 MiB) costs what a 1 MB one does;
    --record stores the image, so media.max_bytes applies. The format is read from
    the bytes; SVG is refused.

    Without a model it lists the rules that apply and says no image was judged (exit
    0 with a note; with --strict or --record, exit 4: a CI gate that cannot look must
    not pass).

    \b
    Examples:
      scarwarden audit-image banner.png --task "Beta launch banner"  # (not run: your own image)
      scarwarden audit-image card.jpg --task "LinkedIn card" --strict --json  # (not run: needs a model)
    """
    from scarwarden.answers.visual import audit_image as run_audit
    from scarwarden.answers.visual import record_audit
    from scarwarden.files.media import read_image
    from scarwarden.llm.client import client_from_config

    repo = get_repo(ctx)
    # Auditing reads a photo of any reasonable size (it is resized before sending);
    # recording stores it, so the media cap applies.
    cap = repo.config.media.max_bytes if record else max(AUDIT_MAX_BYTES, repo.config.media.max_bytes)
    image = read_image(Path(file), max_bytes=cap)
    client = client_from_config(repo.config, os.environ)
    audit = run_audit(repo, image, task, client=client, source=file)
    recorded = record_audit(repo, audit, warn=_warn) if record and audit.judged else None
    if as_json:
        data = audit.to_json()
        data["recorded"] = recorded.id if recorded is not None else None
        echo_json(data)
    else:
        _print(audit)
        if recorded is not None:
            click.echo(f"Recorded as {recorded.id}", err=True)
    has_model = client is not None and bool(repo.config.model.vision_model)
    _finish(repo, audit, strict=strict, record=record, has_model=has_model)


def _print(audit: ImageAudit) -> None:
    click.echo(f"Image: {audit.source} (sha256:{audit.image.sha256[:12]}, {audit.image.ext.upper()})")
    click.echo(f"Task: {audit.task}")
    if not audit.rules:
        click.echo("No rule applies: no visual rule in the playbook, and the task recalls none.")
        return
    if not audit.judged:
        click.echo(f"\n{len(audit.rules)} rule(s) apply:")
        for rule in audit.rules:
            click.echo(f"  {rule.citation} {rule.title} ({rule.why})")
        return
    click.echo(f"\nVerdicts by {audit.model}:")
    width = max(len(v.verdict) for v in audit.verdicts)
    for v in audit.verdicts:
        click.echo(f"  {v.verdict.upper():<{width}}  {v.rule.citation} {v.rule.title}")
        click.echo(f"  {'':<{width}}  {v.reason}")
        if v.evidence:
            click.echo(f"  {'':<{width}}  seen: {v.evidence}")
    if audit.sent is not None and audit.sent.resized:
        click.echo(
            f"\nSent resized: {audit.sent.width}x{audit.sent.height}, {len(audit.sent.data):,} bytes "
            f"(from {audit.sent.original_bytes:,})" + (f"; {audit.sent.note}" if audit.sent.note else "")
        )
    usage = audit.to_json()["usage"]
    if isinstance(usage, dict):
        approx = " (estimated)" if usage.get("estimated") else ""
        click.echo(f"Tokens: {usage['total_tokens']}{approx} in {usage['calls']} call(s)")


def _finish(repo: MemoryRepo, audit: ImageAudit, *, strict: bool, record: bool, has_model: bool) -> None:
    from scarwarden.answers.visual import NOT_JUDGED
    from scarwarden.llm.endpoint import shown_url

    if not audit.judged and audit.rules:
        settings = repo.config.model
        hint = (
            f"set {repo.config.key_names()} to use "
            f"{settings.vision_model} at {shown_url(settings.base_url)} "
            "(SCARWARDEN_MODEL_VISION names another vision model). See docs/answers.md."
        )
        if not settings.vision_model:
            hint = (
                f"the {settings.provider or 'configured'} endpoint has no vision model: set "
                "model.vision_model (or SCARWARDEN_MODEL_VISION) to one it serves. See docs/models.md."
            )
        error = NoModelConfigured(NOT_JUDGED, hint=hint)
        if not has_model and (strict or record):
            raise error
        click.echo(f"note: {error.message}\n  hint: {error.hint}", err=True)
        return
    if strict and audit.violations:
        ids = ", ".join(v.rule.id for v in audit.violations)
        raise ScarwardenError(
            f"the image violates {len(audit.violations)} rule(s) (--strict): {ids}",
            hint="fix the image, or argue with the rule in a pull request on the playbook",
        )


def _warn(problem: Problem) -> None:
    """What ``privacy:`` warns about in the recorded audit: on stderr, in ``episode add``'s words."""
    click.echo(f"warning: {problem}", err=True)
