"""What each audit page shows, as plain data (no Flask): the live UI and the static
export render the same contexts with the same templates."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scarwarden import text
from scarwarden.audit.diff.compare import RuleChange, compare_rules
from scarwarden.audit.history import PlaybookHistory, RuleEvent, rule_history
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import FIELD_ORDER, Episode
from scarwarden.index import Index
from scarwarden.index.lineage import Lineage, lineage_counts
from scarwarden.repo import MemoryRepo

#: The ledger lists this many episodes (newest first) per page.
LEDGER_LIMIT = 100


@dataclass(frozen=True)
class Field:
    key: str
    value: str
    is_list: bool = False


def episode_fields(ep: Episode) -> list[Field]:
    """Every stored key in file order (known keys first, then ``x-`` extensions)."""
    keys = [k for k in FIELD_ORDER if k in ep.data]
    keys += [k for k in ep.data if k not in FIELD_ORDER]
    out = []
    for key in keys:
        value = ep.data[key]
        if isinstance(value, list):
            out.append(Field(key, ", ".join(str(v) for v in value), True))
        else:
            out.append(Field(key, str(value)))
    return out


def _matches(rule: pb.Rule, query: str) -> bool:
    """A rule matches when every word of the query is in it (as a stem or a substring)."""
    haystack = f"{rule.id} {rule.title} {rule.text} {' '.join(rule.tags)}".lower()
    stems = set(text.stems(haystack)) | set(rule.tags)
    words = query.lower().split()
    return all(w in haystack or text.stem(w) in stems for w in words)


def playbook_page(index: Index, *, tag: str | None = None, query: str | None = None) -> dict[str, Any]:
    index.require_playbook()
    everything = index.rules(include_retired=True)
    active = [r for r in everything if not r.retired]
    tag_counts: dict[str, int] = {}
    for rule in active:
        for t in rule.tags:
            tag_counts[t] = tag_counts.get(t, 0) + 1
    tag = (tag or "").strip().lower() or None
    query = (query or "").strip() or None
    shown = [
        r for r in everything if (tag is None or tag in r.tags) and (query is None or _matches(r, query))
    ]
    return {
        "title": "Playbook",
        "rules": [r for r in shown if not r.retired],
        "retired": [r for r in shown if r.retired],
        "total": len(active),
        "tags": sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0])),
        "tag": tag,
        "query": query,
        "filtered": bool(tag or query),
        # Issue 28: the episodes the active rules cite, not every episode in the ledger
        # ("1 active rule, learnt from 2 episodes" while the rule cites one).
        "cited_count": len({ep for r in active for ep in r.episode_ids}),
        "episode_count": index.episode_count(),
    }


def _event_rule(text: str | None) -> pb.Rule | None:
    if text is None:
        return None
    try:
        rules = pb.parse(f"{pb.TITLE}\n\n{text}").all_rules()
    except ValidationError:
        return None
    return rules[0] if rules else None


def event_change(event: RuleEvent) -> RuleChange | None:
    """What a commit did to the rule, as a semantic change (word diffs of its text)."""
    return compare_rules(_event_rule(event.before), _event_rule(event.after))


@dataclass(frozen=True)
class RuleSources:
    """What a rule's page reads that is the same for every rule: the rules (retired
    too), the playbook's history from git and the rules' counts; read once for the
    many pages of an export (:func:`rule_sources`), else once for the one page."""

    rules: list[pb.Rule]
    playbooks: PlaybookHistory
    lineage: dict[str, Lineage]


def rule_sources(repo: MemoryRepo, index: Index, rule_ids: Iterable[str] | None = None) -> RuleSources:
    """The sources of the pages of ``rule_ids`` (default: every rule in the index)."""
    rules = index.rules(include_retired=True)
    ids = list(rule_ids) if rule_ids is not None else [r.id for r in rules]
    return RuleSources(rules, PlaybookHistory(repo), lineage_counts(index, ids))


def rule_page(
    repo: MemoryRepo, index: Index, rule_id: str, *, sources: RuleSources | None = None
) -> dict[str, Any] | None:
    """The page of one rule; ``sources`` (:func:`rule_sources`) when already read."""
    index.require_playbook()
    rule = index.get_rule(rule_id)
    if rule is None:
        return None
    if sources is None:
        sources = rule_sources(repo, index, [rule.id])
    episodes = [(ep_id, index.get_episode(ep_id), index.episode_path(ep_id)) for ep_id in rule.episode_ids]
    replaces = [r for r in sources.rules if r.replaced_by == rule.id]
    events = rule_history(repo, rule.id, playbooks=sources.playbooks)
    history = [(ev, event_change(ev)) for ev in reversed(events)]
    return {
        "title": f"{rule.id}: {rule.title}",
        "rule": rule,
        "episodes": [(ep_id, ep, episode_fields(ep) if ep else [], path) for ep_id, ep, path in episodes],
        "replaces": replaces,
        "history": history,
        "lineage": sources.lineage[rule.id],
    }


def episode_page(index: Index, episode_id: str) -> dict[str, Any] | None:
    ep = index.get_episode(episode_id)
    if ep is None:
        return None
    citing = [r for r in (index.get_rule(rid) for rid in index.rules_citing(ep.id)) if r]
    return _episode_context(index, ep, citing)


def episode_pages(index: Index, episodes: Iterable[Episode]) -> Iterator[tuple[Episode, dict[str, Any]]]:
    """Each episode with what :func:`episode_page` gives for it, the citations and the
    rules read once for all (``episodes`` as the index lists them: an export's 10,000
    pages asked five statements each of SQLite and parsed each episode twice)."""
    rules = {r.id: r for r in index.rules(include_retired=True)}
    citations = index.citations()
    for ep in episodes:
        citing = [rules[rid] for rid in citations.get(ep.id, ()) if rid in rules]
        yield ep, _episode_context(index, ep, citing)


def _episode_context(index: Index, ep: Episode, citing: list[pb.Rule]) -> dict[str, Any]:
    return {
        "title": f"Episode {ep.id}",
        "episode": ep,
        "fields": episode_fields(ep),
        "raw": ep.render(display=True),
        "path": ep.relpath(index.repo.episodes_rel),  # what index.episode_path gives
        "citing": citing,
        "images": episode_images(index, ep),
    }


def episode_images(index: Index, ep: Episode) -> list[dict[str, str | None]]:
    """The episode's attachments (issue 19): each stored file's name, or ``None`` when
    the image is missing from the working tree (the gate refuses that in a commit)."""
    from scarwarden.files.media import find_stored

    out: list[dict[str, str | None]] = []
    for attachment in ep.get("attachments") or []:
        found = find_stored(index.repo.root, index.repo.memory_rel, attachment)
        out.append({"attachment": attachment, "name": found.name if found else None})
    return out


def _month_range(month: str) -> tuple[str, str] | None:
    if len(month) != 7 or month[4] != "-" or not (month[:4] + month[5:]).isdigit():
        return None
    if not 1 <= int(month[5:]) <= 12:
        return None
    return f"{month}-01T00:00:00Z", f"{month}-31T23:59:59Z"


def page_number(value: str | None) -> int:
    """``?page=N`` as a page number from 1; anything else is page 1."""
    value = (value or "").strip()
    return int(value) if value.isdigit() and 0 < int(value) < 10**9 else 1


def ledger_page(
    index: Index,
    *,
    month: str | None = None,
    tag: str | None = None,
    agent: str | None = None,
    query: str | None = None,
    page: int = 1,
    limit: int = LEDGER_LIMIT,
) -> dict[str, Any]:
    """One page of the matching episodes, newest first; a page past the end shows the
    last one."""
    month = (month or "").strip() or None
    tag = (tag or "").strip().lower() or None
    agent = (agent or "").strip() or None
    query = (query or "").strip() or None
    bounds = _month_range(month) if month else None
    # A month it cannot read is said, not dropped in silence (nor one matching nothing).
    error = f"cannot read {month!r} as a month (use YYYY-MM, e.g. 2026-11)" if month and not bounds else None
    month = month if bounds else None
    since, until = bounds or (None, None)
    filters: dict[str, Any] = {
        "tags": [tag] if tag else (),
        "since": since,
        "until": until,
        "agent": agent,
        "grep": query,
    }
    matched = index.count_episodes(**filters)
    pages = max(1, -(-matched // limit))
    page = min(max(1, page), pages)
    offset = (page - 1) * limit
    episodes = index.list_episodes(**filters, limit=limit, offset=offset, newest_first=True)
    cited = index.citations([ep.id for ep in episodes])
    citing = {ep.id: cited.get(ep.id, []) for ep in episodes}
    return {
        "title": "Ledger",
        "episodes": episodes,
        "citing": citing,
        "total": index.episode_count(),
        "matched": matched,
        "limit": limit,
        "page": page,
        "pages": pages,
        "first": offset + 1 if episodes else 0,
        "last": offset + len(episodes),
        "newer_page": page - 1 if page > 1 else None,
        "older_page": page + 1 if page < pages else None,
        "months": index.episode_months(),
        "tags": index.episode_tags(),
        "agents": index.episode_agents(),
        "month": month,
        "tag": tag,
        "agent": agent,
        "query": query,
        "filtered": bool(month or tag or agent or query),
        "filter_error": error,
    }
