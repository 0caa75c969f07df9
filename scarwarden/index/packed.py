"""How the index packs what it keeps of each episode file (schema 18, issue 30: the
index within ~1.5x the ledger's own files at a million episodes).

* An episode's JSON is stored deflated (raw deflate, no header) against a fixed
  dictionary of the format's keys, less its ID and time (columns of their own): ~275
  bytes for ~550 of JSON, where the YAML file is ~500. SQL reads the JSON as
  ``episodes.doc``, a virtual column computed by :func:`inflate`, which
  :func:`scarwarden.index.schema.connect` registers on every connection (the
  ``sqlite3`` shell has no such function: ``doc`` and the columns read from it fail
  there, the others answer).
* Its time is kept as seconds since 1970 (4 bytes, not 20): ``episodes.at`` is a
  virtual column, SQLite's ``strftime`` of it (the index on ``at`` keeps the text).
* A git blob ID is stored as its 20 bytes, not 40 hex digits.
* The full-text index keeps no positions (``detail=none``: a third of the size), so
  it can answer no phrase query: a word such as "don't" must be one token. It keeps
  apostrophes in tokens (``tokenchars``) and is given each text with its apostrophes
  straight and only those inside a word kept (the words of :data:`scarwarden.text._TOKEN`),
  as is a search's text.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zlib
from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Deflate's preset dictionary: the format's keys as ``json.dumps`` writes them (those
#: most episodes have last, nearest to the text), and common values. Stored rows
#: depend on it: changing it means a new schema version.
ZDICT = (
    b'"redacted": "recalled": {"receipt": "algorithm": "playbook": "ledger": '
    b'"rules_applied_reason": "attachments": "refs": "rules_applied": ["PB-'
    b'"source": "correction", "outcome", "claimed", "tags": ["corrected_by": '
    b'"correction": "outcome": "action": "task": {"agent": "'
)
#: Raw deflate with a window of 1 KiB (episodes are ~0.5 KiB; the dictionary fits).
_WBITS = -10


def deflate(data: dict[str, Any]) -> bytes:
    """An episode's JSON less its ``id`` and ``at`` (columns of their own), packed."""
    rest = {key: value for key, value in data.items() if key not in ("id", "at")}
    packer = zlib.compressobj(9, zlib.DEFLATED, _WBITS, 8, zlib.Z_DEFAULT_STRATEGY, ZDICT)
    return packer.compress(json.dumps(rest, ensure_ascii=False).encode()) + packer.flush()


def inflate(packed: bytes | None, episode_id: str | None, at: str | None) -> str | None:
    """The episode's JSON (``json.dumps`` of its data) from what :func:`deflate` packed
    and its ID and time, which come first (files.episode_fields.FIELD_ORDER). SQL:
    ``episodes.doc``."""
    if packed is None or episode_id is None or at is None:
        return None
    global _last
    key = (packed, episode_id, at)
    last = _last  # SQL asking two fields of a row's doc computes doc twice: once here
    if last[0] == key:
        return last[1]
    rest = zlib.decompressobj(_WBITS, zdict=ZDICT).decompress(packed).decode()
    head = f'{{"id": {json.dumps(episode_id, ensure_ascii=False)}, "at": {json.dumps(at)}'
    doc = head + ("}" if rest == "{}" else ", " + rest[1:])
    _last = (key, doc)
    return doc


#: The last (packed, ID, time) :func:`inflate` was given, and what it returned.
_last: tuple[tuple[bytes, str, str] | None, str] = (None, "")


def load_doc(packed: bytes, episode_id: str, at: str) -> dict[str, Any]:
    """An episode's data from its packed JSON, ID and time."""
    return {"id": episode_id, "at": at, **load_rest(packed)}


def load_rest(packed: bytes) -> dict[str, Any]:
    """An episode's data less its ``id`` and ``at``, from its packed JSON (what reading
    a field or two of many episodes needs: no time to format, no JSON parsed twice)."""
    rest: dict[str, Any] = json.loads(zlib.decompressobj(_WBITS, zdict=ZDICT).decompress(packed))
    return rest


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def at_seconds(at: str) -> int:
    """A stored time (``YYYY-MM-DDTHH:MM:SSZ``, times.format_at) as seconds since 1970,
    as ``episodes.t`` keeps it: ``episodes.at`` is SQLite's ``strftime`` of it."""
    moment = dt.datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    return (moment - _EPOCH) // dt.timedelta(seconds=1)


def blob_bytes(blob: str) -> bytes:
    """A blob ID as stored in ``files.blob``."""
    return bytes.fromhex(blob)


def blob_hex(stored: bytes | None) -> str | None:
    """A blob ID as git writes it, from ``files.blob``."""
    return None if stored is None else stored.hex()


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
#: An apostrophe with no letter or digit on one side: not part of a word.
_LONE = re.compile(r"(?<![^\W_])'|'(?![^\W_])")


def fts_words(text: str) -> str:
    """``text`` as the full-text index is given it (and a search's words)."""
    return _LONE.sub(" ", text.translate(_APOSTROPHES))


def fts_text(values: Iterable[Any]) -> tuple[str | None, ...]:
    """The values the full-text index is given (and told again to forget an episode)."""
    return tuple(fts_words(v) if isinstance(v, str) else None for v in values)
