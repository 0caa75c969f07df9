"""Real-looking but fake credentials, built at run time.

No credential-shaped literal sits in this repository (a forge's push protection would
block it, and a scanner should never learn from one): every value is a prefix joined to
characters drawn from a seeded generator, so it has the shape and entropy of the real
thing and belongs to no one.
"""

from __future__ import annotations

import base64
import json
import random
import string

_RNG = random.Random(17)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"


def draw(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def fake_secrets() -> dict[str, str]:
    """kind -> a sentence an agent might write that carries one credential of that kind."""
    dash = "-" * 5
    pem_body = base64.b64encode(bytes(_RNG.randrange(256) for _ in range(96))).decode()
    return {
        "aws-access-key-id": "ran aws configure with " + "AK" + "IA" + draw(UPPER_DIGITS, 16),
        "aws-session-key-id": "temporary creds " + "AS" + "IA" + draw(UPPER_DIGITS, 16) + " from sts",
        "aws-secret-access-key": "aws_secret_access_key = " + draw(ALNUM + "/+", 40),
        "gcp-service-account": '{"type": "service_account", "private_key_id": "' + draw(HEX, 40) + '"}',
        "azure-storage-key": "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
        + draw(ALNUM + "+/", 86)
        + "==",
        "azure-client-secret": "client secret set to " + draw(ALNUM, 3) + "8" + "Q" + "~" + draw(ALNUM, 34),
        "github-token": "pushed with token " + "gh" + "p_" + draw(ALNUM, 36),
        "github-oauth": "oauth " + "gh" + "o_" + draw(ALNUM, 36) + " expired",
        "github-app-token": "the app used " + "gh" + "s_" + draw(ALNUM, 36),
        "github-fine-grained-token": "new PAT "
        + "github"
        + "_pat_"
        + draw(ALNUM, 22)
        + "_"
        + draw(ALNUM, 59),
        "gitlab-token": "CI used " + "gl" + "pat-" + draw(ALNUM, 20),
        "slack-bot-token": "bot token " + "xo" + "xb-" + draw("0123456789", 12) + "-" + draw(ALNUM, 24),
        "slack-user-token": "user token " + "xo" + "xp-" + draw("0123456789", 12) + "-" + draw(ALNUM, 32),
        "slack-webhook": "posted to https://hooks.slack.com/services/T"
        + draw(UPPER_DIGITS, 8)
        + "/B"
        + draw(UPPER_DIGITS, 8)
        + "/"
        + draw(ALNUM, 24),
        "discord-bot-token": "discord: "
        + "M"
        + draw(ALNUM, 23)
        + "."
        + draw(ALNUM, 6)
        + "."
        + draw(ALNUM, 27),
        "discord-webhook": "https://discord.com/api/webhooks/"
        + draw("0123456789", 18)
        + "/"
        + draw(ALNUM + "_-", 68),
        "telegram-bot-token": "bot " + draw("0123456789", 10) + ":" + "AA" + draw(ALNUM, 33) + " replied",
        "stripe-live-key": "charged with " + "sk" + "_live_" + draw(ALNUM, 24),
        "stripe-restricted-key": "reports use " + "rk" + "_live_" + draw(ALNUM, 24),
        "openai-key": "OPENAI key " + "sk" + "-proj-" + draw(ALNUM + "_-", 80),
        "openai-legacy-key": "old key " + "sk" + "-" + draw(ALNUM, 20) + "T3Blbk" + "FJ" + draw(ALNUM, 20),
        "anthropic-key": "claude key " + "sk" + "-ant-api03-" + draw(ALNUM + "_-", 90),
        "google-api-key": "maps key " + "AI" + "za" + draw(ALNUM + "_-", 35),
        "twilio-api-key": "twilio " + "S" + "K" + draw(HEX, 32),
        "sendgrid-key": "mail via " + "S" + "G." + draw(ALNUM, 22) + "." + draw(ALNUM, 43),
        "npm-token": "publish with " + "np" + "m_" + draw(ALNUM, 36),
        "pypi-token": "twine upload -p " + "py" + "pi-" + "AgEIcHlwaS5vcmc" + draw(ALNUM, 70),
        "huggingface-token": "hub login " + "h" + "f_" + draw(string.ascii_letters, 34),
        "private-key": dash + "BEGIN RSA PRIVATE KEY" + dash + "\n" + pem_body + "\n" + dash + "END RSA",
        "private-key-escaped": '"private_key": "'
        + dash
        + "BEGIN PRIVATE KEY"
        + dash
        + "\\n"
        + pem_body
        + '"',
        "jwt": "Authorization: Bearer "
        + _b64url({"alg": "HS256", "typ": "JWT"})
        + "."
        + _b64url({"sub": draw(HEX, 12), "exp": 1893456000})
        + "."
        + draw(ALNUM + "_-", 43),
        "url-password": "cloned postgres://admin:" + draw(ALNUM, 14) + "@db.internal:5432/prod",
        "keyword-password": "set password = " + draw(string.ascii_lowercase, 5) + "Q7!" + draw(ALNUM, 4),
        "keyword-api-key": "api_key: " + draw(ALNUM, 20) + "7",
        "keyword-secret": "the client_secret is " + draw(ALNUM, 28) + "3",
    }


def _wrap(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _fullwidth(text: str) -> str:
    """ASCII letters and digits as their fullwidth forms (NFKC folds them back)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() or c == "_" else c for c in text)


def _cyrillic(text: str) -> str:
    """Latin letters swapped for Cyrillic look-alikes where there is one."""
    return text.translate(str.maketrans("aeopcxyABEKMHOPCTX", "аеорсхуАВЕКМНОРСТХ"))


def _zero_width(text: str) -> str:
    """A zero-width space after every fourth character."""
    return "\u200b".join(text[i : i + 4] for i in range(0, len(text), 4))


def more_secrets() -> dict[str, str]:
    """Issue 27's shapes: environment-style names, header and command-line credentials,
    newer token prefixes, and the evasions (base64, zero-width, fullwidth, Cyrillic)."""
    hexkey = draw(HEX, 32)
    pw = draw(string.ascii_lowercase, 6) + "Q7!" + draw(ALNUM, 5)
    gh = "gh" + "p_" + draw(ALNUM, 36)
    return {
        "env-postgres-password": "POSTGRES_PASSWORD=" + pw,
        "env-mysql-root-password": "MYSQL_ROOT_PASSWORD: " + pw,
        "env-dd-api-key": "DD_API_KEY=" + hexkey,
        "env-datadog-api-key": "DATADOG_API_KEY=" + draw(HEX, 32),
        "rails-secret-key-base": "secret_key_base: " + draw(HEX, 128),
        "env-django-secret-key": "DJANGO_SECRET_KEY='" + draw(ALNUM + "!@#%^&*", 50) + "'",
        "env-redis-password": "REDIS_PASSWORD=" + draw(ALNUM, 18) + "9",
        "env-jwt-secret": "JWT_SECRET=" + draw(ALNUM, 40) + "1",
        "env-slack-signing-secret": "SLACK_SIGNING_SECRET=" + draw(HEX, 32),
        "compose-db-password": "environment:\n  - DB_PASSWORD=" + pw,
        "json-password": '{"user": "svc", "password": "' + pw + '"}',
        "x-key-in-yaml": "x-db-token: " + draw(ALNUM, 30) + "5",
        "redis-empty-user": "connected to redis://:" + draw(ALNUM, 16) + "@cache.internal:6379/0",
        "amqp-url": "broker amqp://guest:" + draw(ALNUM, 14) + "@mq.internal:5672//",
        "bearer-header": "curl -H 'Authorization: Bearer " + draw(ALNUM, 40) + "' https://api.acme.dev",
        "basic-auth-header": "Authorization: Basic " + _wrap("deploy:" + pw),
        "curl-user": "curl -u deploy:" + pw + " https://ci.acme.dev/api/json",
        "curl-user-long": "curl --user admin:" + draw(ALNUM, 12) + "4 https://nexus.acme.dev",
        "wget-password": "wget --user=ci --password=" + pw + " https://files.acme.dev/a.tgz",
        "openrouter-key": "router key " + "sk" + "-or-v1-" + draw(HEX, 64),
        "groq-key": "groq " + "gs" + "k_" + draw(ALNUM, 52),
        "replicate-token": "replicate " + "r8" + "_" + draw(ALNUM, 37),
        "stripe-webhook-secret": "webhook signed with " + "wh" + "sec_" + draw(ALNUM, 32),
        "linear-key": "linear " + "lin" + "_api_" + draw(ALNUM, 40),
        "newrelic-key": "NR key " + "NR" + "AK-" + draw(UPPER_DIGITS, 27),
        "grafana-token": "grafana " + "gl" + "sa_" + draw(ALNUM, 32) + "_" + draw(HEX, 8),
        "databricks-token": "databricks " + "da" + "pi" + draw(HEX, 32),
        "supabase-token": "supabase " + "sb" + "p_" + draw(HEX, 40),
        "doppler-token": "doppler " + "dp" + ".st." + draw(ALNUM, 44),
        "age-secret-key": "AGE" + "-SECRET-KEY-1" + draw(UPPER_DIGITS, 58),
        "base64-github-token": "the config holds " + _wrap("token: " + gh),
        "base64-env-file": "env file (base64): " + _wrap("DATABASE_URL=postgres://app:" + pw + "@db/prod\n"),
        "zero-width-token": "pushed with " + _zero_width(gh),
        "fullwidth-token": "pushed with " + _fullwidth(gh),
        "cyrillic-token": "pushed with " + _cyrillic("gh" + "p_") + draw(ALNUM, 36),
        "cyrillic-keyword": _cyrillic("api_key") + " = " + draw(ALNUM, 24) + "8",
    }


def split_token() -> tuple[str, str]:
    """A GitHub token cut in two: the end of one field and the start of the next."""
    token = "gh" + "p_" + draw(ALNUM, 36)
    return "pushed with " + token[:18], token[18:] + " and it worked"
