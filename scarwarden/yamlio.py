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
from typing import TYPE_CHECKING, Any

from scarwarden.errors import Problem, ValidationError

if TYPE_CHECKING:
    import yaml


@functools.cache
def _safe_loader() -> type:
    """libyaml's C safe loader when PyYAML was built with it, else the Python one."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _mark_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return None if mark is None else int(mark.line) + 1


def _refuse_aliases(text: str | bytes, source: str) -> None:
    import yaml

    for event in yaml.parse(text, Loader=_safe_loader()):
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


def _needs_scan(data: str | bytes) -> tuple[bool, bool]:
    """(may hold anchors/aliases, may nest deeply): cheap substring counts only."""
    if isinstance(data, str):
        aliases = "*" in data or "&" in data
        openers = data.count("[") + data.count("{") + data.count("- ")
    else:
        aliases = b"*" in data or b"&" in data
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
        line = _mark_line(exc)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValidationError(
            f"{source}: not valid YAML",
            problems=[
                Problem(
                    str(reason), file=source, line=line, hint="check indentation and quoting near that line"
                )
            ],
        ) from None


def load_all(data: str | bytes, *, source: str = "<input>") -> list[Any]:
    """Parse a stream of YAML documents (``---`` separated)."""
    import yaml

    try:
        _guard(data, source)
        return list(yaml.load_all(data, Loader=_safe_loader()))  # noqa: S506
    except yaml.YAMLError as exc:
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValidationError(
            f"{source}: not valid YAML",
            problems=[Problem(str(reason), file=source, line=_mark_line(exc))],
        ) from None


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
    text = value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)


@functools.cache
def _episode_dumper() -> type:
    """The dumper class, built on first use (it subclasses PyYAML's)."""
    import yaml

    class EpisodeDumper(yaml.SafeDumper):
        """Block mapping, flow lists, literal blocks for multi-line text, no wrapping."""

    EpisodeDumper.add_representer(str, _str_representer)
    EpisodeDumper.add_representer(list, _list_representer)
    EpisodeDumper.add_representer(dt.datetime, _datetime_representer)
    return EpisodeDumper


def dump_mapping(data: dict[str, Any]) -> str:
    """Render a mapping in the stable episode style (keys in the given order)."""
    import yaml

    return yaml.dump(
        data,
        Dumper=_episode_dumper(),
        sort_keys=False,
        allow_unicode=True,
        width=10**9,
        default_flow_style=False,
    )
