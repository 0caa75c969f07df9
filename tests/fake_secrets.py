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
