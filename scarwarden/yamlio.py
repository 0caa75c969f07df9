"""The one place YAML is read or written.

Loading uses libyaml's C loader when PyYAML was built with it (10x faster than the
pure-Python one here) and always the *safe* constructors. Anchors and aliases are
refused outright: an episode never needs them, and refusing them closes the
"billion laughs" alias bomb before anything is expanded.

PyYAML is imported inside the functions that parse or write YAML, never at import
time: ``scarwarden recall`` on a current index, which reaches this module through the
episode and playbook models, parses no YAML and should not pay ~8 ms to load a parser.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

from scarwarden.errors import Problem, ValidationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import yaml


@functools.cache
def _safe_loader() -> type:
    """libyaml's C safe loader when PyYAML was built with it, else the Python one,
    made strict: duplicate keys and merge keys (``<<``) are refused with their line,
    and a date or time that does not exist is a YAML error, not a ``ValueError``.

    YAML itself says keys are unique, but PyYAML keeps the last of two silently
    (``task: first`` then ``task: second`` stored ``second``); a merge key hides
    fields in another mapping. Both are refused rather than guessed at (issue 16).
    """
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[valid-type,misc]
        def flatten_mapping(self, node: yaml.MappingNode) -> None:
            for key_node, _value in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise _Refused(
                        "merge keys ('<<') are not allowed",
                        key_node.start_mark,
                        "write every key out in the mapping itself",
                    )
            super().flatten_mapping(node)

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
            seen: dict[tuple[str, str], int] = {}
            for key_node, _value in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        raise _Refused(
                            f"duplicate key '{key_node.value}' (first on line {seen[key]})",
                            key_node.start_mark,
                            "give each key once; YAML keeps only one of them",
                        )
                    seen[key] = int(key_node.start_mark.line) + 1
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except (ValueError, OverflowError) as exc:  # 2026-13-45, 2026-02-30
                raise _Refused(
                    f"{node.value!r} is not a real date or time ({exc})",
                    node.start_mark,
                    "fix the date, or quote it to keep it as text",
                ) from None

    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp)
    return StrictLoader


def _Refused(problem: str, mark: Any, hint: str) -> yaml.YAMLError:  # noqa: N802 - raised like a class
    """A YAML feature we refuse, with the line it is on and how to write it instead."""
    import yaml

    exc = yaml.constructor.ConstructorError(problem=problem, problem_mark=mark)
    exc.hint = hint  # type: ignore[attr-defined]
    return exc


def _mark_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return None if mark is None else int(mark.line) + 1


def _refuse_aliases(text: str | bytes, source: str) -> None:
    """Refuse anchors, aliases and explicit tags (``!!str``, ``!!python/...``, ``!x``).

    A tag changes what a value is behind the reader's back (``!!str 5``, ``!!binary``)
    and nothing in an episode needs one; anchors and aliases are refused for bombs.
    """
    import yaml

    for event in yaml.parse(text, Loader=_safe_loader()):
        tag = getattr(event, "tag", None)
        if tag is not None and not isinstance(event, (yaml.DocumentStartEvent, yaml.DocumentEndEvent)):
            line = int(event.start_mark.line) + 1 if event.start_mark else None
            raise ValidationError(
                f"{source}: YAML tags are not allowed",
                problems=[
                    Problem(
                        f"the tag {tag!r} is refused: a value is what it looks like, nothing else",
                        file=source,
                        line=line,
                        hint="drop the tag; quote the value to keep it as text",
                    )
                ],
            )
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor is not None:
            line = int(event.start_mark.line) + 1 if event.start_mark else None
            raise ValidationError(
                f"{source}: YAML anchors and aliases are not allowed",
                problems=[
                    Problem(
                        "anchors/aliases (&name, *name) are refused, to rule out alias bombs",
                        file=source,
                        line=line,
                        hint="write the value out in full",
                    )
                ],
            )


#: Deepest nesting of collections accepted. An episode needs two levels; libyaml's
#: composer recurses in C and segfaults at ~25,000 levels (50 KB of '['), and the
#: pure-Python one raises RecursionError long before that.
MAX_DEPTH = 64
#: Below this many collection openers the nesting cannot reach MAX_DEPTH's danger zone
#: cheaply enough to matter, so ordinary files skip the event scan.
_DEPTH_SCAN_AT = 200


#: A '!' where a tag could start (after a space, a flow indicator or at a line's start):
#: "Great!" in a sentence does not make a file pay for the event scan.
_TAG_START = re.compile(r"(?:^|[\s\[{,:?-])!", re.MULTILINE)
_TAG_START_B = re.compile(rb"(?:^|[\s\[{,:?-])!", re.MULTILINE)


def _needs_scan(data: str | bytes) -> tuple[bool, bool]:
    """(may hold anchors/aliases/tags, may nest deeply): cheap substring counts only."""
    if isinstance(data, str):
        aliases = "*" in data or "&" in data or _TAG_START.search(data) is not None
        openers = data.count("[") + data.count("{") + data.count("- ")
    else:
        aliases = b"*" in data or b"&" in data or _TAG_START_B.search(data) is not None
        openers = data.count(b"[") + data.count(b"{") + data.count(b"- ")
    return aliases, openers > _DEPTH_SCAN_AT


def _too_deep(source: str, line: int | None) -> ValidationError:
    return ValidationError(
        f"{source}: YAML nested more than {MAX_DEPTH} levels deep",
        problems=[
            Problem(
                f"collections nested over {MAX_DEPTH} levels are refused",
                file=source,
                line=line,
                hint="an episode is a flat mapping with short lists",
            )
        ],
    )


def _refuse_deep(text: str | bytes, source: str) -> None:
    import yaml

    depth = 0
    try:
        for event in yaml.parse(text, Loader=_safe_loader()):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    line = int(event.start_mark.line) + 1 if event.start_mark else None
                    raise _too_deep(source, line)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        # PyYAML >= 6.0.4 has a nesting limit of its own in the parser: same refusal,
        # same message, whichever limit trips first.
        if "nesting" in str(getattr(exc, "problem", "") or exc):
            raise _too_deep(source, _mark_line(exc)) from None
        raise


def _guard(data: str | bytes, source: str) -> None:
    aliases, deep = _needs_scan(data)
    if aliases:
        _refuse_aliases(data, source)
    if deep:
        _refuse_deep(data, source)


def load(data: str | bytes, *, source: str = "<input>") -> Any:
    """Parse one YAML document safely; errors name the source and the line.

    Anchors/aliases (alias bombs) and absurd nesting (a stack overflow in libyaml's
    composer) are refused before anything is built.
    """
    import yaml

    try:
        _guard(data, source)
        return yaml.load(data, Loader=_safe_loader())  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise _invalid(exc, source) from None


def _invalid(exc: yaml.YAMLError, source: str) -> ValidationError:
    """The refusal of a YAML error: its reason, its line and a hint."""
    reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    hint = getattr(exc, "hint", None) or "check indentation and quoting near that line"
    headline = "refused YAML" if hasattr(exc, "hint") else "not valid YAML"
    return ValidationError(
        f"{source}: {headline}",
        problems=[Problem(str(reason), file=source, line=_mark_line(exc), hint=hint)],
    )


def load_all(data: str | bytes, *, source: str = "<input>") -> list[Any]:
    """Parse a stream of YAML documents (``---`` separated)."""
    import yaml

    try:
        _guard(data, source)
        return list(yaml.load_all(data, Loader=_safe_loader()))  # noqa: S506
    except yaml.YAMLError as exc:
        raise _invalid(exc, source) from None


def key_lines(data: str | bytes) -> list[tuple[int, dict[str, int]]]:
    """Where each mapping starts and where each of its keys is (1-based lines).

    For a mapping document: one entry; for a list of mappings: one per item. Only
    called on the error path (to put a line on a problem), so composing the document
    a second time costs nothing on the hot path. Returns ``[]`` if it cannot tell.
    """
    import yaml

    try:
        _guard(data, "<input>")
        node = yaml.compose(data, Loader=_safe_loader())
    except (yaml.YAMLError, ValidationError):
        return []
    if isinstance(node, yaml.SequenceNode):
        items = list(node.value)
    elif node is None:
        return []
    else:
        items = [node]
    out: list[tuple[int, dict[str, int]]] = []
    for item in items:
        keys: dict[str, int] = {}
        if isinstance(item, yaml.MappingNode):
            for key_node, _value in item.value:
                if isinstance(key_node, yaml.ScalarNode):
                    keys.setdefault(str(key_node.value), int(key_node.start_mark.line) + 1)
        out.append((int(item.start_mark.line) + 1, keys))
    return out


#: Characters YAML reads as line breaks although PyYAML writes them raw with
#: ``allow_unicode``: a value holding one is double-quoted, where they are escaped.
_BREAKS = ("\x85", "\u2028", "\u2029")


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if any(ch in value for ch in _BREAKS):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _list_representer(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _datetime_representer(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.ScalarNode:
    utc = value.astimezone(dt.timezone.utc)
    # Not strftime('%Y'): it writes year 1 as "1", which does not read back as a time.
    text = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)


@functools.cache
def _episode_dumper(display: bool = False) -> type:
    """The dumper class, built on first use (it subclasses PyYAML's; for ``display``,
    libyaml's C emitter where there is one)."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper) if display else yaml.SafeDumper

    class EpisodeDumper(base):  # type: ignore[valid-type,misc]
        """Block mapping, flow lists, literal blocks for multi-line text, no wrapping."""

    EpisodeDumper.add_representer(str, _str_representer)
    EpisodeDumper.add_representer(list, _list_representer)
    EpisodeDumper.add_representer(dt.datetime, _datetime_representer)
    return EpisodeDumper


def dump_mapping(data: dict[str, Any], *, display: bool = False) -> str:
    """Render a mapping in the stable episode style (keys in the given order).

    ``display``: for a page that shows the text, never for a file: libyaml's C emitter,
    ~6x faster (``audit --html`` renders every episode) and the same text on every
    episode measured (10k generated ones, the demo's, multi-line and quoted values),
    but the stored form is defined by the Python emitter."""
    import yaml

    return yaml.dump(
        data,
        Dumper=_episode_dumper(display),
        sort_keys=False,
        allow_unicode=True,
        width=10**9,
        default_flow_style=False,
    )
