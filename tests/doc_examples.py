"""Find the ``scarwarden ...`` command lines in the docs, with their markers.

Shared by the suite (``tests/cli/test_doc_examples.py``) and usable by hand::

    python tests/doc_examples.py      # list every example and how it is treated

What counts as an example: a line of a fenced block with no language, or ``console``,
``bash``, ``sh`` or ``shell``, that runs ``scarwarden`` (directly, after ``VAR=value``,
or at the end of a pipe). In a ``console`` block only ``$ `` lines are commands, the
rest is output. A trailing backslash joins the next line.

Markers (they say why, so a skipped example is a decision, not an accident):

* ``<!-- not run: REASON -->`` on the line(s) just before a fence skips the block;
* ``(not run: REASON)`` in a line's trailing comment skips that line;
* ``(exits N: REASON)`` in a line's trailing comment expects exit code N, not 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*```([\w-]*)\s*$")
SHELL_LANGS = {"", "console", "bash", "sh", "shell"}
BLOCK_MARKER = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->")
NOT_RUN = re.compile(r"\(not run:\s*([^)]*)\)")
EXITS = re.compile(r"\(exits (\d+):\s*([^)]*)\)")
COMMAND = re.compile(r"^(?:\w+=\S*\s+)*scarwarden(?:\s|$)|\|\s*scarwarden\s")


@dataclass(frozen=True)
class Example:
    doc: str  # file name, e.g. "commands.md"
    line: int  # 1-based line of the command's first line
    command: str  # the shell text, continuations joined
    skip: str | None  # why it is not run, from a marker
    expect: int  # the exit code it must end with

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def examples(path: Path) -> list[Example]:
    """The examples of one markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    lang: str | None = None  # None: outside a fence
    pending: str | None = None  # a block marker waiting for its fence
    block_skip: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            if lang is None:
                lang, block_skip, pending = fence.group(1), pending, None
            else:
                lang = None
        elif lang is None:
            marker = BLOCK_MARKER.search(line)
            if marker:
                pending = marker.group(1)
            elif line.strip():
                pending = None
        elif lang in SHELL_LANGS:
            start = i
            text = line.strip()
            if lang == "console":
                if not text.startswith("$ "):
                    i += 1
                    continue
                text = text[2:]
            elif text.startswith("$ "):
                text = text[2:]
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].strip()
            if COMMAND.search(text):
                found.append(_example(path.name, start + 1, text, block_skip))
        i += 1
    return found


def _example(doc: str, line: int, text: str, block_skip: str | None) -> Example:
    not_run = NOT_RUN.search(text)
    exits = EXITS.search(text)
    return Example(
        doc=doc,
        line=line,
        command=text,
        skip=block_skip or (not_run.group(1) if not_run else None),
        expect=int(exits.group(1)) if exits else 0,
    )


def all_examples(docs: Path) -> list[Example]:
    return [ex for path in sorted(docs.glob("*.md")) for ex in examples(path)]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    for ex in all_examples(root / "docs"):
        how = f"not run: {ex.skip}" if ex.skip else f"exit {ex.expect}"
        print(f"{ex.id:18} {how:28} {ex.command}")
