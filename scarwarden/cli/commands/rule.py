from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from scarwarden.cli.commands._common import echo_json, get_repo, split_list, tag_list, tag_option
from scarwarden.errors import UsageError
from scarwarden.files.display import format_episode, format_rule
from scarwarden.files.input_policy import quoted
from scarwarden.files.playbook_model import APPLIES_TO
from scarwarden.files.rule_ids import canonical as canonical_rule_id

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.audit.history import RuleEvent
    from scarwarden.files import playbook as pb
    from scarwarden.files.episodes import Episode
    from scarwarden.index.lineage import Lineage
    from scarwarden.repo import MemoryRepo


@click.group()
def rule() -> None:
    """Add, list and audit playbook rules (memory/playbook.md).

    \b
    Examples:
      scarwarden rule list --tag linkedin
      scarwarden rule show PB-01
      scarwarden rule add --text "Never post discount codes publicly." --cites ep-wmjgdnc59j
      scarwarden rule add --text "Keep the logo whole." --applies-to images --cites ep-wmjgdnc59j
    """


@rule.command("add")
@click.option(
    "--text", required=True, help="The rule itself: what to do, and why (at most 20,000 characters)."
)
@tag_option
@click.option(
    "--cites", required=True, help="Comma-separated episode IDs that taught the rule (they must exist)."
)
@click.option(
    "--title", help="A short title (default: from the text's first sentence; at most 20,000 characters)."
)
@click.option(
    "--applies-to",
    "applies_to",
    multiple=True,
    type=click.Choice(APPLIES_TO),
    help="What the rule is about: 'images' makes a visual rule, one audit-image always checks.",
)
@click.option(
    "--sentences-from",
    "sentences_from",
    help="Which cited episodes each sentence came from: '1: ep-a; 2: ep-b, ep-c' "
    "(default: every sentence from the rule's citations).",
)
@click.option("--no-commit", is_flag=True, help="Stage the playbook instead of committing.")
@click.option("--json", "as_json", is_flag=True, help="Print the new rule as JSON.")
@click.pass_context
def add(
    ctx: click.Context,
    text: str,
    tags: tuple[str, ...],
    cites: str,
    title: str | None,
    applies_to: tuple[str, ...],
    sentences_from: str | None,
    no_commit: bool,
    as_json: bool,
) -> None:
    """Add a hand-written rule; refuses citations that do not resolve.

    The rule gets a newly minted ID such as PB-7k2m9q4x (a hash of its content; two
    branches never take the same one, and a retired ID is never reused) and is committed
    with a `Scarwarden-Rule: <ID>` trailer. `--applies-to images` writes
    `- Applies to: images`: a visual rule, sent with every `audit-image`.
    `--sentences-from` writes `- Sentences from:`, the episodes each sentence came
    from (numbered from 1); without it every sentence is from the rule's citations.
    A text an active rule already says (spacing aside) is refused (exit 1), naming it:
    a retried command adds no second copy.

    \b
    Examples:
      scarwarden rule add --text "Never post discount codes publicly." \\
          --tag discount --tag social --cites ep-wmjgdnc59j,ep-56m702j8dv
      scarwarden rule add --text "Never put text over a face in a banner." \\
          --applies-to images --tag banner --cites ep-wmjgdnc59j
    """
    from scarwarden.files.playbook_edit import add_rule
    from scarwarden.gate.door import gate_check

    repo = get_repo(ctx)
    new = add_rule(
        repo,
        text=text,
        tags=tag_list(tags),
        cites=split_list([cites]),
        title=title,
        commit=not no_commit,
        applies_to=applies_to,
        check=gate_check(repo, "the rule"),
        sentences_from=sentences_from,
    )
    _warn_redacted(repo, new)
    if as_json:
        echo_json(new.to_json())
        return
    click.echo(new.id)
    click.echo(f"{'Staged' if no_commit else 'Committed'} {new.id}: {new.title}", err=True)


def _warn_redacted(repo: MemoryRepo, new: pb.Rule) -> None:
    """Flag a new rule citing redacted evidence, as every other view of it does."""
    from scarwarden.files.playbook_edit import redacted_citations

    gone = redacted_citations(repo, new.episode_ids)
    if not gone:
        return
    left = len(new.episode_ids) - len(gone)
    more = "; no unredacted evidence is left" if not left else f" ({left} other citation(s) left)"
    click.echo(f"warning: {new.id} cites {', '.join(gone)}: evidence redacted{more}", err=True)
    click.echo(
        "  hint: cite an episode whose content is still in the ledger ('scarwarden distill' "
        "proposes retiring a rule left with no unredacted evidence)",
        err=True,
    )


