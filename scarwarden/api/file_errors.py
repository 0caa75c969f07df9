"""The Python API's errors for the file system: a file or folder that cannot be read or
written (permission denied, a folder where a file should be...) raises
:class:`~scarwarden.errors.FileAccessError` naming the path (relative to the
repository), as the CLI reports it, never a bare ``OSError``; a repository deleted
since it was opened, :class:`~scarwarden.errors.UsageError`."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from scarwarden.errors import UsageError, file_access_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    C = TypeVar("C", bound=type)


def raises_file_access_errors(cls: C) -> C:
    """Wrap every public method of ``cls`` (whose instances have ``root``)."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _translating(member))
    return cls


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not os.path.isdir(self.root):  # else git's "not a git repository", or a cache made anew there
            raise UsageError(
                f"{self.root} does not exist (deleted or moved since it was opened)",
                hint="open the memory where it is now: scarwarden.open_memory(path)",
            )
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            error = file_access_error(exc, root=os.fspath(self.root))
            if error is None:
                raise
            raise error from exc

    return call
