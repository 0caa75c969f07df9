"""``episode import``: a file of recorded runs in, one commit of episodes out.

One episode per conversation (:mod:`.chat`) or tau-bench record (:mod:`.tau`). Its ID is
derived from the conversation's content (SHA-256 of the format and the canonical JSON),
so importing the same file twice adds nothing and says so. Everything is read, checked
and screened before the first byte is written: a bad conversation, a secret in a tool
call's arguments (named by conversation and field, never its value) or an invalid
episode refuses the whole file. The batch is written by
:func:`~scarwarden.files.record.land`: one commit, through the gate; until then it
waits in temporary files (:mod:`.spool`), not in memory.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any

from scarwarden.errors import Problem, UsageError, ValidationError
from scarwarden.files import record, secret_scan, write_journal
from scarwarden.files.atomic import write_lock
from scarwarden.files.episodes import Episode
from scarwarden.files.transcripts import FORMATS, chat, stream
from scarwarden.files.transcripts.refusals import Refusals, refuse
from scarwarden.files.transcripts.spool import Episodes, Spool, dump
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
    #: The episodes added (read back from a temporary file as they are used).
    added: Sequence[Episode]
    #: IDs of the conversations already in the ledger (imported before).
    skipped: list[str]
    dry_run: bool
    commit: str | None = None
    #: IDs of conversations the file holds more than once (imported once).
    repeated: list[str] = field(default_factory=list)

    def to_json(self, *, episodes: bool = True) -> dict[str, Any]:
        """What ``--json`` prints (without ``episodes``, for a writer that streams them)."""
        data = {
            "conversations": self.conversations,
            "added": [ep.id for ep in self.added],
            "skipped": self.skipped,
            "repeated": self.repeated,
            "dry_run": self.dry_run,
            "commit": self.commit,
        }
        return {**data, "episodes": [ep.to_json() for ep in self.added]} if episodes else data


def stable_id(fmt: str, conversation: Any) -> str:
    """``ep-`` and 12 Crockford base32 characters (60 bits) of the content's SHA-256."""
    return _id_of(hashlib.sha256(f"{fmt}\0".encode() + _canonical(conversation)))


def _canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def _id_of(sha: Any) -> str:
    digest = int.from_bytes(sha.digest()[:8], "big")
    return "ep-" + "".join(_CROCKFORD[(digest >> (5 * i)) & 31] for i in range(11, -1, -1))


class Messages(Iterator[Any]):
    """A file that is one list of messages, read a message at a time (it may be the
    whole file); :attr:`sha` hashes what was read as :func:`stable_id` hashes the list."""

    def __init__(self, fmt: str, messages: Iterator[Any]) -> None:
        self._messages = messages
        self.sha = hashlib.sha256(f"{fmt}\0[".encode())
        self._started = False

    def __next__(self) -> Any:
        try:
            message = next(self._messages)
        except StopIteration:
            self.sha.update(b"]")
            raise
        self.sha.update(b"," + _canonical(message) if self._started else _canonical(message))
        self._started = True
        return message


def conversations(data: IO[bytes], fmt: str, source: str) -> Iterator[tuple[int, Any]]:
    """(1-based number, conversation) in the file; a JSON array of messages is one,
    given as :class:`Messages` (read by its user, not held)."""
    items = stream.items(data, source)
    first = next(items, None)
    if first is None:
        return
    if fmt == "openai-chat" and isinstance(first[1], Mapping) and "role" in first[1]:
        yield 1, Messages(fmt, itertools.chain([first[1]], (item for _, item in items)))
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
    return list(_inputs(data, fmt, source, options, progress))


