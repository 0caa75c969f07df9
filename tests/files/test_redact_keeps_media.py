"""``redact`` of an episode with an attached image took the 'attachments' reference
back and said nothing of the image itself: memory/media/<sha256>.png stays in the tree
(media files are append-only; the gate refuses deleting one), so the photo a user meant
to take back is still there, and in every clone. ``redact`` now names the files it
leaves (stderr; ``media_kept`` in --json), the gate still accepts the redaction."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli

from scarwarden.repo import MemoryRepo


def _attached(cli: Cli, tmp_path: Path) -> tuple[str, str]:
    from test_media import png

    image = tmp_path / "card.png"
    image.write_bytes(png())
    added = cli("episode", "add", "--task", "Card", "--correction", "Logo cut", "--attach", str(image))
    assert added.exit_code == 0, added.output
    ep = added.stdout.strip()
    [stored] = [p.name for p in (Path(cli.root) / "memory" / "media").iterdir()]
    return ep, f"memory/media/{stored}"


def test_redacting_an_attachment_names_the_image_left_in_the_tree(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    cli = make_cli(memory_repo.root)
    ep, stored = _attached(cli, tmp_path)
    done = cli("redact", ep, "--reason", "a customer's face")
    assert done.exit_code == 0, done.output
    assert f"warning: the attached image stays in the tree: {stored}" in done.stderr, done.stderr
    assert (memory_repo.root / stored).is_file()
    assert cli("check", "--all").exit_code == 0


def test_json_lists_the_media_kept_and_other_fields_say_nothing(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    cli = make_cli(memory_repo.root)
    ep, stored = _attached(cli, tmp_path)
    task_only = cli("redact", ep, "--fields", "task", "--reason", "a name", "--json")
    assert task_only.exit_code == 0, task_only.output
    assert json.loads(task_only.stdout)["media_kept"] == [] and "image" not in task_only.stderr
    rest = cli("redact", ep, "--fields", "attachments", "--reason", "a face", "--json")
    assert rest.exit_code == 0, rest.output
    assert json.loads(rest.stdout)["media_kept"] == [stored]
