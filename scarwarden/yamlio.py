"""The one place YAML is read or written.

Loading uses libyaml's C loader when PyYAML was built with it (10x faster than the
pure-Python one here) and always the *safe* constructors. Anchors and aliases are
refused outright: an episode never needs them, and refusing them closes the
"billion laughs" alias bomb before anything is expanded.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml

from scarwarden.errors import Problem, ValidationError

SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _mark_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return None if mark is None else int(mark.line) + 1


def _refuse_aliases(text: str | bytes, source: str) -> None:
    for event in yaml.parse(text, Loader=SafeLoader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor is not None:
            line = int(event.start_mark.line) + 1 if event.start_mark else None
            raise ValidationError(
                f"{source}: YAML anchors and aliases are not allowed",
                problems=[Problem("anchors/aliases (&name, *name) are refused, "
                                  "to rule out alias bombs", file=source, line=line,
                                  hint="write the value out in full")],
            )


def load(data: str | bytes, *, source: str = "<input>") -> Any:
    """Parse one YAML document safely; errors name the source and the line."""
    try:
        # '&' and '*' are rare in prose; only then pay for an event scan.
        if ("*" in data or "&" in data) if isinstance(data, str) else (
                b"*" in data or b"&" in data):
            _refuse_aliases(data, source)
        return yaml.load(data, Loader=SafeLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        line = _mark_line(exc)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValidationError(
            f"{source}: not valid YAML",
            problems=[Problem(str(reason), file=source, line=line,
                              hint="check indentation and quoting near that line")],
        ) from None


def load_all(data: str | bytes, *, source: str = "<input>") -> list[Any]:
    """Parse a stream of YAML documents (``---`` separated)."""
    try:
        if ("*" in data or "&" in data) if isinstance(data, str) else (
                b"*" in data or b"&" in data):
            _refuse_aliases(data, source)
        return list(yaml.load_all(data, Loader=SafeLoader))  # noqa: S506
    except yaml.YAMLError as exc:
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValidationError(
            f"{source}: not valid YAML",
            problems=[Problem(str(reason), file=source, line=_mark_line(exc))],
        ) from None


class _EpisodeDumper(yaml.SafeDumper):
    """Block mapping, flow lists, literal blocks for multi-line text, no wrapping."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _list_representer(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _datetime_representer(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.ScalarNode:
    text = value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)


_EpisodeDumper.add_representer(str, _str_representer)
_EpisodeDumper.add_representer(list, _list_representer)
_EpisodeDumper.add_representer(dt.datetime, _datetime_representer)


def dump_mapping(data: dict[str, Any]) -> str:
    """Render a mapping in the stable episode style (keys in the given order)."""
    return yaml.dump(
        data,
        Dumper=_EpisodeDumper,
        sort_keys=False,
        allow_unicode=True,
        width=10**9,
        default_flow_style=False,
    )