def _inputs(
    data: IO[bytes],
    fmt: str,
    source: str,
    options: Options,
    progress: Callable[[int], None] | None,
) -> Iterator[dict[str, Any]]:
    """:func:`read_episodes` one at a time; the file's refusals (a secret in a tool
    call's arguments, a correction for no conversation) come after the last."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="the formats are " + ", ".join(FORMATS))
    at = options.at or utc_now()
    count = 0
    refused = Refusals()
    for number, conversation in conversations(data, fmt, source):
        where = f"{source}: conversation {number}"
        if fmt == "tau-bench":
            episode, raw_args = _tau_episode(conversation, where, at, options.agent or "tau-bench")
        else:
            episode, raw_args = chat.episode_of(
                conversation,
                where,
                writes=options.writes,
                correction=options.corrections.get(number),
                arguments=_scanned_into(refused, where, options.allow),
            )
            episode["at"] = at
            if options.agent and "agent" not in episode:
                episode["agent"] = options.agent
        refused.add(_secrets(raw_args, where, options.allow))
        streamed = isinstance(conversation, Messages)
        episode["id"] = _id_of(conversation.sha) if streamed else stable_id(fmt, conversation)
        count += 1
        yield episode
        if progress is not None:
            progress(number)
    _check_corrections(options.corrections, count, fmt)
    if refused:
        raise ValidationError(
            f"{source}: refused, a tool call's arguments hold a secret; nothing was written",
            problems=refused.listed(source),
        )


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


def _scanned_into(refused: Refusals, where: str, allow: Collection[str]) -> Callable[[str, str], None]:
    """A tool call's arguments scanned as they are read, the secrets found added to ``refused``."""
    return lambda path, raw: refused.add(_secrets({path: raw}, where, allow))


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
    ``check`` is the provenance gate's, run on the tree before HEAD moves (issue 27).

    Memory grows with the largest conversation and the IDs, not with the file: each
    conversation's input, then each new episode, goes to a temporary file as it is made
    (:mod:`.spool`) and is read back to be checked, written and committed."""
    options = replace(options, allow=tuple(repo.config.secrets.allow))
    inputs = Spool()
    ids: list[str] = []
    for item in _inputs(data, fmt, source, options, progress):
        ids.append(item["id"])
        inputs.append(dump(item))
    # A killed import's files are untracked, not in the ledger: undone first (here, and
    # under the lock below), or they would count as imported before.
    if dry_run:
        write_journal.recover_interrupted(repo)
        new, skipped, repeated = _new_of(ids, record.ids_in_ledger(repo, ids))
        episodes = _prepared(repo, inputs, new, source, options.allow, warn)
        return ImportResult(len(ids), episodes, skipped, True, repeated=repeated)
    # Looked up under the write lock: another import's files written but not committed
    # yet were counted as imported before, and lost if that import was then undone.
    with write_lock(repo):
        write_journal.recover(repo)
        new, skipped, repeated = _new_of(ids, record.ids_in_ledger(repo, ids))
        if not new:
            return ImportResult(len(ids), [], skipped, False, repeated=repeated)
        episodes = _prepared(repo, inputs, new, source, options.allow, warn)
        inputs.close()
        several = record.batch_message([ids[i] for i in new]) if len(new) > 1 else None
        message = several or record.commit_message(episodes)
        record.land(repo, episodes.planned, commit=True, message=message, check=check)
    from scarwarden import git

    return ImportResult(len(ids), episodes, skipped, False, git.head(repo.root), repeated)


def _new_of(ids: list[str], have: set[str]) -> tuple[list[int], list[str], list[str]]:
    """The positions of the episodes to add, the IDs in the ledger (``have``) and those
    the file repeats: a conversation logged twice in the file is one episode."""
    new: list[int] = []
    skipped = [ep_id for ep_id in ids if ep_id in have]
    repeated: list[str] = []
    taken = set(have)
    for index, ep_id in enumerate(ids):
        if ep_id in taken:
            repeated += [] if ep_id in have else [ep_id]
            continue
        taken.add(ep_id)
        new.append(index)
    return new, skipped, repeated


def _prepared(
    repo: MemoryRepo,
    inputs: Spool,
    new: list[int],
    source: str,
    allow: Collection[str],
    warn: Callable[[Problem], None] | None,
) -> Episodes:
    """The new episodes validated and screened one at a time (warnings to ``warn`` as
    they are found), each refusal named by its conversation, every one together."""
    episodes = Episodes(repo.episodes_rel)
    invalid, leaks, refused = Refusals(), Refusals(), Refusals()
    applying: list[Episode] = []  # rules_applied: checked against the playbook, once
    for index in new:
        item = json.loads(inputs.read(index))
        where = f"{source}: conversation {index + 1}"
        try:
            (episode,) = record.prepare([item], source=where)
        except ValidationError as exc:
            invalid.add(exc.problems or [Problem(exc.message, file=where)])
            leaks.add(_leaks(item, where, allow))
            continue
        try:
            warned = record.screen(repo, [episode], where)
        except ValidationError as exc:
            refused.add(exc.problems)
            leaks.add(_leaks(item, where, allow))
            continue
        for problem in warned:
            if warn is not None:
                warn(problem)
        applying += [episode] if episode.get("rules_applied") else []
        episodes.add(episode)
    refuse(source, leaks, invalid, refused)
    own = [ep for ep in applying if ep.get("source") != record.IMPORTED]
    record.refuse_unknown_rules(record.unknown_rules_applied(repo, own, source), source)
    imported = [ep for ep in applying if ep.get("source") == record.IMPORTED]
    for problem in record.unknown_rules_applied(repo, imported, source):
        if warn is not None:
            warn(problem)
    return episodes


def _leaks(item: Mapping[str, Any], where: str, allow: Collection[str]) -> list[Problem]:
    """The secrets in a refused conversation's episode, named by conversation."""
    return [
        Problem(secret_scan.describe(f), file=where, field=f.field, hint=secret_scan.hint(f))
        for f in secret_scan.scan_mapping(item, allow)
    ]
