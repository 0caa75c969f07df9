"""Episodes: the append-only ground truth.

One function, :func:`parse_episode_bytes`, validates a stored episode file's bytes; the
CLI, the index and the pre-commit gate all go through it, so they can never disagree
about what a valid episode is. User input (flags, a file, an import) is read and turned
into a stored episode by :mod:`scarwarden.files.episode_input`, which builds on this
module (never the reverse).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from scarwarden import yamlio
from scarwarden.errors import Problem, ValidationError
from scarwarden.files.episode_fields import (
    CONTENT_FIELDS,
    EPISODE_ID_RE,
    FIELD_ORDER,
    LIST_FIELDS,
    MAX_EPISODE_BYTES,
    RULE_ID_RE,
    SOURCES,
    TAG_RE,
    TEXT_FIELDS,
    expected_relpath,
    mint_id,
)
from scarwarden.files.episode_validate import validate_mapping
from scarwarden.records import field, record, replace
from scarwarden.times import format_at, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONTENT_FIELDS",
    "EPISODE_ID_RE",
    "FIELD_ORDER",
    "LIST_FIELDS",
    "MAX_EPISODE_BYTES",
    "RULE_ID_RE",
    "SOURCES",
    "TAG_RE",
    "TEXT_FIELDS",
    "Episode",
    "expected_relpath",
    "format_at",
    "locate",
    "mint_id",
    "parse_episode_bytes",
    "render_episode",
    "utc_now",
    "utf8_error",
    "validate_mapping",
]


@record(frozen=True)
class Episode:
    """A validated episode. ``data`` holds the stored keys in canonical order; ``text``,
    when the validation rendered it (to measure it against the size cap), its canonical
    YAML, so a batch is not rendered twice (PyYAML's emitter: a quarter of a 4,000-episode
    add). Made from other data (a new ID, a redaction's stub), an episode has none."""

    data: dict[str, Any]
    text: str | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def at(self) -> str:
        return str(self.data["at"])

    @property
    def task(self) -> str:
        return str(self.data["task"])

    @property
    def tags(self) -> list[str]:
        return list(self.data.get("tags") or [])

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def relpath(self, episodes_dir: str = "memory/episodes") -> str:
        """Where this episode lives, relative to the repository root."""
        return expected_relpath(self.id, self.at, episodes_dir)

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)

    def render(self, *, display: bool = False) -> str:
        """The canonical YAML text (``display``: for a page, see :func:`render_episode`)."""
        if self.text is not None and not display:
            return self.text
        return render_episode(self.data, display=display)


def locate(problems: list[Problem], where: tuple[int, dict[str, int]] | None) -> list[Problem]:
    """Put line numbers on problems: the key's line, else where the episode starts."""
    if where is None:
        return problems
    start, keys = where
    return [p if p.line is not None else replace(p, line=keys.get(p.field or "", start)) for p in problems]


def render_episode(data: Mapping[str, Any], *, display: bool = False) -> str:
    """The canonical YAML text of an episode (keys in :data:`FIELD_ORDER`); with
    ``display``, rendered faster for a page (``yamlio.dump_mapping``), never for a file."""
    payload: dict[str, Any] = {}
    for key, value in data.items():
        if key == "at":
            payload[key] = dt.datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=dt.timezone.utc
            )
        else:
            payload[key] = value
    return yamlio.dump_mapping(payload, display=display)


def parse_episode_bytes(raw: bytes, path: str | None = None, *, episodes_dir: str | None = None) -> Episode:
    """Validate one stored episode file and return it.

    ``path`` is the file's path relative to the repository (for messages and to check
    that the name and folder agree with the ID and date; the check needs
    ``episodes_dir``). Raises :class:`ValidationError` listing every problem found.
    """
    source = path or "<episode>"
    if len(raw) > MAX_EPISODE_BYTES:
        # Not parsed: the cap exists so a huge file costs nothing to refuse.
        raise ValidationError(
            f"{source}: episode is {len(raw):,} bytes, over the {MAX_EPISODE_BYTES // 1024} KiB cap",
            problems=[
                Problem("too large", file=source, hint="keep episodes short; link to long material instead")
            ],
        )
    if not raw.strip():
        raise ValidationError(
            f"{source}: empty episode file", problems=[Problem("the file is empty", file=source)]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise utf8_error(raw, exc, source) from None
    # The bytes, not ``text``: libyaml decodes UTF-8 itself, faster (full index rebuilds).
    data = yamlio.load(raw, source=source)
    episode, problems = validate_mapping(data, source=source)
    if path is not None and episodes_dir is not None and "id" in episode and "at" in episode:
        want = expected_relpath(episode["id"], episode["at"], episodes_dir)
        if path != want and PurePosixPath(path) != PurePosixPath(want):
            problems.append(
                Problem(
                    f"file name and folder do not match the episode's id and date (expected {want})",
                    file=source,
                    field="id",
                    hint="episodes live in <episodes>/YYYY/MM/<id>.yaml, by the month of 'at'",
                )
            )
    if problems:
        lines = yamlio.key_lines(text)
        raise ValidationError(
            f"{source}: invalid episode", problems=locate(problems, lines[0] if lines else None)
        )
    return Episode(episode)


def utf8_error(raw: bytes, exc: UnicodeDecodeError, source: str) -> ValidationError:
    """The error for input that is not UTF-8: the bad byte, its line and its key."""
    return ValidationError(
        f"{source}: not valid UTF-8",
        problems=[
            Problem(
                f"invalid byte 0x{raw[exc.start]:02x} at offset {exc.start}",
                file=source,
                line=raw[: exc.start].count(b"\n") + 1,
                field=_key_before(raw, exc.start),
                hint="save the file as UTF-8",
            )
        ],
    )


def _key_before(raw: bytes, offset: int) -> str | None:
    """The top-level key whose value holds byte ``offset`` (for messages)."""
    for line in reversed(raw[:offset].split(b"\n")):
        match = re.match(rb"([A-Za-z][\w-]*):", line)
        if match:
            return match.group(1).decode("ascii")
    return None
