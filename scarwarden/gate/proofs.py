"""Proving recall receipts: what memory an episode says the agent was given (issue 20).

An episode's ``recalled:`` block (:mod:`scarwarden.files.receipt`) names the task, the
playbook's blob ID, the ledger's tree ID (version 2), the recall settings and algorithm
version, and the verdict and ranked rules recall returned. Recall is deterministic, so
the gate proves the receipt from git alone: it reads the playbook at that blob (and,
for version 2, the ledger at that tree: :mod:`scarwarden.gate.ledger`), re-runs recall
in memory (:mod:`scarwarden.recall.pure` for version 1,
:mod:`scarwarden.recall.pure_ledger` for version 2; never the index) and compares.
Refused:

* a playbook blob that was never a version of the playbook in this history, a ledger
  tree that was never the episodes folder in this history;
* a verdict or a ranked rule list that recall does not give for that task there;
* recall settings the repository's committed configuration never gave
  (:mod:`scarwarden.gate.proofs_settings`: a receipt claiming ``act_threshold: 0``
  proves nothing), and a ``ledger`` that is no episodes folder (the ``memory/`` tree);
* a ``rules_applied`` entry the receipt does not hold, unless the episode says why
  (``rules_applied_reason``: a human told the agent to, for example).

A receipt made by another recall algorithm version cannot be re-derived here, nor a
version-2 receipt that names no ledger (made before receipts did) or an uncommitted one
(recall's index held episode files no commit has): each is reported as *unverifiable*
(a warning, never a pass) with its reason. The hash was checked when the episode was
validated (a receipt edited after recall made it is an invalid episode).

Cost: one ``git cat-file --batch`` for the playbook versions named, one parse and one
set of in-memory postings per version, one set of ledger statistics per ledger tree
(cached in the git folder by tree ID: :mod:`scarwarden.gate.ledger`), and one recall
per distinct (task, settings, playbook, ledger); ``git log`` over the playbook's (or the
episodes folder's) history only when a receipt names a version that is neither the
staged one nor HEAD's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scarwarden import git
from scarwarden.config import RecallSettings
from scarwarden.errors import ConfigError
from scarwarden.files import receipt as receipt_format
from scarwarden.files.episodes import Episode
from scarwarden.gate.ledger import counts
from scarwarden.gate.policy import GateProblem, parse_playbook, problem
from scarwarden.gate.proofs_candidates import LedgerEpisodes
from scarwarden.gate.proofs_compare import Derived, Outcome, applied_beyond, clip, compare, rewritten
from scarwarden.gate.proofs_ledger import LedgerProofs
from scarwarden.gate.proofs_settings import CommittedSettings, settings_unknown
from scarwarden.gate.report import CheckReport
from scarwarden.recall import nearest, pure, pure_ledger
from scarwarden.recall.evidence import given_evidence

#: The recall algorithm versions this gate re-derives.
IMPLEMENTED = (pure.IMPLEMENTS, *pure_ledger.VERSIONS)


@dataclass
class Proof:
    """What proving one episode's receipt found."""

    episode: str
    path: str
    receipt: receipt_format.Receipt
    #: "proved", "refused" or "unverifiable".
    status: str
    problems: list[GateProblem] = field(default_factory=list)
    warnings: list[GateProblem] = field(default_factory=list)
    #: What recall gives at that playbook (when it could run).
    derived: Derived | None = None


