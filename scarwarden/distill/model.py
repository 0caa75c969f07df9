"""The model distiller: new episodes in batches, with only the rules they bear on.

Cost follows what is new, not what is old:

* only the new episodes are sent, packed greedily (oldest first) into batches whose
  prompt stays within ``distill.token_budget`` (tokens counted as characters/4);
* each batch carries the existing rules it bears on, chosen by overlap of tags and
  stemmed terms (the recall vocabulary) plus the rules the episodes say they applied:
  at most :data:`PER_EPISODE` per episode and ``distill.max_context_rules`` in all; a
  rule's citations are counted, not listed, so an old, much-cited rule stays cheap.

Context rules are chosen from the playbook being distilled (HEAD's, in memory), not
from the SQLite index, which reflects the working tree.

Each batch's operations pass through the provenance gate before the next batch is
built, so a later batch sees (and may update) the rules an earlier one added.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from scarwarden import text as txt
from scarwarden.config import DistillSettings
from scarwarden.distill import prompts
from scarwarden.distill.ops import (
    NOTHING_TO_CHANGE,
    Change,
    Drop,
    Operation,
    apply_operations,
    parse_operations,
)
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_sentences import Source
from scarwarden.files.playbook_sentences import build as build_text
from scarwarden.files.playbook_sentences import split as split_sentences
from scarwarden.files.rule_ids import canonical as canonical_rule_id
from scarwarden.llm.client import ChatClient, Usage, complete_json, total_usage
from scarwarden.logs import log

#: Most context rules chosen for one episode.
PER_EPISODE = 3
#: Share of the token budget the episodes of a batch may fill; the rest is for the
#: instructions and the context rules.
EPISODE_SHARE = 0.6
WHAT = "list of playbook operations"
#: Without a tag hit, a rule bears on an episode when they share this many stems
#: (two was too loose: "customer" and "hour" link a webinar to a GDPR rule).
MIN_SHARED_TERMS = 3


@dataclass
class ModelRun:
    playbook: pb.Playbook
    changes: list[Change] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    #: (episodes, context rules, estimated prompt tokens) per batch.
    batches: list[tuple[int, int, int]] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    #: (episode ID, why): sent, but an operation about it was dropped; retried next run.
    left: list[tuple[str, str]] = field(default_factory=list)


def _episode_terms(ep: Episode) -> set[str]:
    words = " ".join(str(ep.get(k) or "") for k in ("task", "action", "outcome", "correction"))
    terms = set(txt.stems(words))
    for tag in ep.tags:
        terms.update(txt.tag_stems(tag))
    return terms


def select_context(batch: list[Episode], playbook: pb.Playbook, limit: int) -> list[pb.Rule]:
    """The active rules the batch bears on, best first, at most ``limit``."""
    if limit <= 0 or not playbook.rules:
        return []
    postings: dict[str, set[str]] = {}
    tag_parts: dict[str, list[tuple[str, ...]]] = {}
    for rule in playbook.rules:
        for term in set(txt.stems(rule.title + "\n" + rule.text)):
            postings.setdefault(term, set()).add(rule.id)
        tag_parts[rule.id] = [txt.tag_stems(tag) for tag in rule.tags]
        for parts in tag_parts[rule.id]:
            for part in parts:
                postings.setdefault(part, set()).add(rule.id)
    best: dict[str, float] = {}
    for ep in batch:
        terms = _episode_terms(ep)
        applied = set(ep.get("rules_applied") or ())
        shared: dict[str, int] = {}
        for term in terms:
            for rule_id in postings.get(term, ()):
                shared[rule_id] = shared.get(rule_id, 0) + 1
        scored: list[tuple[float, str]] = []
        for rule_id in set(shared) | (applied & set(tag_parts)):
            tag_hits = sum(1 for parts in tag_parts[rule_id] if parts and set(parts) <= terms)
            n = shared.get(rule_id, 0)
            if rule_id in applied or tag_hits >= 1 or n >= MIN_SHARED_TERMS:
                scored.append((10.0 * (rule_id in applied) + 3.0 * tag_hits + n, rule_id))
        scored.sort(key=lambda s: (-s[0], s[1]))
        for score, rule_id in scored[:PER_EPISODE]:
            best[rule_id] = max(best.get(rule_id, 0.0), score)
    ranked = sorted(best, key=lambda rid: (-best[rid], rid))[:limit]
    by_id = {rule.id: rule for rule in playbook.rules}
    return [by_id[rid] for rid in ranked]


def make_batches(episodes: list[Episode], token_budget: int) -> list[list[Episode]]:
    """Greedy packing, oldest first; an episode too big for any batch goes alone."""
    room = max(int(token_budget * 4 * EPISODE_SHARE) - prompts.overhead_chars(), 2000)
    batches: list[list[Episode]] = []
    current: list[Episode] = []
    used = 0
    for ep in episodes:
        size = len(prompts.episode_line(ep)) + 1
        if current and used + size > room:
            batches.append(current)
            current, used = [], 0
        current.append(ep)
        used += size
    if current:
        batches.append(current)
    return batches


def _prompt_chars(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def model_distill(
    client: ChatClient,
    model: str,
    episodes: list[Episode],
    playbook: pb.Playbook,
    ledger: Collection[str],
    settings: DistillSettings,
    revise: dict[str, list[Episode]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ModelRun:
    """Distil ``episodes`` batch by batch; raises ModelError/ModelUnreachable on failure
    (the caller then changes nothing). ``revise``: struggling rules and the corrections
    they received, sent with the first batch (which may cite those corrections).
    ``progress(done, total)`` counts the episodes whose batch the model has answered."""
    run = ModelRun(playbook)
    pending = dict(revise or {})
    budget_chars = settings.token_budget * 4
    batches = make_batches(episodes, settings.token_budget)
    sent_so_far = 0
    for number, batch in enumerate(batches, start=1):
        if progress is not None:  # drawn before the first reply: the wait is the long part
            progress(sent_so_far, len(episodes))
        rules = select_context(batch, run.playbook, settings.max_context_rules)
        revising = {rid: eps for rid, eps in pending.items() if _active(run.playbook, rid)}
        pending = {}
        first = [r for r in run.playbook.rules if r.id in revising]
        rules = first + [r for r in rules if r.id not in revising]
        messages = prompts.build_messages(batch, rules, revising)
        while len(rules) > len(revising) and _prompt_chars(messages) > budget_chars:
            rules = rules[:-1]  # the least related rule goes first
            messages = prompts.build_messages(batch, rules, revising)
        # Long runs show progress: a bar on a terminal, else a line per batch (stderr,
        # through the CLI's logger; never both, a line would break the bar's).
        if len(batches) > 1 and progress is None:
            log.info(
                "distill batch %d of %d: %d episodes, %d context rules",
                number,
                len(batches),
                len(batch),
                len(rules),
            )
        ops, responses = complete_json(client, messages, model=model, parse=parse_operations, what=WHAT)
        run.usage = run.usage + total_usage(responses)
        run.calls += len(responses)
        run.batches.append((len(batch), len(rules), (_prompt_chars(messages) + 3) // 4))
        run.operations.extend(ops)
        sent = [ep.id for ep in batch]
        shown = set(sent) | {ep.id for eps in revising.values() for ep in eps}
        admitted, refused = shown_only(ops, shown, run.playbook, ledger)
        result = apply_operations(run.playbook, admitted, ledger)
        run.playbook = result.playbook
        run.changes.extend(result.changes)
        run.drops.extend(refused + result.drops)
        retry = to_retry(sent, ops, refused + result.drops, result.changes)
        run.left += [(ep, why) for ep, why in retry.items()]
        run.used.extend(ep for ep in sent if ep not in retry)
        sent_so_far += len(batch)
    if progress is not None:
        progress(sent_so_far, len(episodes))
    return run


def _active(playbook: pb.Playbook, rule_id: str) -> bool:
    rule = playbook.get(rule_id)
    return rule is not None and not rule.retired


SHOWN = "not sent to the model in this batch (it may cite only what it was shown, or what the rule cites)"


def shown_only(
    ops: list[Operation], sent: set[str], playbook: pb.Playbook, ledger: Collection[str]
) -> tuple[list[Operation], list[Drop]]:
    """Remove citations of episodes the model was not shown.

    An operation may cite the batch's episodes, or (updating, retiring or superseding a
    rule) the episodes that rule already cites. An ID outside the ledger is left for the
    gate, which reports it as invented. An operation left with no citation is dropped.
    """
    kept: list[Operation] = []
    drops: list[Drop] = []
    for op in ops:
        rule = playbook.get(canonical_rule_id(op.rule_id)) if op.rule_id and op.kind != "add" else None
        allowed = sent | set(rule.episode_ids if rule else ())
        op = _kept_map(_real_sentences(_seen_sentences(op, allowed, drops, rule), rule, drops), rule)
        unseen = tuple(ep for ep in dict.fromkeys(op.episode_ids) if ep in ledger and ep not in allowed)
        if not unseen:
            kept.append(op)
            continue
        rest = tuple(ep for ep in op.episode_ids if ep not in unseen)
        if rest or (op.kind == "retire" and op.replaced_by):
            drops.append(Drop(op.label(), SHOWN, unseen, whole=False))
            kept.append(replace(op, episode_ids=rest))
        else:
            drops.append(Drop(op.label(), f"its only citations are {SHOWN}", unseen, whole=True))
    return kept, drops


UNSEEN_SENTENCE = "a sentence attributed to an episode not sent to the model; the sentence is dropped"
UNSEEN_KEPT = "the rule's own sentence attributed to an episode not sent to the model; the sentence is kept"


def _seen_sentences(op: Operation, allowed: set[str], drops: list[Drop], rule: pb.Rule | None) -> Operation:
    """The model's sentence map checked (issue 25): a sentence attributed to an episode
    the model was not shown is dropped from the text, and reported; the others keep the
    episodes they name (a sentence the map leaves out: from the rule's citations). A
    sentence an updated rule already says keeps its words: only the attribution goes."""
    if not op.sources or not op.text:
        return op
    own = set(split_sentences(rule.text)) if rule is not None and op.kind == "update" else set()
    said = split_sentences(op.text)
    by_number = {source.number: source for source in op.sources}
    parts: list[tuple[str, tuple[str, ...], bool]] = []
    changed = False
    for number, sentence in enumerate(said, 1):
        source = by_number.get(number)
        if source is None:
            parts.append((sentence, (), True))
            continue
        unseen = tuple(ep for ep in source.episode_ids if ep not in allowed)
        if unseen:
            why = UNSEEN_KEPT if sentence in own else UNSEEN_SENTENCE
            drops.append(Drop(op.label(), f"{why}: {sentence!r}", unseen, whole=False))
            parts += [(sentence, (), True)] if sentence in own else []  # its old entry: _kept_map
            changed = True
            continue
        parts.append((sentence, source.episode_ids, True))
    if not changed:
        return op
    text, sources = build_text(parts)
    return replace(op, text=text or None, sources=sources)


def _real_sentences(op: Operation, rule: pb.Rule | None, drops: list[Drop]) -> Operation:
    """A map entry naming a sentence the text (an update's without one: the rule's) does
    not have is left out, and reported: it was ignored unsaid, and the model's account
    of its sentences was wrong."""
    if not op.sources:
        return op
    count = len(split_sentences(op.text or (rule.text if rule else "")))
    for source in (s for s in op.sources if s.number > count):
        why = f"sentences_from names sentence {source.number} ({', '.join(source.episode_ids)}), "
        why += f"but the text has {count}; that entry is left out"
        drops.append(Drop(op.label(), why, (), whole=False))
    kept = tuple(s for s in op.sources if s.number <= count)
    return op if len(kept) == len(op.sources) else replace(op, sources=kept)


def _kept_map(op: Operation, rule: pb.Rule | None) -> Operation:
    """An update's map speaks for the sentences it names: the rule's own entries for the
    sentences the new text keeps word for word, and the map leaves out or names the same
    episodes for, stay. They were erased (a sentence mapped to the episode that taught it
    became "from the rule's citations", the new episode among them), as was the whole map
    of a new text without one, and a restated entry lost its mark for the model's."""
    if op.kind != "update" or rule is None or not rule.sources or (op.sources is None and not op.text):
        return op
    old = split_sentences(rule.text)
    entries = {old[s.number - 1]: s for s in rule.sources if s.number <= len(old)}
    given = {s.number: s for s in op.sources or ()}
    sources: list[Source] = []
    for n, sentence in enumerate(split_sentences(" ".join((op.text or rule.text).split())), 1):
        entry, named = entries.get(sentence), given.get(n)
        if entry is not None and (named is None or set(named.episode_ids) == set(entry.episode_ids)):
            sources.append(Source(n, entry.episode_ids, entry.model))
        elif named is not None:
            sources.append(named)
    return op if tuple(sources) == (op.sources or ()) else replace(op, sources=tuple(sources))


def to_retry(
    sent: list[str], ops: list[Operation], drops: list[Drop], changes: list[Change]
) -> dict[str, str]:
    """The batch's episodes an operation dropped as a whole was about, unless a change
    that stands cites them: they stay undistilled, so the next run sends them again.
    A dropped operation citing none of the batch may have been about any of it."""
    dropped = {d.operation: d for d in drops if d.whole and not d.reason.startswith(NOTHING_TO_CHANGE)}
    if not dropped:
        return {}
    cited = {ep for change in changes for ep in change.episode_ids}
    batch = set(sent)
    retry: dict[str, str] = {}
    for op in ops:
        drop = dropped.get(op.label())
        if drop is None:
            continue
        about = [ep for ep in op.episode_ids if ep in batch] or sent
        for ep in about:
            if ep not in cited:
                retry.setdefault(
                    ep, f"an operation about it was dropped ({drop.operation}); retried next run"
                )
    return {ep: retry[ep] for ep in sent if ep in retry}
