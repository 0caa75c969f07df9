"""Ordinary episode texts that hold no credential: what the secret scanner must let pass.

The kinds of text agents write every day and that naive scanners flag: code, UUIDs,
git SHAs, base64 data, hashes, URLs without a password, configuration that names a
secret without holding one, placeholders in docs.
"""

from __future__ import annotations

import base64
import hashlib
import random
import uuid

_RNG = random.Random(42)


def _png_data_uri() -> str:
    pixels = bytes(_RNG.randrange(256) for _ in range(180))
    return "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + pixels).decode()


def ordinary_texts() -> list[str]:
    sha = hashlib.sha1(b"scarwarden").hexdigest()
    sha256 = hashlib.sha256(b"release").hexdigest()
    ids = [str(uuid.UUID(int=_RNG.getrandbits(128))) for _ in range(4)]
    return [
        "Ran `git revert " + sha + "` after the deploy broke the login page",
        "Cherry-picked " + sha[:10] + " and " + sha[10:20] + " onto release/2.4",
        "The tarball's sha256 is " + sha256 + "; checked it against the release page",
        "Order " + ids[0] + " was refunded; customer ticket " + ids[1],
        "Trace ID " + ids[2] + " shows the timeout in the payments worker",
        "Request-Id: " + ids[3].replace("-", ""),
        "Embedded the chart as " + _png_data_uri(),
        "def load(path):\n    with open(path) as f:\n        return yaml.safe_load(f)\n",
        "token = request.headers.get('Authorization', '').removeprefix('Bearer ')",
        "password = os.environ['DB_PASSWORD']",
        "api_key = settings.API_KEY  # read from the vault at start-up",
        "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }} in the workflow",
        "Set the secret with `gh secret set NPM_TOKEN` instead of pasting it",
        "curl -H 'Authorization: Bearer $TOKEN' https://api.example.com/v1/items",
        "Docs: https://docs.python.org/3/library/secrets.html#module-secrets",
        "Opened https://github.com/acme/site/pull/482#issuecomment-1844221903",
        "Connected to postgres://db.internal:5432/prod as the read-only role",
        "The connection string is postgres://user:password@localhost/test in the README",
        "Fetched https://user@bitbucket.org/acme/repo.git over ssh instead",
        "Template: DATABASE_URL=postgres://<user>:<password>@<host>/<db>",
        "password: <redacted>",
        "Reset the password via the admin portal; the old one expired",
        "The token expired after 3600 seconds; refreshed it with the refresh flow",
        "secret: true in the chart values made the pod mount the volume",
        "Use a password manager; never share passwords in tickets",
        "Bumped requests from 2.31.0 to 2.32.3 and urllib3 to 2.2.2",
        "Build 20261130.4 failed at step 7/12 (exit 137, OOM)",
        "Scheduled the post for 2026-12-01T09:00:00Z (Tuesday 10:00 CET)",
        "Moved /var/lib/app/cache/2f/1a/2f1a9c0e8b7d.bin to cold storage",
        "Container image acme/api@sha256:" + sha256,
        "Kubernetes pod api-7d9f8c6b5d-x2k4p restarted 14 times",
        "AWS region eu-west-1, bucket acme-logs-prod, prefix 2026/11/",
        "ARN arn:aws:iam::123456789012:role/deploy-role was used for the rollout",
        "The IAM user deploy-bot has AmazonS3ReadOnlyAccess attached",
        "Ran terraform plan -var-file=prod.tfvars; 3 to add, 0 to destroy",
        "The Stripe test mode dashboard shows the webhook retries",
        "Rotated the API key in the vault and updated the CI variable",
        "Rule PB-12 says: never paste credentials into episodes",
        "Opened JIRA-4821 and linked it to INC-2026-11-30-02",
        "Version string 1.24.0-rc.3+build.5821",
        "The hash of the config file changed from 9f86d081 to 60303ae2",
        "Profiling: 312 ms in json.loads, 41 ms in re.compile",
        "SELECT id, email_verified FROM users WHERE created_at > now() - interval '1 day'",
        "for (let i = 0; i < items.length; i++) { total += items[i].price * 100; }",
        'fn main() { let key = std::env::var("API_KEY").expect("set API_KEY"); }',
        "Wrote the regex ^[A-Za-z0-9_-]{36}$ to validate the slug field",
        "Base64 of 'hello world' is aGVsbG8gd29ybGQ=, used in the fixture",
        "The customer's order number is 4000-1234 and the SKU is TSHIRT-XL-BLUE",
        "Phone support hours are 9 to 5; the queue had 23 tickets",
        "IPv6 address 2001:db8::8a2e:370:7334 was blocked by the firewall",
        "MAC 00:1b:44:11:3a:b7 belongs to the office printer",
        "The webhook endpoint is https://api.acme.dev/hooks/stripe (no auth in the URL)",
        "Write webinar times in the audience's time zone: 17:00 CET / 11:00 ET",
        "Lead with the pain point, not the feature list, in the LinkedIn post",
        "GitHub Actions run 8123456789 failed on the lint job",
        "Used the key ID kid=2026-11-rotation from the JWKS endpoint",
        "Stored the session in a cookie named __Host-session with SameSite=Lax",
        "Escaped the HTML: &lt;script&gt; became harmless text",
        "Model qwen3.6-flash answered in 840 ms with 312 tokens",
        "sk-learn is not a package; it is scikit-learn",
    ]