@rule.command("list")
@click.option("--tag", help="Only rules with this tag (when none has it, says so; empty: exit 2).")
@click.option("--retired", "include_retired", is_flag=True, help="Include retired rules.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON list of {id, title, text, tags, episode_ids}."
)
@click.pass_context
def list_(ctx: click.Context, tag: str | None, include_retired: bool, as_json: bool) -> None:
    """The playbook: every rule with its tags and citations.

    \b
    Examples:
      scarwarden rule list
      scarwarden rule list --tag linkedin --json
    """
    from scarwarden.index import open_index

    if tag is not None and not tag.strip():
        raise UsageError("--tag is empty: give the tag to list the rules of", hint="or leave --tag out")
    repo = get_repo(ctx)
    with open_index(repo) as index:
        index.require_playbook()
        every = index.rules(include_retired=include_retired)
    rules = [r for r in every if tag.strip().lower() in r.tags] if tag else every
    if as_json:
        echo_json([r.to_json() for r in rules])
        return
    if not rules:
        click.echo(_none_listed(tag, bool(every), include_retired), err=True)
        return
    click.echo("\n\n".join(format_rule(r) for r in rules))


list_.name = "list"


def _none_listed(tag: str | None, any_rules: bool, include_retired: bool) -> str:
    """Why ``rule list`` printed nothing: no rule at all, or none with the tag."""
    if not tag or not any_rules:
        return "the playbook has no rules yet"
    which = "rule" if include_retired else "active rule"
    more = "" if include_retired else " (--retired includes retired rules)"
    return f"no {which} has the tag {quoted(tag.strip())}{more}"


@rule.command("show")
@click.argument("rule_id", metavar="RULE")
@click.option("--json", "as_json", is_flag=True, help="Print the audit as JSON.")
@click.pass_context
def show(ctx: click.Context, rule_id: str, as_json: bool) -> None:
    """The audit of one rule: the rule, how it has fared since it last changed
    (applications, corrections), every cited episode word for word, and the commits
    that introduced and changed it.

    RULE is the rule's ID in any case (PB-01, pb-7k2m9q4x) or its title; an empty
    RULE is a usage error (exit 2).

    \b
    Examples:
      scarwarden rule show PB-01
      scarwarden rule show "lead linkedin posts with the reader's pain"
    """
    from scarwarden.audit.history import rule_history
    from scarwarden.files.rule_lookup import find_rule
    from scarwarden.index import open_index
    from scarwarden.index.lineage import lineage_counts

    repo = get_repo(ctx)
    with open_index(repo) as index:
        index.require_playbook()
        found = index.get_rule(canonical_rule_id(rule_id))
        if found is None:  # issue 28: any case, a title, the nearest IDs, an episode ID
            rule_id = find_rule(
                rule_id,
                [(r.id, r.title) for r in index.rules(include_retired=True)],
                episode_hint="that is 'scarwarden episode show {id}'",
                list_hint="'scarwarden rule list --retired' shows every rule",
            )
            found = index.get_rule(rule_id)
            assert found is not None
        rule_id = found.id
        episodes = {ep: index.get_episode(ep) for ep in found.episode_ids}
        paths = {ep: index.episode_path(ep) for ep in found.episode_ids}
        lineage = lineage_counts(index, [found.id])[found.id]
    events = rule_history(repo, rule_id)
    if as_json:
        echo_json(_audit_json(found, episodes, events, lineage))
    else:
        _print_audit(repo, found, episodes, paths, events, lineage)


def _audit_json(
    found: pb.Rule, episodes: dict[str, Episode | None], events: list[RuleEvent], lineage: Lineage
) -> dict[str, Any]:
    """``rule show --json``: the rule, its episodes (found or not, redacted or not), its
    history and its lineage."""
    return {
        "rule": found.to_json(),
        "episodes": [
            {
                "id": ep,
                "found": e is not None,
                "redacted": e is not None and e.get("redacted") is not None,
                "episode": e.to_json() if e else None,
            }
            for ep, e in episodes.items()
        ],
        "evidence_redacted": [ep for ep, e in episodes.items() if e and e.get("redacted")],
        "history": [ev.to_json() for ev in events],
        "lineage": lineage.to_json(),
    }


def _print_audit(
    repo: MemoryRepo,
    found: pb.Rule,
    episodes: dict[str, Episode | None],
    paths: dict[str, str | None],
    events: list[RuleEvent],
    lineage: Lineage,
) -> None:
    """``rule show``: the rule, its lineage, each episode word for word, its history."""
    click.echo(format_rule(found))
    click.echo(click.style(lineage.sentence(), fg="red" if lineage.struggling else None))
    for ep_id, ep in episodes.items():
        click.echo()
        redacted = ep is not None and ep.get("redacted") is not None
        note = " (evidence redacted)" if redacted else ""
        click.echo(click.style(f"--- learnt in {ep_id}{note} ---", fg="yellow" if redacted else "cyan"))
        click.echo(
            format_episode(ep, repo, paths[ep_id])
            if ep
            else click.style(f"{ep_id} is NOT in the ledger (the gate would reject this playbook)", fg="red")
        )
    click.echo()
    click.echo(click.style("--- history ---", fg="cyan"))
    if not events:
        click.echo("not committed yet")
    for ev in events:
        click.echo(f"{ev.sha[:10]}  {ev.date[:10]}  {ev.kind:<10}  {ev.subject}")
