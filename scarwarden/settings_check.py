"""What a setting's value may be: the range of every number, the text of every string.

:mod:`scarwarden.config` checks each value of ``scarwarden.yaml`` and of the environment
against these as the settings load, so a ``timeout: -1`` or a ``SCARWARDEN_TIMEOUT=nan``
is refused there, naming the setting and where it came from (exit 2), never passed on
to the HTTP library or SQLite to fail later (docs/formats.md#settings has the table).
"""

from __future__ import annotations

import math
import re
from pathlib import PurePath

from scarwarden.characters import first_refused, not_unicode
from scarwarden.errors import ConfigError
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The settings file, for hints (``scarwarden.config.CONFIG_FILE``).
SETTINGS_FILE = "scarwarden.yaml"

#: SQLite's (and a C ``int64``'s) largest integer: no integer setting may pass it.
MAX_INTEGER = 2**63 - 1


@record(frozen=True)
class Range:
    """The closed range ``low``..``high`` (``low`` excluded when ``above``). A record, not
    a ``NamedTuple``: typing compiles each string annotation of a NamedTuple, ~1 ms of a
    cold recall's start."""

    low: float
    #: An ``int`` for integer settings: compared exactly (2**63 is no float's neighbour).
    high: float
    above: bool = False
    unit: str = ""

    def problem(self, value: float) -> str | None:
        """Why ``value`` is out of the range ("must be ..."), or ``None``."""
        unit = f" {self.unit}" if self.unit else ""
        if not math.isfinite(value):  # NaN compares false with everything: test it first
            return "must be a finite number"
        if value <= self.low if self.above else value < self.low:
            return f"must be {'above' if self.above else 'at least'} {self.low:g}{unit}"
        if value > self.high:
            return (
                f"must be at most {self.high:g}{unit}"
                if self.high < MAX_INTEGER
                else f"must be at most {MAX_INTEGER}"
            )
        return None


#: The largest ``recall.limit`` a settings file may give (recall sizes SQL statements by it).
MAX_RECALL_LIMIT = 10_000

#: The most QC retakes (``answer.qc_max_retakes``, ``--max-retakes``): each is two more
#: model calls (a regeneration and its review), and a draft the reviewer sent back ten
#: times will not pass on the eleventh; unbounded, a reviewer that never passes would
#: keep the loop calling the model for ever.
MAX_RETAKES = 10

#: section.key -> its range, for every numeric setting; recall's thresholds are checked
#: by ``RecallSettings`` itself (a recall receipt's settings are checked against them too).
RANGES: dict[str, Range] = {
    # A default, for the settings file; a receipt may carry any --limit up to MAX_INTEGER.
    "recall.limit": Range(1, MAX_RECALL_LIMIT),
    # requests refuses a timeout <= 0; past a day a hung server is no longer "slow".
    "model.timeout": Range(0, 86400, above=True, unit="seconds"),
    # The backoff doubles on each retry: 20 retries of 600 s already wait for years.
    "model.max_retries": Range(0, 20),
    "model.backoff": Range(0, 600, unit="seconds"),
    "distill.token_budget": Range(1, MAX_INTEGER),
    "distill.max_context_rules": Range(0, MAX_INTEGER),
    "answer.qc_max_retakes": Range(0, MAX_RETAKES),
    "media.max_bytes": Range(1, MAX_INTEGER),
    "media.send_max_bytes": Range(1, MAX_INTEGER),
    "media.send_max_side": Range(16, MAX_INTEGER),
}


def range_problem(name: str, value: object) -> str | None:
    """Why the number ``value`` cannot be the setting ``name`` ("must be ..., got ..."),
    or ``None`` when it can (or ``name`` is not a numeric setting)."""
    span = RANGES.get(name)
    if span is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    problem = span.problem(value)
    return None if problem is None else f"{problem}, got {value!r}"


