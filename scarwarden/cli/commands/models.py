"""``scarwarden models``: the provider presets, what is configured, and a live test."""

from __future__ import annotations

import os

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.errors import ScarwardenError
from scarwarden.llm.endpoint import shown_url


@click.command()
@click.option(
    "--test",
    "run_test",
    is_flag=True,
    help="Contact the configured server: reachable, key accepted, each model served.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the presets and settings (or the test) as JSON.")
@click.pass_context
def models(ctx: click.Context, run_test: bool, as_json: bool) -> None:
    """The provider presets, the model settings in use, and (--test) whether they work.

    Pick a preset in scarwarden.yaml and export its key; anything set explicitly
    (model.base_url, model.answer_model, SCARWARDEN_BASE_URL...) wins over it:

    \b
      model:
        provider: openai        # or ollama, vllm, openrouter, dashscope...

    \b
    Exit codes with --test: 0 all good; 3 server unreachable, busy or failing
    (HTTP 408, 429, 5xx); 4 no key set; 5 key refused or a model not served.

    \b
    Examples:
      scarwarden models
      scarwarden models --json
      SCARWARDEN_PROVIDER=ollama scarwarden models --test   # (not run: contacts a server)
    """
    # Only the settings matter: the model can be set up before (or without) 'init'.
    repo = get_repo(ctx, initialised=False)
    config = repo.config
    if run_test:
        from scarwarden.llm.probe import probe

        report = probe(config, os.environ)
        if as_json:
            echo_json(report.to_json())
        else:
            click.echo(f"Testing {report.base_url} (provider: {report.provider})")
            for check in report.checks:
                mark = {True: "ok  ", False: "FAIL", None: "warn"}[check.ok]
                click.echo(f"  {mark} {check.name:20} {check.detail}")
        if not report.ok:
            failed = next(c for c in report.checks if c.ok is False)
            raise ScarwardenError(
                f"the model server check failed: {failed.name}: {failed.detail}",
                hint="see docs/models.md for each provider's recipe",
                exit_code=report.exit_code,
            )
        return
    _list(config, as_json)


#: Shown for an endpoint without a vision model (issue 19: the deepseek preset).
_NO_VISION = "(none: audit-image lists the rules and judges no image)"


def _list(config: object, as_json: bool) -> None:
    from scarwarden.config import Config
    from scarwarden.providers import PROVIDERS

    assert isinstance(config, Config)
    settings = config.model
    key_var = config.key_env()
    key_set = bool(config.api_key(os.environ))
    current = {
        "provider": settings.provider or None,
        "base_url": shown_url(settings.base_url),  # never its password
        "distill_model": settings.distill_model,
        "answer_model": settings.answer_model,
        "vision_model": settings.vision_model or None,
        "key_variable": key_var,
        "key_set": key_set,
        "provider_from": config.provider_from or None,
        "key_problem": config.stray_key(os.environ),
    }
    if as_json:
        presets = [
            {
                "name": p.name,
                "base_url": p.base_url,
                "distill_model": p.distill_model,
                "answer_model": p.answer_model,
                "vision_model": p.vision_model or None,
                "key_variable": p.key_env,
                "note": p.note,
            }
            for p in PROVIDERS.values()
        ]
        echo_json({"configured": current, "presets": presets})
        return
    click.echo(f"Configured ({config.source}):")
    chosen = (
        f"  (chosen by {config.provider_from}: no provider or base_url set)" if config.provider_from else ""
    )
    click.echo(f"  provider       {settings.provider or '(none: the DashScope defaults)'}{chosen}")
    click.echo(f"  base_url       {current['base_url']}")
    click.echo(f"  distill_model  {settings.distill_model}")
    click.echo(f"  answer_model   {settings.answer_model}")
    click.echo(f"  vision_model   {settings.vision_model or _NO_VISION}")
    if key_var is None:
        click.echo("  key            none needed (a local server)")
    else:
        state = "set" if key_set else "NOT SET: answers are briefs, distill runs offline"
        names = f"SCARWARDEN_API_KEY or {key_var}" if config.endpoint_set else key_var
        click.echo(f"  key            {names}: {state}")
        stray = config.stray_key(os.environ)
        if stray:
            click.echo(f"  note           {stray}")
    click.echo("\nPresets (model.provider in scarwarden.yaml, or SCARWARDEN_PROVIDER):")
    for p in PROVIDERS.values():
        mark = "*" if p.name == settings.provider else " "
        key = p.key_env or "no key"
        click.echo(f" {mark}{p.name:11} {p.base_url:56} {key}")
        vision = p.vision_model or "none"
        click.echo(f"  {'':11} distill {p.distill_model}, answer {p.answer_model}, vision {vision}")
    click.echo("\nTest the configured one: scarwarden models --test")
