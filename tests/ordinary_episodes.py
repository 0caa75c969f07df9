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


def _jpeg_data_uri() -> str:
    body = bytes(_RNG.randrange(256) for _ in range(240))
    return "data:image/jpeg;base64," + base64.b64encode(b"\xff\xd8\xff\xe0" + body + b"\xff\xd9").decode()


def everyday_texts() -> list[str]:
    """Issue 27's corpus of ordinary technical text: logs, ARNs, environment dumps without
    secrets, hashes, UUIDs, base64 images, URLs and stack traces (with
    :func:`ordinary_texts`, more than 100). None holds a credential."""
    sha = hashlib.sha1(b"everyday").hexdigest()
    sha256 = hashlib.sha256(b"everyday").hexdigest()
    md5 = hashlib.md5(b"everyday").hexdigest()  # noqa: S324 - a checksum in a log, not security
    uid = [str(uuid.UUID(int=_RNG.getrandbits(128))) for _ in range(6)]
    b64_json = base64.b64encode(b'{"region": "eu-west-1", "replicas": 3, "image": "acme/api:2.4.1"}').decode()
    b64_text = base64.b64encode(b"The quick brown fox jumps over the lazy dog, twice a day.").decode()
    return [
        # the two false positives of issue 27
        "credentials: arn:aws:iam::123456789012:role/deploy",
        "PWD=/Users/maya/code/app",
        # environment dumps without secrets
        "OLDPWD=/Users/maya\nHOME=/Users/maya\nSHELL=/bin/zsh\nLANG=en_US.UTF-8\nTERM=xterm-256color",
        "PATH=/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin\nPWD=/home/ci/builds/acme/api",
        "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password",
        "POSTGRES_USER=app\nPOSTGRES_DB=app_dev\nPOSTGRES_HOST=db\nPOSTGRES_PORT=5432",
        "DD_ENV=staging DD_SERVICE=checkout DD_VERSION=2.4.1 DD_AGENT_HOST=10.0.4.12",
        "DATADOG_API_KEY=${DATADOG_API_KEY} is injected by the helm chart",
        "MYSQL_ROOT_PASSWORD: ${MYSQL_ROOT_PASSWORD:?set it in .env}",
        "SECRET_KEY_BASE=<%= ENV['SECRET_KEY_BASE'] %> in config/secrets.yml",
        "AWS_PROFILE=prod-readonly AWS_REGION=us-east-1 AWS_SDK_LOAD_CONFIG=1",
        "NODE_ENV=production PORT=8080 LOG_LEVEL=info WORKERS=4",
        "KUBECONFIG=/home/maya/.kube/config-staging",
        "GOOGLE_APPLICATION_CREDENTIALS=/var/run/secrets/gcp/sa.json",
        "credentials_file: ~/.aws/credentials (profile deploy)",
        "token_endpoint: https://auth.acme.dev/oauth/token",
        "password_policy: min_length=12, require_symbols=true",
        "token_count: 31254 prompt tokens, 812 completion tokens",
        "api_key_header: X-Api-Key",
        # ARNs and cloud identifiers
        "arn:aws:s3:::acme-logs-prod/2026/11/30/app.log.gz",
        "arn:aws:lambda:eu-west-1:123456789012:function:thumbnailer:7",
        "role_arn = arn:aws:iam::123456789012:role/github-actions-deploy",
        "Assumed arn:aws:sts::123456789012:assumed-role/deploy/ci-8812 for 3600 s",
        "projects/acme-prod/locations/europe-west1/services/api revision api-00042-xoz",
        "/subscriptions/" + uid[0] + "/resourceGroups/rg-prod/providers/Microsoft.Web/sites/acme",
        "Instance i-0abc1234def567890 in subnet subnet-0123456789abcdef0 was replaced",
        # logs
        "2026-11-30T09:14:03.221Z INFO  http GET /api/v1/orders 200 41ms req_id=" + uid[1],
        "2026-11-30 09:14:05,112 WARNING celery.worker: task retry in 30s (attempt 3/5)",
        "[2026-11-30 09:15:00] production.ERROR: SQLSTATE[08006] connection refused (Connection: pgsql)",
        'level=error ts=2026-11-30T09:16:22Z caller=main.go:88 msg="dial tcp 10.0.3.4:443: i/o timeout"',
        'nginx: 10.0.0.7 - - [30/Nov/2026:09:17:01 +0000] "POST /login HTTP/1.1" 302 0 "-" "Mozilla/5.0"',
        "kubelet: Back-off restarting failed container api in pod api-7d9f8c6b5d-x2k4p",
        "systemd[1]: Started Daily apt download activities. Took 1.204s",
        "Dec 01 03:00:01 web-2 CRON[22811]: (root) CMD (/usr/local/bin/backup --quiet)",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory",
        "pip: Successfully installed ruff-0.8.1 mypy-1.13.0 pytest-8.3.3",
        "docker: Digest: sha256:" + sha256 + " Status: Downloaded newer image",
        "terraform: aws_iam_role.deploy: Modifications complete after 2s [id=deploy]",
        "GitHub Actions: Run actions/checkout@v4 with token: *** (masked)",
        "auth: login ok user=maya mfa=totp session_ttl=43200",
        # hashes and IDs
        "sha1 " + sha + " sha256 " + sha256 + " md5 " + md5,
        "commit " + sha + "\nAuthor: Maya <maya@example.com>\nDate: Mon Nov 30 09:00 2026",
        "Release checksum: " + sha256 + "  acme-2.4.1-linux-amd64.tar.gz",
        "Idempotency-Key: " + uid[2],
        "trace_id=" + uid[3].replace("-", "") + " span_id=" + uid[4].replace("-", "")[:16],
        'ETag: "' + md5 + '"',
        "Integrity: sha512-" + base64.b64encode(hashlib.sha512(b"pkg").digest()).decode(),
        "ssh-ed25519 fingerprint SHA256:"
        + base64.b64encode(hashlib.sha256(b"host").digest()).decode().rstrip("="),
        "PGP key 0x" + sha[:16].upper() + " signed the release tag v2.4.1",
        "ULID 01JDQ8ZK3W9V7N5T4R2P0M8X6C was assigned to the import batch",
        "x-request-id: " + uid[5],
        # base64 that is not a secret
        "Embedded the chart as " + _jpeg_data_uri(),
        "Embedded a second chart as " + _png_data_uri(),
        "The ConfigMap value is " + b64_json + " (base64 of the deploy settings)",
        "Decoded fixture: " + b64_text,
        "kubectl get secret app-tls -o jsonpath='{.data.tls\\.crt}' | base64 -d | openssl x509 -noout -dates",
        # URLs
        "https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:log-groups",
        "https://grafana.acme.dev/d/api-latency/api?orgId=1&from=now-6h&to=now&var-env=prod",
        "https://acme.atlassian.net/browse/OPS-4821?focusedCommentId=228812",
        "https://storage.googleapis.com/acme-public/reports/2026-11.pdf?ignoreCache=1",
        "git clone git@github.com:acme/api.git && cd api && make test",
        "redis://cache.internal:6379/0 is the session store",
        "amqp://mq.internal:5672/%2f is the broker (credentials from the vault)",
        "https://user:<password>@registry.acme.dev is the template in the README",
        "See https://owasp.org/www-community/attacks/Credential_stuffing for the pattern",
        # stack traces and code
        'Traceback (most recent call last):\n  File "/app/api/views.py", line 88, in create\n'
        '    token = issue_token(user)\n  File "/app/api/auth.py", line 31, in issue_token\n'
        "    raise AuthError('expired')\napi.auth.AuthError: expired",
        'java.lang.NullPointerException: Cannot invoke "String.length()"\n'
        "\tat com.acme.auth.TokenService.verify(TokenService.java:112)\n"
        "\tat com.acme.api.Filter.doFilter(Filter.java:45)",
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "goroutine 1 [running]:\nmain.(*Client).Token(0x0)\n\t/src/client.go:57 +0x1d",
        "TypeError: Cannot read properties of undefined (reading 'accessToken')\n"
        "    at refresh (/app/src/session.ts:41:18)",
        "Error: ENOENT: no such file or directory, open '/etc/acme/secret.json'",
        "if not hmac.compare_digest(token, expected):\n    raise PermissionDenied",
        "const password = await prompt({ type: 'password', message: 'Password?' });",
        "secret_key_base = Rails.application.credentials.secret_key_base",
        "DB_PASSWORD = os.getenv('DB_PASSWORD', '')",
        "headers = {'Authorization': f'Bearer {access_token}'}",
        "Authorization: Bearer <token>",
        'curl -u "$CI_USER:$CI_TOKEN" https://ci.acme.dev/api/json',
        "docker run -u 1000:1000 -v $PWD:/src acme/builder make",
        "mysql -h db -u app -p app_dev < schema.sql (prompted for the password)",
        # prose with non-ASCII
        "Пароль сменили через портал; старый истёк",
        "Die Bereitstellung lief um 10:00 MEZ – danach 2 Fehler im Log",
        "部署完成，耗时 41 秒，没有错误",
        "Ｔｈｅ ｂｕｉｌｄ passed after the retry (fullwidth in the vendor's log)",
        "Zero\u200bwidth spaces came from a copy-paste out of the wiki",
    ]
