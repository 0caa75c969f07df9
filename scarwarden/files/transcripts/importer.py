"""``episode import``: a file of recorded runs in, one commit of episodes out.

One episode per conversation (:mod:`.chat`) or tau-bench record (:mod:`.tau`). Its ID is
derived from the conversation's content (SHA-256 of the format and the canonical JSON),
so importing the same file twice adds nothing and says so. Everything is read, checked
and screened before the first byte is written: a bad conversation, a secret in a tool
call's arguments (named by conversation and field, never its value) or an invalid
episode refuses the whole file. The batch is written by
:func:`~scarwarden.files.record.add_episodes`: one commit, through the gate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

from scarwarden.errors import Problem, UsageError, ValidationError
from scarwarden.files import record, secret_scan, write_journal
from scarwarden.files.atomic import write_lock
from scarwarden.files.episodes import Episode
from scarwarden.files.transcripts import FORMATS, chat, stream
from scarwarden.repo import MemoryRepo
from scarwarden.times import utc_now

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass(frozen=True)
class Options:
    """How a file is read: per-conversation corrections (1-based), the write tools
    (openai-chat; tau-bench knows its own), the agent, the time recorded."""

    corrections: Mapping[int, str] = field(default_factory=dict)
    writes: Collection[str] = ()
    agent: str | None = None
    at: str | None = None
    #: ``secrets.allow`` (fingerprints a team declared not secret).
    allow: Collection[str] = ()


@dataclass
class ImportResult:
    """What an import did (or, with ``dry_run``, would do)."""

    conversations: int
    added: list[Episode]
    #: IDs of the conversations already in the ledger (imported before).
    skipped: list[str]
    dry_run: bool
    commit: str | None = None
    #: IDs of conversations the file holds more than once (imported once).
    repeated: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "added": [ep.id for ep in self.added],
            "skipped": self.skipped,
            "repeated": self.repeated,
            "dry_run": self.dry_run,
            "commit": self.commit,
            "episodes": [ep.to_json() for ep in self.added],
        }


def stable_id(fmt: str, conversation: Any) -> str:
    """``ep-`` and 12 Crockford base32 characters (60 bits) of the content's SHA-256."""
    text = json.dumps(conversation, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    digest = int.from_bytes(hashlib.sha256(f"{fmt}\0{text}".encode()).digest()[:8], "big")
    return "ep-" + "".join(_CROCKFORD[(digest >> (5 * i)) & 31] for i in range(11, -1, -1))


def conversations(data: IO[bytes], fmt: str, source: str) -> Iterator[tuple[int, Any]]:
    """(1-based number, conversation) in the file; a JSON array of messages is one."""
    items = stream.items(data, source)
    first = next(items, None)
    if first is None:
        return
    if fmt == "openai-chat" and isinstance(first[1], Mapping) and "role" in first[1]:
        yield 1, [first[1], *(item for _, item in items)]
        return
    yield first
    yield from items


def read_episodes(
    data: IO[bytes],
    fmt: str,
    source: str,
    options: Options = Options(),
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every conversation's episode input, with its stable ``id`` (nothing written)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="the formats are " + ", ".join(FORMATS))
    at = options.at or utc_now()
    out: list[dict[str, Any]] = []
    refused: list[Problem] = []
    for number, conversation in conversations(data, fmt, source):
        where = f"{source}: conversation {number}"
        if fmt == "tau-bench":
            episode, raw_args = _tau_episode(conversation, where, at, options.agent or "tau-bench")
        else:
            episode, raw_args = chat.episode_of(
                conversation, where, writes=options.writes, correction=options.corrections.get(number)
            )
            episode["at"] = at
            if options.agent and "agent" not in episode:
                episode["agent"] = options.agent
        refused += _secrets(raw_args, where, options.allow)
        episode["id"] = stable_id(fmt, conversation)
        out.append(episode)
        if progress is not None:
            progress(number)
    _check_corrections(options.corrections, len(out), fmt)
    if refused:
        raise ValidationError(
            f"{source}: refused, a tool call's arguments hold a secret; nothing was written", problems=refused
        )
    return out


def _tau_episode(record_: Any, where: str, at: str, agent: str) -> tuple[dict[str, Any], dict[str, str]]:
    from scarwarden.files.transcripts import tau  # the stemmer: only for tau-bench's tags

    hint = "a record has task_id, trial, reward, info.task (instruction, actions) and traj"
    if not isinstance(record_, dict):
        raise ValidationError(
            f"{where}: not a tau-bench record (a JSON object), got {type(record_).__name__}; "
            "nothing was written",
            hint=hint,
        )
    try:
        run = tau.make_run(record_)
    except KeyError as exc:
        raise ValidationError(
            f"{where}: not a tau-bench record (missing {exc}); nothing was written", hint=hint
        ) from None
    except (TypeError, AttributeError):  # Python's own words would name no field
        raise ValidationError(
            f"{where}: not a tau-bench record (a field has the wrong type); nothing was written", hint=hint
        ) from None
    except (ValueError, RecursionError) as exc:
        wrong = _not_a_number(record_)
        if wrong is not None:  # int()/float()'s words would name no field
            raise ValidationError(
                f"{where}: not a tau-bench record ({wrong!r} must be a number, got {record_[wrong]!r:.40}); "
                "nothing was written",
                hint=hint,
            ) from None
        reason = exc if isinstance(exc, ValueError) else "nested too deeply"
        raise ValidationError(
            f"{where}: a tool call's arguments are not valid JSON ({reason}); nothing was written"
        ) from None
    raw = {
        f"traj[{i}].tool_calls[{j}].function.arguments": str(
            (call.get("function") or {}).get("arguments") or ""
        )
        for i, msg in enumerate(record_["traj"])
        for j, call in enumerate(msg.get("tool_calls") or [])
    }
    return tau.episode_of(run, at, agent=agent), raw


def _not_a_number(record_: Mapping[str, Any]) -> str | None:
    """The first of the record's numbers (task_id, trial, reward) that is not one."""
    for key, kind in (("task_id", int), ("trial", int), ("reward", float)):
        try:
            kind(record_.get(key, 0))
        except ValueError:
            return key
        except TypeError:  # not text either: make_run says so
            continue
    return None


def _secrets(raw_args: Mapping[str, str], where: str, allow: Collection[str]) -> list[Problem]:
    """Credentials in the tool calls' arguments as given (all of them, not the summary),
    each named by its call and argument (``...function.arguments.auth``), never by value."""
    problems: list[Problem] = []
    for path, raw in raw_args.items():
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):  # the text is scanned as given below
            parsed = None
        found = secret_scan.scan_mapping(parsed, allow) if isinstance(parsed, Mapping) else []
        seen = {f.fingerprint for f in found}
        found += [f for f in secret_scan.scan_text(raw, None, allow) if f.fingerprint not in seen]
        problems += [
            Problem(
                secret_scan.describe(f),
                file=where,
                field=f"{path}.{f.field}" if f.field else path,
                hint=secret_scan.hint(f),
            )
            for f in found
        ]
    return problems


def _check_corrections(corrections: Mapping[int, str], count: int, fmt: str) -> None:
    if corrections and fmt != "openai-chat":
        raise UsageError(
            "--correction goes with --format openai-chat",
            hint="tau-bench's corrections come from its ground truth",
        )
    beyond = sorted(n for n in corrections if n > count)
    if beyond:
        raise UsageError(
            f"--correction for conversation {beyond[0]}, but the file holds {count}; nothing was written"
        )


def import_file(
    repo: MemoryRepo,
    data: IO[bytes],
    fmt: str,
    *,
    source: str,
    options: Options = Options(),
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    warn: Callable[[Problem], None] | None = None,
    check: record.Check | None = None,
) -> ImportResult:
    """Read, check and (unless ``dry_run``) commit the file's new episodes in one commit;
    ``check`` is the provenance gate's, run on the tree before HEAD moves (issue 27)."""
    options = replace(options, allow=tuple(repo.config.secrets.allow))
    inputs = read_episodes(data, fmt, source, options, progress)
    # A killed import's files are untracked, not in the ledger: undone first (here, and
    # under the lock below), or they would count as imported before.
    ids = [item["id"] for item in inputs]
    if dry_run:
        write_journal.recover_interrupted(repo)
        new, numbers, skipped, repeated = _new_of(inputs, record.ids_in_ledger(repo, ids))
        try:
            episodes = record.prepare(new, source=source) if new else []
            for problem in record.screen(repo, episodes, source) if episodes else []:
                if warn is not None:
                    warn(problem)
        except ValidationError as exc:
            raise _by_conversation(exc, new, numbers, source, options.allow) from None
        return ImportResult(len(inputs), episodes, skipped, True, repeated=repeated)
    # Looked up under the write lock: another import's files written but not committed
    # yet were counted as imported before, and lost if that import was then undone.
    with write_lock(repo):
        write_journal.recover(repo)
        new, numbers, skipped, repeated = _new_of(inputs, record.ids_in_ledger(repo, ids))
        if not new:
            return ImportResult(len(inputs), [], skipped, False, repeated=repeated)
        try:
            episodes = record.add_episodes(repo, new, source=source, warn=warn, check=check, locked=True)
        except ValidationError as exc:
            raise _by_conversation(exc, new, numbers, source, options.allow) from None
    from scarwarden import git

    return ImportResult(len(inputs), episodes, skipped, False, git.head(repo.root), repeated)


def _new_of(
    inputs: list[dict[str, Any]], have: set[str]
) -> tuple[list[dict[str, Any]], list[int], list[str], list[str]]:
    """The episodes to add, their conversations' numbers, the IDs in the ledger (``have``)
    and those the file repeats: a conversation logged twice in the file is one episode."""
    new: list[dict[str, Any]] = []
    skipped = [item["id"] for item in inputs if item["id"] in have]
    repeated: list[str] = []
    taken = set(have)
    numbers: list[int] = []  # each new episode's conversation
    for number, item in enumerate(inputs, 1):
        if item["id"] in taken:
            repeated += [] if item["id"] in have else [item["id"]]
            continue
        taken.add(item["id"])
        new.append(item)
        numbers.append(number)
    return new, numbers, skipped, repeated


def _by_conversation(
    error: ValidationError,
    episodes: list[dict[str, Any]],
    numbers: list[int],
    source: str,
    allow: Collection[str],
) -> ValidationError:
    """The batch's refusal said by conversation: its checks name an item among the new
    episodes only ("item 1" of conversation 3) or a derived ID ("runs.jsonl (ep-...)"),
    neither of which the file shows. Each episode is checked alone (only when the batch
    failed); ``error`` as it was when none fails alone (the gate, personal data)."""
    invalid: list[Problem] = []
    leaks: list[Problem] = []
    for episode, number in zip(episodes, numbers, strict=True):
        where = f"{source}: conversation {number}"
        try:
            record.prepare([episode], source=where)
        except ValidationError as exc:
            invalid += exc.problems or [Problem(exc.message, file=where)]
        leaks += [
            Problem(secret_scan.describe(f), file=where, field=f.field, hint=secret_scan.hint(f))
            for f in secret_scan.scan_mapping(episode, allow)
        ]
    if leaks:
        return ValidationError(f"{source}: refused, it holds a secret; nothing was written", problems=leaks)
    if invalid:
        return ValidationError(f"{source}: invalid episode input; nothing was written", problems=invalid)
    return error
