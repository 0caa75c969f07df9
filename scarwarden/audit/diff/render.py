"""Text renderings of playbook diffs: for a terminal, and for git's textconv driver.

Without colour, word changes are marked the way ``git diff --word-diff=plain`` marks
them (``[-old-]{+new+}``), so the output stays readable in a log file or a pipe.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from scarwarden.audit.diff.compare import DELETE, EQUAL, INSERT, PlaybookDiff, RuleChange, Segment
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.display import style
from scarwarden.files.episodes import Episode
from scarwarden.files.rule_ids import sort_key as rule_sort_key

_MARK = {"added": "+", "changed": "~", "retired": "-", "restored": "+", "removed": "!"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
Style = Callable[..., str]


def _styler(color: bool) -> Style:
    """ANSI styling when ``color``, else the text as it is. The library never imports
    click; :func:`scarwarden.files.display.style` writes the same sequences."""
    if not color:
        return lambda text, **_: text
    return style


def render_segments(segments: list[Segment], color: bool = False) -> str:
    style = _styler(color)
    out = []
    for seg in segments:
        if seg.op == EQUAL:
            out.append(seg.text)
        elif color:
            fg = "red" if seg.op == DELETE else "green"
            out.append(style(seg.text, fg=fg, underline=seg.op == INSERT, strikethrough=seg.op == DELETE))
        else:
            out.append(f"[-{seg.text}-]" if seg.op == DELETE else f"{{+{seg.text}+}}")
    return "".join(out)


def _indent(text: str, prefix: str = "    ") -> str:
    return textwrap.indent(text, prefix, lambda _: True)


def _list_change(label: str, added: tuple[str, ...], removed: tuple[str, ...], style: Style) -> str | None:
    if not added and not removed:
        return None
    parts = [style(f"+{x}", fg="green") for x in added]
    parts += [style(f"-{x}", fg="red") for x in removed]
    return f"{label}: {' '.join(parts)}"


def render_change(change: RuleChange, color: bool = False) -> str:
    """One rule's change, as a heading and indented details."""
    style = _styler(color)
    rule = change.current
    title = render_segments(change.title, color) if change.title else rule.title
    colour = {"added": "green", "restored": "green", "retired": "yellow", "removed": "red"}.get(
        change.kind, "cyan"
    )
    lines = [
        style(f"{_MARK[change.kind]} {rule.id}: ", fg=colour, bold=True)
        + style(title, bold=True)
        + style(f"  ({change.kind})", fg=colour)
    ]
    body: list[str] = []
    if change.kind == "added":
        body += [rule.text, f"tags: {', '.join(rule.tags)}", f"learnt in: {', '.join(rule.episode_ids)}"]
    elif change.kind == "removed":
        body.append(
            style(
                "removed from the playbook without being retired: rule IDs "
                "must stay on record under '## Retired'",
                fg="red",
            )
        )
    else:
        if change.text:
            body.append("text: " + render_segments(change.text, color))
        for item in (
            _list_change("tags", change.tags_added, change.tags_removed, style),
            _list_change("learnt in", change.citations_added, change.citations_removed, style),
        ):
            if item:
                body.append(item)
    after = change.after
    if after is not None and after.retired:
        if change.reason:
            body.append("retired: " + render_segments(change.reason, color))
        elif change.kind == "retired":
            body.append(f"retired: {after.reason}")
        if after.replaced_by and (change.before is None or change.before.replaced_by != after.replaced_by):
            body.append(f"replaced by: {after.replaced_by}")
    return "\n".join(lines + [_indent(b) for b in body])


def render_episode_quote(ep_id: str, ep: Episode | None, color: bool = False) -> str:
    """A newly cited episode's evidence: task, action, outcome, correction."""
    style = _styler(color)
    if ep is None:
        return style(f"  {ep_id}: NOT FOUND on the new side (the gate would reject this)", fg="red")
    meta = [ep.at[:10]] + [f"{k} {ep.get(k)}" for k in ("agent", "corrected_by") if ep.get(k)]
    lines = [style(f"  {ep_id}", bold=True) + f"  ({', '.join(meta)})"]
    for key in ("task", "action", "outcome", "correction"):
        value = ep.get(key)
        if value:
            lines.append(_indent(f"{key}: {' '.join(str(value).split())}"))
    return "\n".join(lines)


def render_text(diff: PlaybookDiff, color: bool = False) -> str:
    """The whole diff for a terminal: a header, each rule's change, quoted evidence."""
    style = _styler(color)
    header = style(f"Playbook: {diff.old.label} -> {diff.new.label}", bold=True)
    if not diff.changes:
        return f"{header}\nno rule changed\n"
    counts = ", ".join(f"{n} {kind}" for kind, n in diff.counts().items() if n)
    blocks = [f"{header}\n{counts}"]
    blocks += [render_change(c, color) for c in diff.changes]
    if diff.episodes:
        quotes = [render_episode_quote(ep_id, ep, color) for ep_id, ep in diff.episodes.items()]
        blocks.append(style("Newly cited episodes", bold=True) + "\n" + "\n".join(quotes))
    return "\n\n".join(blocks) + "\n"


# -- git textconv --------------------------------------------------------------------------


def textconv_rule(rule: pb.Rule) -> list[str]:
    """One rule as lines that each carry the rule's ID, so every hunk says whose it is."""
    status = "  [retired]" if rule.retired else ""
    lines = [f"{rule.id}: {rule.title}{status}"]
    for paragraph in rule.text.split("\n"):
        lines += [f"{rule.id} | {s}" for s in _SENTENCE.split(paragraph.strip()) if s]
    lines += [f"{rule.id} tag: {t}" for t in rule.tags]
    lines += [f"{rule.id} learnt in: {e}" for e in rule.episode_ids]
    if rule.retired:
        lines.append(f"{rule.id} retired: {rule.reason}")
        if rule.replaced_by:
            lines.append(f"{rule.id} replaced by: {rule.replaced_by}")
    return lines


def render_textconv(text: str, source: str = "memory/playbook.md") -> str:
    """The rule-by-rule rendering git diffs when the textconv driver is set up.

    Active and retired rules are listed together by number, so retiring a rule shows
    as its status line changing (not as the whole rule moving to another section), a
    new citation as one ``learnt in`` line, and a reworded sentence as one line. A
    playbook that does not parse is shown as it is, under a note, so ``git diff``
    never breaks.
    """
    try:
        playbook = pb.parse(text, source=source)
    except ValidationError as exc:
        first = exc.problems[0] if exc.problems else None
        note = f"# scarwarden: this playbook does not parse ({first or exc.message})"
        return note + "\n" + text + ("" if text.endswith("\n") else "\n")
    rules = sorted(playbook.all_rules(), key=lambda r: rule_sort_key(r.id))
    blocks = []
    if playbook.preamble.strip():
        blocks.append(playbook.preamble.strip("\n"))
    blocks += ["\n".join(textconv_rule(rule)) for rule in rules]
    return "\n\n".join(blocks) + "\n" if blocks else ""
