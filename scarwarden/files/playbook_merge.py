"""A three-way merge of ``memory/playbook.md`` by rule, not by line (git's merge driver).

Two branches that each teach the agent something touch the same file in the same place
(new rules go at the end of the active section), so git's line merge stops with a
conflict even when the rule sets are disjoint. Merging by rule ID instead:

- a rule new on either side is kept (both sides' new rules: ours first, then theirs);
- a rule changed on one side only takes that side;
- a rule changed on both sides: tags and citations are unioned, and title, text and the
  retirement fields each merge when one side left them alone; otherwise that rule alone
  carries conflict markers, which the parser (and so the gate) refuses with "resolve
  the conflict in PB-...";
- retired on one side and updated on the other: a conflict in that rule.

The result is written into our side as its user keeps it: the rules that changed spliced
into our file (``playbook.spliced``: its line endings and spacing kept, as ``rule add``
and ``distill`` write), a conflict in our line endings. When a side does not parse (conflict markers left
from an earlier merge, hand edits gone wrong) the caller falls back to git's line merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scarwarden.files import playbook as pb

#: Git's own conflict markers, which a parser recognises (see ``playbook_parse``).
OURS_MARKER = "<<<<<<< ours"
SPLIT_MARKER = "======="
THEIRS_MARKER = ">>>>>>> theirs"


@dataclass
class MergeResult:
    text: str
    #: Rule IDs (or "preamble") that carry conflict markers.
    conflicts: list[str] = field(default_factory=list)
    #: The merged playbook, when the merge is clean.
    book: pb.Playbook | None = None

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _merge_value(base: object, ours: object, theirs: object) -> tuple[object, bool]:
    """(merged value, clean): the side that changed, or a clash."""
    if ours == theirs or theirs == base:
        return ours, True
    if ours == base:
        return theirs, True
    return ours, False


def _union(*lists: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for items in lists for item in items))


def merge_rule(base: pb.Rule | None, ours: pb.Rule | None, theirs: pb.Rule | None) -> pb.Rule | None | bool:
    """The merged rule, ``None`` when it is gone on the merged side, ``False`` on a clash."""
    if ours == theirs:
        return ours
    if ours is None or theirs is None:
        # Added on one side only; or deleted on one side (the gate forbids deletion, but a
        # merge must still decide): a deletion wins over nothing, not over a change.
        if base is None:
            return ours or theirs
        kept = ours or theirs
        return None if kept == base else False
    if base is None:
        return False  # one ID, two different rules
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    if ours.retired != theirs.retired:
        return False  # retired on one side, updated on the other
    fields: dict[str, Any] = {}
    for name in ("title", "text", "reason", "replaced_by", "sources"):
        value, clean = _merge_value(getattr(base, name), getattr(ours, name), getattr(theirs, name))
        if not clean:
            return False
        fields[name] = value
    return replace(
        ours,
        **fields,
        tags=_union(ours.tags, theirs.tags),
        episode_ids=_union(ours.episode_ids, theirs.episode_ids),
    )


def merge_playbooks(base: pb.Playbook, ours: pb.Playbook, theirs: pb.Playbook) -> MergeResult:
    """Merge three parsed playbooks; the text, with markers around any clashing rule."""
    # By ID in dicts: Playbook.get reads the rules in turn, and a merge of 20,000 rules
    # asking it for each took minutes. Base's last: a rule deleted on both sides.
    in_base, in_ours, in_theirs = ({rule.id: rule for rule in b.all_rules()} for b in (base, ours, theirs))
    order = list(dict.fromkeys([*in_ours, *in_theirs, *in_base]))
    merged: dict[str, pb.Rule] = {}
    clashes: dict[str, tuple[pb.Rule | None, pb.Rule | None]] = {}
    for rule_id in order:
        outcome = merge_rule(in_base.get(rule_id), in_ours.get(rule_id), in_theirs.get(rule_id))
        if outcome is False:
            clashes[rule_id] = (in_ours.get(rule_id), in_theirs.get(rule_id))
        elif isinstance(outcome, pb.Rule):
            merged[rule_id] = outcome
    preamble, preamble_clean = _merge_value(base.preamble, ours.preamble, theirs.preamble)
    # A clashing rule stands in its section as a placeholder, swapped for markers below.
    placeholders = {rule_id: _placeholder(rule_id, sides) for rule_id, sides in clashes.items()}
    everything = [merged.get(rule_id) or placeholders.get(rule_id) for rule_id in order]
    book = pb.Playbook(
        rules=tuple(r for r in everything if r is not None and not r.retired),
        retired=tuple(r for r in everything if r is not None and r.retired),
        preamble=str(preamble) if preamble_clean else "\x00preamble",
    )
    text = pb.render(book)
    conflicts = list(clashes)
    if not preamble_clean:
        conflicts.insert(0, "preamble")
        text = text.replace("\x00preamble", _markers(ours.preamble.strip("\n"), theirs.preamble.strip("\n")))
    for rule_id, (mine, other) in clashes.items():
        stand_in = placeholders[rule_id]
        text = text.replace(_block(stand_in), _markers(_block(mine), _block(other)))
    return MergeResult(text, conflicts, None if conflicts else book)


def _placeholder(rule_id: str, sides: tuple[pb.Rule | None, pb.Rule | None]) -> pb.Rule:
    """A rule that renders to a unique block where the clash will stand (in our section)."""
    template = sides[0] or sides[1]
    assert template is not None
    return replace(template, title=f"\x00clash {rule_id}")


def _block(rule: pb.Rule | None) -> str:
    """The rendered lines of one rule, as :func:`pb.render` writes it ("" if absent)."""
    if rule is None:
        return "(deleted on this side)"
    text = pb.render(pb.Playbook(rules=(), retired=(rule,)) if rule.retired else pb.Playbook(rules=(rule,)))
    body = text.split("\n\n", 1)[1]  # past the title
    if rule.retired:
        body = body.split("\n\n", 1)[1]  # past '## Retired'
    return body.rstrip("\n")


def _markers(mine: str, other: str) -> str:
    return f"{OURS_MARKER}\n{mine}\n{SPLIT_MARKER}\n{other}\n{THEIRS_MARKER}"


def merge_texts(base: str, ours: str, theirs: str) -> MergeResult | None:
    """Merge three playbook texts by rule; ``None`` when one does not parse (the caller
    falls back to a line merge). An empty base (a file added on both sides) is empty.
    The text is ``ours`` with the merge spliced in, in its line endings."""
    from scarwarden.errors import ValidationError

    try:
        base_book = pb.parse(pb.universal_newlines(base)) if base.strip() else pb.Playbook()
        ours_book = pb.parse(pb.universal_newlines(ours))
        theirs_book = pb.parse(pb.universal_newlines(theirs))
    except ValidationError:
        return None
    result = merge_playbooks(base_book, ours_book, theirs_book)
    if result.book is not None:
        # A rule retired by theirs goes after the rules we retired before, as distill
        # puts it (the splice keeps our bytes only for a change placed that way).
        before = {rule.id: n for n, rule in enumerate(ours_book.retired)}
        retired = sorted(result.book.retired, key=lambda rule: before.get(rule.id, len(before)))
        book = replace(result.book, retired=tuple(retired))
        return replace(result, text=pb.spliced(ours, ours_book, book), book=book)
    crlf = ours.split("\n", 1)[0].endswith("\r")  # the file's first line, as the splice reads it
    return replace(result, text=result.text.replace("\n", "\r\n")) if crlf else result


def run_merge_driver(base: Path, ours: Path, theirs: Path) -> MergeResult:
    """What git's merge driver does (``%O %A %B``): merge into ``ours`` by rule and
    return the result. When a side does not parse, git's line merge writes its result
    (markers and all) into ``ours`` instead; its conflicts are then reported as "lines"."""
    from scarwarden.files.atomic import atomic_write
    from scarwarden.git.merge import merge_file
    from scarwarden.regular_files import read_regular

    try:  # read_regular: a FIFO or device given by hand is refused, not waited on
        texts = [read_regular(path).decode("utf-8") for path in (base, ours, theirs)]
    except UnicodeDecodeError:
        texts = []
    result = merge_texts(*texts) if texts else None
    if result is None:
        clean = merge_file(ours, base, theirs)
        return MergeResult(ours.read_text(encoding="utf-8", errors="replace"), [] if clean else ["lines"])
    atomic_write(ours, result.text.encode("utf-8"))
    return result
