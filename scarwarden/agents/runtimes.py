"""The front doors of more agent runtimes (issue 20): a Claude Code skill and the MCP
server entry of Claude Code, Cursor, VS Code and Codex.

``GEMINI.md`` is a marked section like ``AGENTS.md`` (:mod:`scarwarden.agents.exports`
handles it). The Claude Code skill (``.claude/skills/scarwarden/SKILL.md``) is a whole
generated file: front matter that tells Claude Code when to load it, the loop (recall
before acting, follow the verdict, cite, record with the receipt), then the rules.
:func:`mcp_entries` renders each client's MCP configuration for ``scarwarden export
mcp-config``; :func:`check_mcp_configs` compares the project files a client reads with it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarwarden.errors import Problem, ScarwardenError
from scarwarden.repo import MemoryRepo

SKILL_DESCRIPTION = (
    "The team's auditable memory for this repository (Scarwarden). Use it before acting on "
    "a task (recall the rules that apply), when citing a rule, and after acting (record "
    "what happened with the recall receipt)."
)

SKILL_LOOP = """\
# Scarwarden: the team's memory

Rules in this repository were learnt from recorded episodes; each cites the episodes
that taught it. Use them like this:

1. **Before acting, recall.** Run `scarwarden recall --json "<the task in plain words>"`
   (or call the `recall` tool of `scarwarden mcp`). It returns a verdict, the rules that
   apply, and a `receipt`.
2. **Follow the verdict.** `ACT`: follow the rules. `ACT_AND_FLAG`: follow them, state your
   assumptions and flag the answer for review. `ASK_HUMAN`: memory has nothing; do not
   guess, ask a human, then record their answer with
   `scarwarden ask "<task>" --answer "<their words>"`.
3. **Cite what you apply** inline, exactly `[PB-NN, learnt in ep-...]` (each rule below
   gives its citation). Never cite a rule recall did not return for this task.
4. **Record what happened**, with the receipt recall gave you, unchanged:
   `scarwarden episode add --task "<task>" --action "..." --outcome "..."
   --rule-applied PB-NN --receipt <the receipt's ID>`
   (or `record_episode(..., rules_applied=[...], receipt=<the receipt object>)`). The
   receipt proves from git which rules you were given; `rules_applied` must be among
   them unless you say why (`--rules-applied-reason`). Record corrections above all:
   they are how the memory learns.
"""


def skill_file(rules_section: str) -> str:
    """The whole SKILL.md: front matter, the loop, then the marked rules section."""
    return f"---\nname: scarwarden\ndescription: {SKILL_DESCRIPTION}\n---\n\n{SKILL_LOOP}\n{rules_section}\n"


# -- MCP configuration -------------------------------------------------------------

#: client -> (the project file it reads, the key holding servers); Codex reads TOML.
MCP_CLIENTS: dict[str, tuple[str, str]] = {
    "claude-code": (".mcp.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".vscode/mcp.json", "servers"),
    "codex": (".codex/config.toml", "mcp_servers"),
}


@dataclass(frozen=True)
class McpEntry:
    """One client's server entry: where it goes, its text, and a command that adds it."""

    client: str
    path: str
    text: str
    command: str | None

    def to_json(self) -> dict[str, Any]:
        return {"client": self.client, "path": self.path, "config": self.text, "command": self.command}


def scarwarden_command(bare: bool = False) -> str:
    """The command a client should start: the absolute path of the running ``scarwarden``
    (issue 28: a GUI client does not see a virtual environment's PATH), or with ``bare``
    (or when it cannot be found) the name alone."""
    if not bare:
        argv0 = Path(sys.argv[0])
        beside = Path(sys.executable).parent / "scarwarden"  # python -m scarwarden
        for candidate in (argv0, beside):
            if candidate.name == "scarwarden" and candidate.is_file():
                return str(candidate.absolute())
        found = shutil.which("scarwarden")
        if found:
            return str(Path(found).absolute())
    return "scarwarden"


