"""The review as GitHub-flavoured markdown: a reviewer judges the change from it alone.

Episode text is untrusted (anyone who can write an episode writes it), so every piece
of it is escaped: markdown punctuation gets a backslash, ``<``/``>``/``&`` become
entities (no raw HTML reaches the page), and ``@`` cannot ping anybody.
"""

from __future__ import annotations

import re

from scarwarden.audit.diff.compare import DELETE, EQUAL, RuleChange, Segment
from scarwarden.audit.review.build import Review
from scarwarden.audit.review.given import markdown_lines
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode

_MD_INLINE = re.compile(r"([\\`*_\[\]|~])")
# What makes a line a heading, list item, quote, rule or table when it starts one.
_MD_LINE_START = re.compile(r"^(\s*)([#+=-]|\d+(?=[.)]))")
_HEADING = {
    "added": "added",
    "changed": "changed",
    "retired": "retired",
    "restored": "restored",
    "removed": "DELETED (not retired)",
}


def md(text: str) -> str:
    """Escape untrusted text for use inline in markdown."""
    text = _MD_INLINE.sub(r"\\\1", text)
    text = _MD_LINE_START.sub(
        lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)), text
    )
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("@", "&#64;")


def code(text: str) -> str:
    """``text`` as an inline code span no backtick inside it can close (a file name in
    a commit is as untrusted as an episode)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _quote(lines: list[str]) -> str:
    return "\n".join("> " + line if line else ">" for line in lines)


def _multiline(text: str) -> list[str]:
    return [md(line) for line in text.strip().split("\n")]


def _segments(segments: list[Segment]) -> str:
    out = []
    for seg in segments:
        if seg.op == EQUAL:
            out.append(md(seg.text))
            continue
        # Keep the markers tight around words: ~~ **  do not work across edge spaces.
        core = seg.text.strip()
        lead = seg.text[: len(seg.text) - len(seg.text.lstrip())]
        trail = seg.text[len(seg.text.rstrip()) :]
        mark = "~~" if seg.op == DELETE else "**"
        out.append(f"{lead}{mark}{md(core)}{mark}{trail}" if core else seg.text)
    return "".join(out)


def _rule_block(rule: pb.Rule) -> list[str]:
    lines = _multiline(rule.text) + [""]
    lines.append(
        "Tags: "
        + (", ".join(f"`{t}`" for t in rule.tags) or "none")
        + " · Learnt in: "
        + ", ".join(rule.episode_ids)
    )
    if rule.retired:
        lines.append(
            f"Retired: {md(rule.reason or '')}"
            + (f" · Replaced by: {rule.replaced_by}" if rule.replaced_by else "")
        )
    return lines


def episode_evidence(ep_id: str, ep: Episode | None, note: str = "") -> str:
    """One cited episode as a quote: who, when, task, action, outcome, correction."""
    suffix = f" *({note})*" if note else ""
    if ep is None:
        return _quote([f"**{ep_id}**{suffix}: NOT FOUND in the ledger at the head"])
    meta = [ep.at[:10]]
    if ep.get("agent"):
        meta.append(f"agent {md(str(ep.get('agent')))}")
    if ep.get("corrected_by"):
        meta.append(f"corrected by {md(str(ep.get('corrected_by')))}")
    lines = [f"**{ep_id}** · {' · '.join(meta)}{suffix}"]
    for key in ("task", "action", "outcome", "correction"):
        value = ep.get(key)
        if value:
            body = _multiline(str(value))
            lines.append(f"**{key.capitalize()}:** {body[0]}")
            lines += body[1:]
    return _quote(lines)


def _change_section(change: RuleChange, review: Review) -> list[str]:
    rule = change.current
    out = [f"#### {rule.id}: {md(rule.title)} ({_HEADING[change.kind]})", ""]
    if change.before is not None and change.kind != "added":
        out += ["**Before**", "", _quote(_rule_block(change.before)), ""]
    if change.kind == "retired" and change.after is not None:
        retired = change.after
        out += [
            f"**Retired:** {md(retired.reason or '')}"
            + (f" · **Replaced by:** {retired.replaced_by}" if retired.replaced_by else ""),
            "",
        ]
    elif change.after is not None:
        out += ["**After**" if change.before else "**New rule**", "", _quote(_rule_block(change.after)), ""]
    details = []
    if change.title:
        details.append("- Title: " + _segments(change.title))
    if change.text:
        details.append("- Text: " + _segments(change.text))
    if change.kind != "added":
        if change.tags_added or change.tags_removed:
            details.append(
                "- Tags: "
                + " ".join([f"+`{t}`" for t in change.tags_added] + [f"−`{t}`" for t in change.tags_removed])
            )
        if change.citations_added or change.citations_removed:
            details.append(
                "- Citations: "
                + " ".join(
                    [f"+{e}" for e in change.citations_added] + [f"−{e}" for e in change.citations_removed]
                )
            )
    if change.reason and change.kind != "retired":
        details.append("- Retirement reason: " + _segments(change.reason))
    if details:
        out += ["**What changed** (~~removed~~, **added**)", ""] + details + [""]
    out += _sentence_support(change, review)
    cited = list(change.after.episode_ids) if change.after and not change.after.retired else []
    shown = cited + [e for e in change.citations_removed if e not in cited]
    if shown:
        out += ["**Evidence**", ""]
        for ep_id in shown:
            note = (
                "new citation"
                if ep_id in change.citations_added and change.kind != "added"
                else "citation removed"
                if ep_id in change.citations_removed
                else ""
            )
            out += [episode_evidence(ep_id, review.evidence.get(ep_id), note), ""]
    return out


def _sentence_support(change: RuleChange, review: Review) -> list[str]:
    """Each new sentence beside the words its episodes share with it (issue 25): a
    reviewer sees at once a sentence no episode it names ever said."""
    from scarwarden.gate.support import supporting_words

    after = change.after
    if after is None or after.retired:
        return []
    old = {s.sentence for s in change.before.said()} if change.before is not None else set()
    lines: list[str] = []
    for said in after.said():
        if said.sentence in old:
            continue
        eps = [ep for ep in (review.evidence.get(e) for e in said.episode_ids) if ep is not None]
        shared = supporting_words(said.sentence, eps)
        where = "; ".join(
            f"{ep_id}: " + (", ".join(f"*{md(w)}*" for w in words) if words else "**no word in common**")
            for ep_id, words in shared
        )
        kind = {"stated": "", "model": " (written by a model)", "rule": " (from the rule's citations)"}
        lines.append(f"- {md(said.sentence)}{kind[said.kind]} ← {where or 'no episode found'}")
    return ["**New sentences and the episode words that support them**", "", *lines, ""] if lines else []


def render_markdown(review: Review) -> str:
    """The whole report."""
    diff = review.diff
    title = f"`{review.base.short}..{review.head.short}`"
    out = [f"## Scarwarden review: memory changes in {title}", ""]
    if review.gate_ok is None:
        gate = f"not run ({md(review.gate_note or 'unavailable')})"
    elif review.gate_ok:
        gate = "✅ passed"
    else:
        n = len(review.gate_problems())
        gate = f"❌ failed: {n} problem{'s' if n != 1 else ''}"
    counts = ", ".join(f"{n} {kind}" for kind, n in diff.counts().items() if n) or "none"
    out += [
        "| | |",
        "|---|---|",
        f"| Provenance gate | {gate} |",
        f"| Rules | {counts} |",
        f"| Episodes added to the ledger | {len(review.episodes_added)} |",
        f"| Reviewer warnings | {len(review.warnings)} |",
        "",
        f"Base: {md(review.base.label)} (`{review.base.short}`) · "
        f"head: {md(review.head.label)} (`{review.head.short}`)",
        "",
    ]
    summary = getattr(review.gate, "summary", None)
    if callable(summary):
        out += [f"Gate: {md(summary())}", ""]
    if review.gate_problems():
        out += ["### Gate problems", ""]
        for p in review.gate_problems():
            where = f"{code(p.file + (f':{p.line}' if p.line else ''))}: " if p.file else ""
            out.append(f"- ❌ {where}{md(p.message)}" + (f" (hint: {md(p.hint)})" if p.hint else ""))
        out.append("")
    if review.warnings:
        out += ["### Reviewer warnings", ""]
        icon = {"error": "❌", "warning": "⚠️", "notice": "ℹ️"}
        out += [f"- {icon.get(w.level, '⚠️')} {md(w.message)}" for w in review.warnings]
        out.append("")
    out += markdown_lines(review.given, md)
    out += ["### Rule changes", ""]
    if not diff.changes:
        out += ["No rule changed in this range.", ""]
    for change in diff.changes:
        out += _change_section(change, review)
    return "\n".join(out).rstrip("\n") + "\n"