def coerce_setting(value: Any, default: Any, name: str, origin: str | None) -> Any:
    """``value`` checked against the type of ``default`` (ints are accepted for floats)
    and the setting ``name``'s range; ``origin``: the variable it came from, if any."""
    expected = type(default)
    checked: Any = None
    if expected is bool:
        checked = value if isinstance(value, bool) else None
    elif expected is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            checked = float(value)
    elif expected is int:
        checked = value if isinstance(value, int) and not isinstance(value, bool) else None
    elif isinstance(value, expected):
        checked = value
    if checked is None:
        raise ConfigError(
            f"{name} must be {expected.__name__}, got {type(value).__name__} ({_shown(value)})",
            hint=f"fix it in {SETTINGS_FILE} or remove it to use the default ({default!r})",
        )
    problem = range_problem(name, checked)
    if problem is None and isinstance(checked, str):
        problem = text_setting_problem(checked)
    if problem is None:
        return checked
    if origin is not None:
        raise ConfigError(f"{origin} ({name}) {problem}", hint=f"fix or unset {origin} in the environment")
    raise ConfigError(
        f"{name} {problem}", hint=f"fix it in {SETTINGS_FILE} or remove it to use the default ({default!r})"
    )


def checked_memory_dir(value: Any, source: str) -> str:
    """``memory_dir`` as given, or :class:`ConfigError` (exit 2): a relative folder inside
    the repository, its text valid, and a folder of its own (not the repository itself,
    not inside ``.git/`` or ``.scarwarden/``)."""
    name, hint = f"memory_dir in {source}", "for example: memory_dir: memory"
    path = PurePath(value) if isinstance(value, str) and value else None
    if path is None or path.is_absolute() or ".." in path.parts:
        raise ConfigError(f"{name} must be a relative folder inside the repository", hint=hint)
    if (problem := text_setting_problem(value)) is not None:
        raise ConfigError(f"{name} {problem}", hint=hint)
    parts = path.parts  # "." and "./" have none: the repository itself
    if not parts or parts[0] in (".git", ".scarwarden"):
        where = "the repository itself" if not parts else f"inside {parts[0]}/"
        raise ConfigError(f"{name} is {where}: the memory needs a folder of its own", hint=hint)
    return value


def text_setting_problem(value: str) -> str | None:
    """Why the string ``value`` cannot be a setting, or ``None``. A byte that is not
    UTF-8 arrives from the environment as a surrogate (``surrogateescape``)."""
    found = first_refused(value)
    if found is None:
        return None
    char, where = found
    return not_unicode(char, where) or f"holds a control character (U+{ord(char):04X}) {where}"


#: What an HTTP header may carry of a key: printable ASCII, no space (RFC 9110 token68
#: and every provider's keys are narrower still).
_KEY = re.compile(r"[\x21-\x7e]+")


def api_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be sent as a bearer token, or ``None`` when it can."""
    if _KEY.fullmatch(key):
        return None
    at = next(i for i, c in enumerate(key) if not _KEY.fullmatch(c))
    char = key[at]
    if "\udc80" <= char <= "\udcff":
        what = f"the byte 0x{ord(char) - 0xDC00:02X}, not valid UTF-8,"
    elif char in "\r\n":
        what = "a line break"
    elif char.isspace():
        what = "a space"
    else:
        what = f"the character U+{ord(char):04X}"
    return f"holds {what} at character {at + 1}; an API key is printable ASCII with no spaces"


def unquoted_off(value: bool, name: str) -> str:
    """A privacy setting YAML read as a boolean: an unquoted ``off`` (or ``no``) is false,
    which is ``off``; ``on``, ``yes`` or ``true`` names no policy."""
    if not value:
        return "off"
    raise ConfigError(
        f"{name} must be off, warn or refuse, got true",
        hint=f"YAML reads an unquoted on, yes or true as true: write off, warn or refuse in {SETTINGS_FILE}",
    )


def _shown(value: object) -> str:
    """``value`` as a message quotes it: its ``repr``, an address's password
    (``scheme://user:password@``) hidden (docs/models.md). The pattern is compiled here,
    on a refusal only: every command imports this module, a cold recall too."""
    return re.sub(r"(://[^\s/@:'\"]*:)[^\s/@'\"]*@", r"\1***@", repr(value))
