"""An import's batch on disk, not in memory: ``episode import`` of a file of 300,000
conversations held each one's input, its validated episode and its rendered text at
once (318 MB). Each is written to an anonymous temporary file as it is made; only the
offsets (8 bytes an item) stay in memory, and an item is read back when it is used.
"""

from __future__ import annotations

import json
import tempfile
from array import array
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from scarwarden.files.episodes import Episode
from scarwarden.files.write_journal import Planned


class Spool:
    """Byte strings appended one after another to a temporary file (deleted when
    closed or collected), read back by position."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._ends = array("q")

    def append(self, data: bytes) -> None:
        self._file.seek(0, 2)
        self._file.write(data)
        self._ends.append((self._ends[-1] if self._ends else 0) + len(data))

    def __len__(self) -> int:
        return len(self._ends)

    def read(self, index: int) -> bytes:
        start = self._ends[index - 1] if index > 0 else 0
        self._file.seek(start)
        return self._file.read(self._ends[index] - start)

    def close(self) -> None:
        self._file.close()


def dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Episodes(Sequence[Episode]):
    """The episodes of an import (``ImportResult.added``), each read back when asked
    for; their rendered files (:attr:`planned`) for the commit."""

    def __init__(self, episodes_rel: str) -> None:
        self._rel = episodes_rel
        self._data = Spool()
        self._text = Spool()

    def add(self, episode: Episode) -> None:
        self._data.append(dump(episode.data))
        self._text.append(episode.render().encode("utf-8"))

    def __len__(self) -> int:
        return len(self._data)

    @overload
    def __getitem__(self, index: int) -> Episode: ...
    @overload
    def __getitem__(self, index: slice) -> list[Episode]: ...
    def __getitem__(self, index: int | slice) -> Episode | list[Episode]:
        return _item(len(self), index, lambda i: Episode(json.loads(self._data.read(i))))

    @property
    def planned(self) -> Sequence[Planned]:
        """Each episode's file and bytes, read as iterated (the journal, the links'
        check and the writing each pass over the batch once)."""
        return _Planned(self)

    def _planned(self, index: int) -> Planned:
        data = json.loads(self._data.read(index))
        episode = Episode(data)
        return Planned(episode.relpath(self._rel), self._text.read(index))

    def close(self) -> None:
        self._data.close()
        self._text.close()


class _Planned(Sequence[Planned]):
    def __init__(self, episodes: Episodes) -> None:
        self._episodes = episodes

    def __len__(self) -> int:
        return len(self._episodes)

    @overload
    def __getitem__(self, index: int) -> Planned: ...
    @overload
    def __getitem__(self, index: slice) -> list[Planned]: ...
    def __getitem__(self, index: int | slice) -> Planned | list[Planned]:
        return _item(len(self), index, self._episodes._planned)


T = TypeVar("T")


def _item(length: int, index: int | slice, read: Callable[[int], T]) -> T | list[T]:
    """A sequence's ``[index]`` of ``length`` items, each read by ``read(i)``: a slice
    as a list, a negative index from the end, :class:`IndexError` past either end."""
    if isinstance(index, slice):
        return [read(i) for i in range(*index.indices(length))]
    if index < 0:
        index += length
    if not 0 <= index < length:
        raise IndexError(index)
    return read(index)
