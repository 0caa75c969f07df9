"""Settings: ``scarwarden.yaml`` at the repository root, overridden by environment.

Every setting has a documented default (docs/formats.md#settings), so the file is optional.
Values of the wrong type are a :class:`ConfigError` naming the key, never silently
ignored. The API key is deliberately *not* a setting: it is read from the environment
only (``SCARWARDEN_API_KEY`` or a provider's own variable) so it can never be committed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scarwarden.errors import ConfigError, ValidationError
from scarwarden.providers import KEY_PROVIDERS, PROVIDERS, apply_preset, provider_for_key
from scarwarden.records import field, fields, record
from scarwarden.regular_files import read_regular
from scarwarden.settings_check import (
    MAX_INTEGER,
    SETTINGS_FILE,
    api_key_problem,
    checked_memory_dir,
    coerce_setting,
    range_problem,
    text_setting_problem,
    unquoted_off,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = SETTINGS_FILE

DEFAULT_BASE_URL = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"


@record(frozen=True)
class RecallSettings:
    """Router thresholds; see docs/recall.md for how they were chosen.

    ``act_threshold`` and ``floor`` apply to the best-ranked rule's *confidence*
    (0 to 1, :func:`scarwarden.recall.confidence`), not to its ranking score. Defaults
    measured with ``python bench/recall_quality.py --tuning`` (66 hand-labelled tasks
    against the demo memory, cost = errors + unknown tasks sent to ACT, the middle of
    the best plateau; issue 13 re-measured them with the ledger-aware evidence).
    """

    #: A confidence at or above this is a strong match (``ACT``), when the match also
    #: rests on ``act_tag_hits`` words' worth of evidence.
    act_threshold: float = 0.1825
    #: Below this confidence nothing counts as a match (``ASK_HUMAN``).
    floor: float = 0.13
    #: Tag hits on the best rule that make it ``ACT`` whatever its confidence (when
    #: they rest on as many words' worth of evidence); also the evidence ACT needs.
    act_tag_hits: int = 2
    #: Default number of rules returned.
    limit: int = 5

    def __post_init__(self) -> None:
        # Written so that NaN fails each test: it compares false with everything.
        problems = []
        if not 0 <= self.floor <= 1:
            problems.append(
                f"recall.floor must not be negative, got {self.floor}"
                if self.floor < 0
                else f"recall.floor is a confidence between 0 and 1, got {self.floor}"
            )
        if not 0 <= self.act_threshold <= 1:
            problems.append(
                f"recall.act_threshold is a confidence between 0 and 1, got "
                f"{self.act_threshold}" + (" (a ranking score?)" if self.act_threshold > 1 else "")
            )
        elif self.act_threshold < self.floor:
            problems.append(
                f"recall.act_threshold ({self.act_threshold}) must not be below recall.floor ({self.floor})"
            )
        for key in ("act_tag_hits", "limit"):
            value = getattr(self, key)
            if value < 1:
                problems.append(f"recall.{key} must be at least 1, got {value}")
            elif value > MAX_INTEGER:
                problems.append(f"recall.{key} must be at most {MAX_INTEGER}, got {value}")
        if problems:
            raise ConfigError("; ".join(problems), hint=f"fix the 'recall:' section of {CONFIG_FILE}")


def _check_ranges(settings: Any, section: str) -> None:
    """The ranges of :mod:`scarwarden.settings_check`, for settings built in code (the
    Python API, a test); a file's or the environment's values were checked as read."""
    for item in fields(settings):
        problem = range_problem(f"{section}.{item.name}", getattr(settings, item.name))
        if problem is not None:
            raise ConfigError(
                f"{section}.{item.name} {problem}", hint=f"fix the '{section}:' section of {CONFIG_FILE}"
            )


@record(frozen=True)
class ModelSettings:
    """The OpenAI-compatible chat completions endpoint and the model for each role."""

    base_url: str = DEFAULT_BASE_URL
    distill_model: str = "qwen3.6-flash"
    answer_model: str = "qwen3.7-plus"
    #: The vision-language model of ``audit-image`` (issue 19), on the same endpoint;
    #: empty: none, so audit-image judges no image (the deepseek preset).
    vision_model: str = "qwen3-vl-plus"
    #: Seconds to wait for one HTTP response.
    timeout: float = 60.0
    #: Retries after the first attempt on 429, 5xx and connection errors.
    max_retries: int = 3
    #: First backoff delay in seconds; doubled on each retry, with jitter.
    backoff: float = 1.0
    #: Ask for ``response_format: {"type": "json_object"}`` where JSON is wanted.
    json_mode: bool = True
    #: A named preset (:mod:`scarwarden.providers`: openai, ollama, vllm, openrouter...)
    #: filling in base_url, the models and the key variable; empty: the DashScope defaults.
    provider: str = ""

    def __post_init__(self) -> None:
        _check_ranges(self, "model")


@record(frozen=True)
class DistillSettings:
    #: Approximate prompt budget (tokens, counted as characters/4) for one model call.
    token_budget: int = 12000
    #: At most this many existing rules are sent with a batch as context.
    max_context_rules: int = 40

    def __post_init__(self) -> None:
        _check_ranges(self, "distill")


@record(frozen=True)
class AnswerSettings:
    #: How many times the reviewer may send a draft back before giving up.
    qc_max_retakes: int = 2

    def __post_init__(self) -> None:
        _check_ranges(self, "answer")


@record(frozen=True)
class MediaSettings:
    """Images attached to episodes and audited (issue 19; docs/formats.md#media)."""

    #: Largest image stored under memory/media/ (the gate refuses bigger ones).
    max_bytes: int = 5 * 1024 * 1024
    #: Images above this many bytes, or this many pixels on a side, are resized and
    #: re-encoded before a vision model sees them (needs the ``vision`` extra: Pillow).
    send_max_bytes: int = 1024 * 1024
    send_max_side: int = 1568

    def __post_init__(self) -> None:
        _check_ranges(self, "media")


@record(frozen=True)
class SecretSettings:
    """Known false positives of the secret scanner (docs/privacy.md)."""

    #: Fingerprints (``sha256:`` + 12 hex digits, as the refusal prints them) to allow.
    allow: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        bad = [v for v in self.allow if not (isinstance(v, str) and v.startswith("sha256:"))]
        if bad:
            raise ConfigError(
                f"secrets.allow lists fingerprints like 'sha256:0123456789ab', got {bad[0]!r}",
                hint="copy the fingerprint from the refusal message; never the secret itself",
            )


@record(frozen=True)
class PrivacySettings:
    """What to do with personal data in an episode: ``off``, ``warn`` or ``refuse``."""

    email: str = "off"
    phone: str = "off"
    card: str = "warn"

    def __post_init__(self) -> None:
        for key in ("email", "phone", "card"):
            if getattr(self, key) not in ("off", "warn", "refuse"):
                raise ConfigError(
                    f"privacy.{key} must be off, warn or refuse, got {getattr(self, key)!r}",
                    hint=f"fix the 'privacy:' section of {CONFIG_FILE}",
                )

    def kinds(self, action: str) -> tuple[str, ...]:
        return tuple(k for k in ("email", "phone", "card") if getattr(self, k) == action)


@record(frozen=True)
class Config:
    memory_dir: str = "memory"
    recall: RecallSettings = field(default_factory=RecallSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    distill: DistillSettings = field(default_factory=DistillSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    secrets: SecretSettings = field(default_factory=SecretSettings)
    privacy: PrivacySettings = field(default_factory=PrivacySettings)
    media: MediaSettings = field(default_factory=MediaSettings)
    #: Where the settings came from, for messages.
    source: str = "defaults"
    #: The key variable the provider was chosen from (``OPENAI_API_KEY`` -> openai)
    #: when the settings name neither a provider nor a base URL; "" otherwise.
    provider_from: str = ""
    #: True when a provider or a base URL was set (scarwarden.yaml or the environment):
    #: only then does a bare ``SCARWARDEN_API_KEY`` know which server it belongs to.
    endpoint_set: bool = False

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key from the environment, or ``None``. Never stored anywhere.

        A key is sent only to the server it belongs to (issue 28): ``SCARWARDEN_API_KEY``
        when the settings name a provider or a base URL, else the provider's own variable
        (``OPENAI_API_KEY`` for the openai preset, ``DASHSCOPE_API_KEY`` for the default)."""
        env = os.environ if environ is None else environ
        own = self.key_env()
        for var in ("SCARWARDEN_API_KEY" if self.endpoint_set else None, own):
            key = env.get(var) if var else None
            if key:
                # Refused here, not by the HTTP library as it builds the header.
                problem = api_key_problem(key)
                if problem is not None:
                    raise ConfigError(
                        f"{var} {problem}",
                        hint=f"set {var} to the key exactly as the provider gave it "
                        "(a key read from a file may end in a line break)",
                    )
                return key
        return None

    def key_names(self) -> str:
        """The variables to set for a key, for hints: ``SCARWARDEN_API_KEY`` only once
        a provider or base URL names the server (issue 28)."""
        own = self.key_env() or "DASHSCOPE_API_KEY"
        if self.endpoint_set:
            return f"SCARWARDEN_API_KEY (or {own})"
        others = ", ".join(var for var in KEY_PROVIDERS if var != own)
        return f"{own} (or {others}; SCARWARDEN_API_KEY once a provider or base URL is set)"

    def stray_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """Why a set ``SCARWARDEN_API_KEY`` is not used (it names no server), or None."""
        env = os.environ if environ is None else environ
        if self.endpoint_set or not env.get("SCARWARDEN_API_KEY"):
            return None
        return (
            "SCARWARDEN_API_KEY is set, but no provider or base URL says which server it belongs "
            "to, so it is not sent anywhere: set SCARWARDEN_PROVIDER (or model.provider: openai, "
            "dashscope, ...) or SCARWARDEN_BASE_URL (or model.base_url) for any OpenAI-compatible server"
        )

    def key_env(self) -> str | None:
        """The provider's own key variable (``SCARWARDEN_API_KEY`` always works too);
        None for a local preset that needs no key. Another provider's variable is
        never read: a DashScope key is not sent to OpenAI."""
        preset = PROVIDERS.get(self.model.provider)
        if preset is None:  # no preset: the DashScope default, as before presets
            return "DASHSCOPE_API_KEY"
        return preset.key_env

    def needs_key(self) -> bool:
        """False for a local preset (ollama, vllm, lmstudio): no key, still a model."""
        return self.key_env() is not None


_SECTIONS: dict[str, type] = {
    "recall": RecallSettings,
    "model": ModelSettings,
    "distill": DistillSettings,
    "answer": AnswerSettings,
    "secrets": SecretSettings,
    "privacy": PrivacySettings,
    "media": MediaSettings,
}

_ENV_OVERRIDES = {
    "SCARWARDEN_PROVIDER": ("model", "provider"),
    "SCARWARDEN_BASE_URL": ("model", "base_url"),
    "SCARWARDEN_MODEL_DISTILL": ("model", "distill_model"),
    "SCARWARDEN_MODEL_ANSWER": ("model", "answer_model"),
    "SCARWARDEN_MODEL_VISION": ("model", "vision_model"),
    "SCARWARDEN_TIMEOUT": ("model", "timeout"),
    "SCARWARDEN_MAX_RETRIES": ("model", "max_retries"),
}


def _build_section(cls: type, raw: Any, where: str, origins: Mapping[str, str]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping, got {type(raw).__name__}")
    defaults = cls()
    known = {f.name for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            import difflib

            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            raise ConfigError(
                f"unknown setting {where}.{key}",
                hint=(f"did you mean '{where}.{close[0]}'? " if close else "")
                + f"known settings in '{where}': {', '.join(sorted(known))}",
            )
        name = f"{where}.{key}"
        if cls is PrivacySettings and isinstance(value, bool):
            value = unquoted_off(value, name)
        values[key] = coerce_setting(value, getattr(defaults, key), name, origins.get(name))
    return cls(**values)


def _from_environment(env: Mapping[str, str], sections: dict[str, Any]) -> dict[str, str]:
    """The environment's overrides put into ``sections``; returns setting -> variable."""
    origins: dict[str, str] = {}
    for var, (section, key) in _ENV_OVERRIDES.items():
        if not env.get(var):
            continue
        text: str = env[var]
        problem = text_setting_problem(text)
        if problem is not None:
            raise ConfigError(f"{var} {problem}", hint=f"fix or unset {var} in the environment")
        default = getattr(_SECTIONS[section](), key)
        try:
            value: Any = type(default)(text)
        except ValueError:
            raise ConfigError(f"{var} must be {type(default).__name__}, got {text!r}") from None
        target = sections.get(section)
        if target is None:
            target = sections[section] = {}
        if isinstance(target, dict):
            target[key] = value
            origins[f"{section}.{key}"] = var
    return origins


def parse_config(raw: Any, *, source: str = CONFIG_FILE, environ: Mapping[str, str] | None = None) -> Config:
    """Build a :class:`Config` from the parsed YAML mapping plus environment overrides."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source} must hold a mapping of settings")
    unknown = set(raw) - set(_SECTIONS) - {"memory_dir"}
    if unknown:
        raise ConfigError(
            f"unknown setting(s) in {source}: {', '.join(sorted(map(str, unknown)))}",
            hint=f"known top-level keys: memory_dir, {', '.join(_SECTIONS)}",
        )
    memory_dir = checked_memory_dir(raw.get("memory_dir", "memory"), source)
    sections = {
        name: dict(raw.get(name) or {}) if isinstance(raw.get(name), Mapping) else raw.get(name)
        for name in _SECTIONS
    }
    env = os.environ if environ is None else environ
    origins = _from_environment(env, sections)
    model = sections.get("model")
    endpoint_set = isinstance(model, dict) and bool(model.get("provider") or model.get("base_url"))
    provider_from = ""
    if not endpoint_set and (model is None or isinstance(model, dict)):
        provider_from = provider_for_key(env)
    if provider_from:
        sections["model"] = model = {**(model or {}), "provider": KEY_PROVIDERS[provider_from]}
    # Where the provider name came from, for the error that names it (issue 18).
    apply_preset(model, source, from_env=bool(env.get("SCARWARDEN_PROVIDER")))
    built = {name: _build_section(cls, sections[name], name, origins) for name, cls in _SECTIONS.items()}
    return Config(
        memory_dir=memory_dir.rstrip("/"),
        source=source,
        provider_from=provider_from,
        endpoint_set=endpoint_set,
        **built,
    )


def load_config(root: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Read ``scarwarden.yaml`` under ``root`` if it exists."""
    path = root / CONFIG_FILE
    if not path.exists():
        # Before importing YAML (~12 ms): the hook on a commit that touches no memory
        # and has no settings file never needs it.
        return parse_config({}, source="defaults", environ=environ)
    from scarwarden import yamlio

    try:
        raw = yamlio.load(read_regular(path), source=CONFIG_FILE)
    except OSError as exc:
        from scarwarden.errors import file_access_error

        error = file_access_error(exc, root=str(root))
        raise error or ConfigError(f"cannot read {CONFIG_FILE}: {exc}") from None
    except ValidationError as exc:  # bad YAML is a configuration error (exit 2)
        raise ConfigError(exc.message, problems=exc.problems) from None
    return parse_config(raw, source=CONFIG_FILE, environ=environ)