class Prover:
    """Proves receipts against one repository; parses each playbook version once.

    ``known`` are playbook blob IDs already known to be versions of the playbook (the
    staged one, HEAD's, a walk's); ``rev`` is where to look for the others
    (``git log`` over the playbook's history, once, when needed).
    """

    def __init__(
        self,
        root: Path,
        playbook_rel: str,
        *,
        known: Iterable[str] = (),
        rev: str | None = "HEAD",
        env: Mapping[str, str] | None = None,
        merging: bool = False,
        episodes_rel: str | None = None,
        ledger_cache: bool = True,
    ) -> None:
        self.root, self.playbook_rel, self.rev, self.env = root, playbook_rel, rev, env
        episodes_rel = episodes_rel or f"{playbook_rel.rpartition('/')[0] or '.'}/episodes"
        revs = [r for r in [rev] + (["MERGE_HEAD"] if merging else []) if r is not None]
        #: Version 2's ledger trees, read from git (once each).
        self.ledgers = LedgerProofs(root, playbook_rel, episodes_rel, revs=revs, env=env, cache=ledger_cache)
        #: Every episode of a ledger tree, read only to prove the failed episodes a
        #: receipt names as candidates when no rule was near (issue 26).
        self.episodes = LedgerEpisodes(root, episodes_rel, env, cache=ledger_cache)
        #: The recall settings the committed configuration ever gave (issue 27).
        self.settings = CommittedSettings(root, revs, env)
        #: During a merge the other side's playbook versions count too (its episodes
        #: arrive as additions, their receipts naming playbooks of its history).
        self.merging = merging
        self.known = {b for b in known if b}
        self.history: set[str] | None = None
        self.books: dict[str, pure.Postings | GateProblem] = {}
        self.outcomes: dict[tuple[str, str, str], Outcome] = {}

    def prove_all(self, episodes: list[tuple[str, Episode]]) -> list[Proof]:
        """Prove every valid ``(path, episode)`` that carries a receipt, in order
        (validation checked the receipt's form and hash)."""
        pairs = []
        for path, episode in episodes:
            data = episode.get("recalled")
            if data is not None:
                pairs.append((path, episode, receipt_format.Receipt.from_valid(data)))
        self._read_books({r.playbook for _p, _e, r in pairs})
        return [self.prove(path, episode, r) for path, episode, r in pairs]

    def prove_into(self, report: CheckReport, episodes: list[tuple[str, Episode]]) -> None:
        """:meth:`prove_all`, counted and reported as a check reports it."""
        for proof in self.prove_all(episodes):
            # Only a receipt recall actually re-ran for counts as re-derived (issue 27).
            report.count("receipts_checked" if proof.derived is not None else "receipts_not_rederived")
            report.problems.extend(proof.problems)
            report.warnings.extend(proof.warnings)

    def prove(self, path: str, episode: Episode, receipt: receipt_format.Receipt) -> Proof:
        proof = Proof(episode.id, path, receipt, "proved")
        proof.problems += applied_beyond(path, episode, receipt)
        if receipt.task != episode.task.strip():
            proof.problems.append(
                problem(
                    "receipt-other-task",
                    f"{episode.id}'s receipt {receipt.id} is for another task "
                    f"({clip(receipt.task)!r}, not {clip(episode.task)!r})",
                    file=path,
                    field="recalled",
                    episode=episode.id,
                    hint="a receipt proves what recall gave for its own task: record the task "
                    "that was recalled, or recall the episode's task and pass that receipt",
                )
            )
        if not self.settings.holds(receipt.settings):
            proof.problems.append(settings_unknown(path, episode, receipt))
        why, hint = self._why_unverifiable(receipt)
        if why:
            proof.problems += self._unverifiable(path, episode, receipt)
            proof.status = "refused" if proof.problems else "unverifiable"
            proof.warnings.append(
                problem(
                    "receipt-unverifiable",
                    f"{episode.id}'s receipt {receipt.id} {why}, so its verdict and ranking are "
                    "unverified (not a pass; its playbook version and rules were checked)",
                    file=path,
                    field="recalled",
                    episode=episode.id,
                    hint=hint,
                )
            )
            return proof
        outcome = self._outcome(receipt)
        if outcome == "receipt-ledger-rewritten" and not self._episodes_tree(receipt.ledger_tree or ""):
            outcome = "receipt-ledger-unknown"  # the memory/ tree, say: no episodes folder (issue 27)
        if outcome == "receipt-ledger-rewritten":
            proof.status = "refused" if proof.problems else "unverifiable"
            proof.warnings.append(rewritten(path, episode, receipt))
            return proof
        if isinstance(outcome, str):
            proof.problems.append(self._no_playbook(path, episode, receipt, outcome))
        else:
            proof.derived = outcome
            proof.problems += compare(path, episode, receipt, outcome)
        if proof.problems:
            proof.status = "refused"
        return proof

    def _why_unverifiable(self, receipt: receipt_format.Receipt) -> tuple[str | None, str | None]:
        """Why this gate cannot re-derive ``receipt`` (and what to do), or ``(None, None)``."""
        if receipt.algorithm not in IMPLEMENTED:
            versions = ", ".join(str(v) for v in IMPLEMENTED[:-1]) + f" and {IMPLEMENTED[-1]}"
            return (
                f"was made by recall algorithm version {receipt.algorithm}; this gate re-runs "
                f"versions {versions}",
                "check it with the Scarwarden version that made it",
            )
        if receipt.algorithm in pure_ledger.VERSIONS and receipt.ledger is None:
            return (
                "names no ledger (it was made before receipts named one; recall versions 2 "
                "to 4 also read the ledger)",
                "recall again with this version and record the new receipt",
            )
        if receipt.ledger_uncommitted:
            return (
                f"was made while recall's index held episode files that ledger "
                f"{(receipt.ledger_tree or '')[:12]} does not (uncommitted ones), which git cannot show",
                "commit recorded episodes before the next recall (episode add commits them "
                "unless told not to), or record this episode without its receipt",
            )
        return None, None

    def _episodes_tree(self, tree: str) -> bool:
        """Whether ``tree`` holds episode files and nothing an episodes folder does not
        (``YYYY/MM/<id>.yaml``; dot-files aside): a tree holding none (the ``memory/``
        tree, whose episodes sit a folder deeper) is no ledger, however its files compare."""
        entries = git.ls_tree(self.root, tree)
        episodes = [e for e in entries if counts(e.path, e.mode)]
        others = [
            e for e in entries if not counts(e.path, e.mode) and not e.path.rpartition("/")[2].startswith(".")
        ]
        return bool(episodes) and not others

    def _read_books(self, blobs: set[str]) -> None:
        """Read and index the playbook versions named (one ``cat-file --batch``)."""
        wanted = sorted(b for b in blobs if b not in self.books)
        for blob, raw in zip(wanted, git.cat_file_batch(self.root, wanted, env=self.env), strict=True):
            if raw is None:
                self.books[blob] = problem("receipt-playbook-missing", "")
                continue
            book, found = parse_playbook(raw, self.playbook_rel)
            self.books[blob] = pure.postings(book) if book is not None else found[0]

    def _is_playbook_version(self, blob: str) -> bool:
        if blob in self.known:
            return True
        if self.history is None:
            self.history = set()
            wanted = [self.rev] + (["MERGE_HEAD"] if self.merging else [])
            revs = [r for r in wanted if r is not None and git.rev_parse(self.root, r) is not None]
            if revs:
                self.history = git.path_blobs(self.root, revs, self.playbook_rel, env=self.env)
        return blob in self.history

    def _book(self, receipt: receipt_format.Receipt) -> pure.Postings | str:
        """The playbook version a receipt names, or why it cannot be one (a code)."""
        self._read_books({receipt.playbook})
        book = self.books[receipt.playbook]
        if isinstance(book, GateProblem):
            return book.code if book.code == "receipt-playbook-missing" else "receipt-playbook-invalid"
        if not self._is_playbook_version(receipt.playbook):
            return "receipt-playbook-unknown"
        return book

    def _unverifiable(
        self, path: str, episode: Episode, receipt: receipt_format.Receipt
    ) -> list[GateProblem]:
        """What can be checked of a receipt of another algorithm version: the playbook
        version it names, and that each rule it lists is an active rule there (no recall,
        of any version, returns a rule the playbook does not have)."""
        book = self._book(receipt)
        if isinstance(book, str):
            return [self._no_playbook(path, episode, receipt, book)]
        return [
            problem(
                "receipt-rule-absent",
                f"{episode.id}'s receipt lists {rule}, which is not an active rule of playbook "
                f"{receipt.short_playbook}: no recall could have returned it",
                file=path,
                field="recalled",
                rule=rule,
                episode=episode.id,
                hint="record the receipt recall printed, unchanged",
            )
            for rule in receipt.rules
            if rule not in book.rules
        ]

    def _outcome(self, receipt: receipt_format.Receipt) -> Outcome:
        settings = receipt.settings
        key = (
            receipt.playbook,
            receipt.task,
            repr((receipt.algorithm, receipt.ledger, sorted(settings.items()), receipt.candidates is None)),
        )
        if key in self.outcomes:
            return self.outcomes[key]
        book = self._book(receipt)
        outcome: Outcome
        if isinstance(book, str):
            outcome = book
        else:
            try:
                config = RecallSettings(
                    act_threshold=float(settings["act_threshold"]),
                    floor=float(settings["floor"]),
                    act_tag_hits=int(settings["act_tag_hits"]),
                    limit=int(settings["limit"]),
                )
            except ConfigError:
                outcome = "receipt-settings-invalid"
            else:
                outcome = self._recall(book, receipt, config)
        self.outcomes[key] = outcome
        return outcome

    def _recall(
        self, book: pure.Postings, receipt: receipt_format.Receipt, config: RecallSettings
    ) -> Outcome:
        """Re-run the recall of the receipt's version: what it gives, or why it cannot.
        The candidates shown on ``ASK_HUMAN`` are derived only for a receipt that names
        them (older receipts do not cover them)."""
        if receipt.algorithm == pure.IMPLEMENTS:
            result = pure.recall_playbook(book, receipt.task, settings=config)
        else:
            tree = receipt.ledger_tree or ""
            near = None
            if receipt.candidates is not None:
                near = self.episodes.candidates(tree)
            derived = self.ledgers.recall(book, receipt, config, candidates=near)
            if isinstance(derived, str):
                return derived
            result = derived
        given = given_evidence(result) if receipt.algorithm >= 4 else None
        shown = nearest.shown_candidates(result) if receipt.candidates is not None else None
        return Derived(
            result.verdict,
            tuple(r.id for r in result.rules),
            given,
            None if shown is None else tuple(shown[0]),
            None if shown is None else shown[1],
        )

    def _no_playbook(
        self, path: str, episode: Episode, receipt: receipt_format.Receipt, code: str
    ) -> GateProblem:
        short = receipt.short_playbook
        message = {
            "receipt-playbook-missing": f"playbook blob {short} does not exist in this repository",
            "receipt-playbook-unknown": f"blob {short} was never a version of {self.playbook_rel} "
            "in this history",
            "receipt-playbook-invalid": f"the playbook at {short} does not parse",
            "receipt-settings-invalid": "its recall settings are not valid settings",
            "receipt-ledger-missing": f"ledger tree {(receipt.ledger_tree or '')[:12]} does not exist "
            "in this repository",
            "receipt-ledger-unknown": f"tree {(receipt.ledger_tree or '')[:12]} was never the episodes "
            "folder in this history",
        }[code]
        return problem(
            code,
            f"{episode.id}'s receipt {receipt.id} cannot be proved: {message}",
            file=path,
            field="recalled",
            episode=episode.id,
            hint="a receipt names the committed playbook (and ledger) recall read: commit them "
            "before recording, or record the episode without the receipt",
        )
