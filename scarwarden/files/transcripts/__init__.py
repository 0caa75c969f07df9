"""Recorded runs (chat transcripts, benchmark logs) as episodes: ``episode import``.

:mod:`.stream` reads a file a conversation at a time; :mod:`.chat` and :mod:`.tau` turn
one conversation into an episode; :mod:`.importer` gives each its stable ID and writes
the batch through :func:`scarwarden.files.record.land` (one commit, the gate), holding
it in temporary files until then (:mod:`.spool`).
"""

#: The formats ``episode import --format`` reads.
FORMATS = ("openai-chat", "tau-bench")
