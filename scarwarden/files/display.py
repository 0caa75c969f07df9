"""Text views of an episode and a rule, for a terminal, an agent or the demo.

Plain strings, no click: the library parts (the MCP tools, the semantic diff, the demo)
use them as well as the CLI. :func:`style` writes the same ANSI sequences as
``click.style``, so output is byte for byte what it was when the CLI styled it; the
CLI's ``click.echo`` still strips them when stdout is not a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: the episode and playbook modules pull in YAML, which the callers
    # that only style text (the semantic diff's renderer) do not need.
    from scarwarden.files.episodes import Episode
    from scarwarden.files.playbook import Rule
    from scarwarden.repo import MemoryRepo

#: Foreground colour codes, as click names them.
COLOURS = {
    "black": 30,
    "red": 31,
    "green": 32,
    "yellow": 33,
    "blue": 34,
    "magenta": 35,
    "cyan": 36,
    "white": 37,
    "reset": 39,
    "bright_black": 90,
    "bright_red": 91,
    "bright_green": 92,
    "bright_yellow": 93,
    "bright_blue": 94,
    "bright_magenta": 95,
    "bright_cyan": 96,
    "bright_white": 97,
}

#: Attribute -> (code when on, code when off), in the order click writes them.
_ATTRIBUTES = (
    ("bold", 1, 22),
    ("dim", 2, 22),
    ("underline", 4, 24),
    ("overline", 53, 55),
    ("italic", 3, 23),
    ("blink", 5, 25),
    ("reverse", 7, 27),
    ("strikethrough", 9, 29),
)

RESET = "\033[0m"


def style(text: str, fg: str | None = None, **attributes: bool | None) -> str:
    """``text`` in ANSI colour and attributes (``bold``, ``dim``, ``underline``, ...).

    The same bytes as ``click.style(text, fg=..., **attributes)``: an attribute given
    as False writes its "off" code, one left out (or None) writes nothing.
    """
    unknown = set(attributes) - {name for name, _, _ in _ATTRIBUTES}
    if unknown:
        raise TypeError(f"unknown text attribute(s): {', '.join(sorted(unknown))}")
    bits = []
    if fg is not None:
        bits.append(f"\033[{COLOURS[fg]}m")
    for name, on, off in _ATTRIBUTES:
        value = attributes.get(name)
        if value is not None:
            bits.append(f"\033[{on if value else off}m")
    return "".join(bits) + text + RESET


def format_episode(ep: Episode, repo: MemoryRepo | None = None, path: str | None = None) -> str:
    """An episode word for word, as stored (its YAML).

    Given the repository and the file's path, the file itself is shown, comments and
    layout included, as long as it still holds this very episode; otherwise (or
    without them) its canonical rendering.
    """
    if repo is not None and path is not None:
        from scarwarden.errors import ScarwardenError
        from scarwarden.files.episodes import parse_episode_bytes

        try:
            raw = (repo.root / path).read_bytes()
            if parse_episode_bytes(raw, path, episodes_dir=repo.episodes_rel).data == ep.data:
                return raw.decode("utf-8").rstrip("\n")
        except (OSError, ScarwardenError):
            pass
    return ep.render().rstrip("\n")


def format_rule(rule: Rule) -> str:
    """A rule for a terminal: its ID and title (bold), text, tags and citations."""
    lines = [style(f"{rule.id}: {rule.title}", bold=True)]
    if rule.retired:
        lines[0] += style("  (retired)", fg="yellow")
    lines.append(rule.text)
    lines.append(f"  tags: {', '.join(rule.tags) or '-'}")
    lines.append(f"  learnt in: {', '.join(rule.episode_ids)}")
    if rule.applies_to:
        lines.append(f"  applies to: {', '.join(rule.applies_to)}")
    if rule.retired:
        lines.append(f"  retired: {rule.reason}")
        if rule.replaced_by:
            lines.append(f"  replaced by: {rule.replaced_by}")
    return "\n".join(lines)