def _server(repo_arg: str, client: str, command: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command, "args": ["mcp", "--repo", repo_arg]}
    if client in ("claude-code", "vscode"):
        entry = {"type": "stdio", **entry}
    return entry


def mcp_entries(repo: MemoryRepo, *, bare: bool = False) -> list[McpEntry]:
    """The server entry of each client, pointing at ``repo`` (VS Code: at its workspace),
    starting this executable by its absolute path (``bare``: by name, from PATH)."""
    root = str(repo.root)
    exe = scarwarden_command(bare)
    serve = f"{shlex.quote(exe)} mcp --repo {shlex.quote(root)}"
    out = []
    command: str | None
    for client, (path, key) in MCP_CLIENTS.items():
        repo_arg = "${workspaceFolder}" if client == "vscode" else root
        if client == "codex":
            args = ", ".join(json.dumps(a) for a in ["mcp", "--repo", root])
            text = f"[mcp_servers.scarwarden]\ncommand = {json.dumps(exe)}\nargs = [{args}]\n"
            command = f"codex mcp add scarwarden -- {serve}"
        else:
            text = json.dumps({key: {"scarwarden": _server(repo_arg, client, exe)}}, indent=2) + "\n"
            command = (
                f"claude mcp add --scope project scarwarden -- {serve}" if client == "claude-code" else None
            )
        out.append(McpEntry(client, path, text, command))
    return out


def check_mcp_configs(repo: MemoryRepo) -> list[str]:
    """``export mcp-config --check``: the clients whose project file (when there is one)
    holds a ``scarwarden`` server that runs ``scarwarden mcp`` on this repository.
    :class:`ScarwardenError` (exit 1) naming each file that does not, or when none does."""
    ok, problems = [], []
    for entry in mcp_entries(repo):
        path = repo.root / entry.path
        if not path.is_file():
            continue
        problem = _config_problem(repo, path, entry)
        if problem is None:
            ok.append(entry.client)
        else:
            problems.append(Problem(problem, file=entry.path))
    if problems or not ok:
        raise ScarwardenError(
            f"{len(problems)} MCP configuration file(s) do not run Scarwarden on this repository"
            if problems
            else "no MCP configuration file points at Scarwarden",
            problems=problems,
            hint="run 'scarwarden export mcp-config' and add the entry it prints for your client",
        )
    return ok


def _config_problem(repo: MemoryRepo, path: Path, entry: McpEntry) -> str | None:
    """Why ``path`` does not run ``scarwarden mcp`` on ``repo``; None when it does."""
    _file, key = MCP_CLIENTS[entry.client]
    try:
        raw = path.read_text(encoding="utf-8")
        if entry.client == "codex":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10: no TOML reader in the standard library
                return None if "[mcp_servers.scarwarden]" in raw else "has no [mcp_servers.scarwarden]"
            data: Any = tomllib.loads(raw)
        else:
            data = json.loads(raw)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot be read as {'TOML' if entry.client == 'codex' else 'JSON'} ({exc})"
    servers = data.get(key) if isinstance(data, dict) else None
    server = servers.get("scarwarden") if isinstance(servers, dict) else None
    if not isinstance(server, dict):
        return f"has no '{key}.scarwarden' server"
    command, args = server.get("command"), server.get("args")
    if not isinstance(command, str) or Path(command).name != "scarwarden":
        return f"'{key}.scarwarden' does not run the scarwarden command"
    if not isinstance(args, list) or "mcp" not in args:
        return f"'{key}.scarwarden' does not run 'scarwarden mcp'"
    if "--repo" in args and args.index("--repo") + 1 < len(args):
        target = str(args[args.index("--repo") + 1])
        if (
            target not in ("${workspaceFolder}", ".")
            and Path(target).expanduser().resolve() != repo.root.resolve()
        ):
            return f"'{key}.scarwarden' runs on {target}, not on this repository"
    return None
