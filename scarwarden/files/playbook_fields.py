"""One playbook rule's field lines, checked (:mod:`scarwarden.files.playbook_parse`
splits the file into rules and calls these): '- Tags:', '- Learnt in:', '- Applies to:'
and '- Sentences from:'. Each reports its problems through ``bad`` and says whether the
field was valid."""

from __future__ import annotations

from collections.abc import Callable

from scarwarden.files import playbook_sentences as sentences
from scarwarden.files.episode_fields import EPISODE_ID_RE, tag_problem
from scarwarden.files.playbook_model import APPLIES_TO

#: ``bad(line, message, hint=None, fld=None)``: records one problem.
Bad = Callable[..., None]


def split_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def sources_of(
    rule_id: str, values: dict[str, tuple[int, str]], text: str, cited: list[str], bad: Bad
) -> tuple[tuple[sentences.Source, ...], bool]:
    """'- Sentences from: 1: ep-a; 2: ep-b' (issue 25): each sentence's episodes, all of
    them cited by the rule."""
    if "sources" not in values:
        return (), True
    number, raw = values["sources"]
    sources, problem = sentences.parse(raw)
    found = [problem] if problem else sentences.problems(text, sources, cited)
    for message in found:
        bad(
            number,
            f"{rule_id}: {message}",
            "cite the episode in '- Learnt in:' if it taught the sentence, or name the one that did "
            "in '- Sentences from:' (drop the line to mean: from the rule's citations)",
            "Sentences from",
        )
    return sources, not found


def applies_to_of(rule_id: str, values: dict[str, tuple[int, str]], bad: Bad) -> tuple[tuple[str, ...], bool]:
    """'- Applies to: images' (issue 19): what the rule is about, from a closed list."""
    if "applies_to" not in values:
        return (), True
    number, raw = values["applies_to"]
    kinds = [k.strip() for k in raw.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in APPLIES_TO]
    if unknown or not kinds:
        bad(
            number,
            f"{rule_id}: 'Applies to' names {unknown[0] if unknown else 'nothing'!r}",
            "write '- Applies to: images' for a rule about images, or drop the line",
            "Applies to",
        )
        return (), False
    return tuple(dict.fromkeys(kinds)), True


def tags_of(rule_id: str, values: dict[str, tuple[int, str]], bad: Bad) -> tuple[list[str], bool]:
    """The distinct tags of '- Tags:', and whether every one is a slug."""
    tags: list[str] = []
    ok = True
    if "tags" in values:
        number, raw = values["tags"]
        for tag in split_list(raw):
            problem = tag_problem(tag, bounded=False)  # the bound is the doors': rule add, distill
            if problem is not None:
                bad(number, f"{rule_id}: {problem[0]}", problem[1], "Tags")
                ok = False
            elif tag not in tags:
                tags.append(tag)
    return tags, ok


def episode_ids_of(
    rule_id: str, values: dict[str, tuple[int, str]], bad: Bad, ok: bool
) -> tuple[list[str], bool]:
    """The distinct IDs of '- Learnt in:', and ``ok`` updated. An empty list is reported
    only when nothing else was wrong (``ok`` so far): it is the least specific problem."""
    episode_ids: list[str] = []
    if "episode_ids" in values:
        number, raw = values["episode_ids"]
        for ep in split_list(raw):
            if not EPISODE_ID_RE.match(ep):
                bad(number, f"{rule_id}: {ep!r} is not an episode ID", None, "Learnt in")
                ok = False
            elif ep not in episode_ids:
                episode_ids.append(ep)
        if not episode_ids and ok:
            bad(
                number,
                f"{rule_id}: 'Learnt in' cites no episode (no provenance, no rule)",
                "cite at least one episode ID",
                "Learnt in",
            )
            ok = False
    return episode_ids, ok
