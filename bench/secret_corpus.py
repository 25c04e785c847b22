# ruff: noqa: E501 - a corpus, one case a line
"""A corpus for the secret screen, written by hand rather than from the detectors' patterns:
credentials as they turn up in what agents write down (shell lines, config files, HTTP
headers, connection strings, chat-like notes), each made fresh from a seeded generator in its
provider's real format; and text that holds no secret but looks like it might (integrity and
CSP hashes, UUIDs, commit ids, placeholders from .env.example files, prose about tokens).

Encoded and split secrets are their own lists: a known format in base64, hex or URL encoding,
and a key cut in two between a memory's content and its context.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import urllib.parse
import uuid

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _password(rng: random.Random) -> str:
    return _r(rng, ALNUM, 10) + rng.choice("!#%^*") + _r(rng, ALNUM, 6)


def positives(seed: int = 11) -> list[tuple[str, str]]:
    """(kind, text holding one credential)."""
    out: list[tuple[str, str]] = []
    rng = random.Random(seed)
    for _ in range(2):
        r = rng
        pw = _password(r)
        out += [
            ("vault token", f"VAULT_TOKEN=hvs.{_r(r, URLSAFE, 24)} vault kv get secret/app"),
            ("vault token", f"the root token is hvs.{_r(r, URLSAFE, 90)}"),
            ("shopify token", f"Shopify admin token: shpat_{_r(r, HEX, 32)}"),
            ("shopify token", f"SHOPIFY_SECRET=shpss_{_r(r, HEX, 32)}"),
            ("digitalocean token", f"doctl auth init -t dop_v1_{_r(r, HEX, 64)}"),
            ("npm token", f"npm config set //registry.npmjs.org/:_authToken npm_{_r(r, ALNUM, 36)}"),
            ("npm token", f"NPM_TOKEN npm_{_r(r, ALNUM, 36)} publishes from CI"),
            ("bearer header", f"curl -H 'Authorization: Bearer {_r(r, URLSAFE, 40)}' https://api.acme.dev/v1/jobs"),
            ("bearer header", f"Authorization: Bearer {_r(r, ALNUM, 32)}"),
            ("api key header", f"X-API-Key: {_r(r, ALNUM, 32)}"),
            ("api key header", f"curl -H \"x-api-key: {_r(r, LOWER_ALNUM, 40)}\" localhost:9000/ingest"),
            ("password assignment", f"password: {pw}"),
            ("password assignment", f"db password = {pw}"),
            ("api key assignment", f"api_key: {_r(r, ALNUM, 32)}"),
            ("token assignment", f"token={_r(r, URLSAFE, 40)}"),
            ("token assignment", f"set the client_secret: {_r(r, URLSAFE, 34)} in settings.py"),
            ("yaml secret", f"aws:\n  access_key_id: AKIA{_r(r, UPPER_DIGITS, 16)}\n  secret_access_key: {_r(r, ALNUM + '/+', 40)}"),
            ("yaml secret", f"credentials:\n  secret_access_key: {_r(r, ALNUM + '/+', 40)}"),
            ("redis url", f"REDIS_URL=redis://:{pw}@cache.internal:6379/0"),
            ("redis url", f"rediss://default:{_r(r, ALNUM, 24)}@eu1.upstash.io:6379"),
            ("mssql connection", f"Server=tcp:db.acme.net,1433;Database=app;User ID=svc;Password={pw};Encrypt=true"),
            ("postgres url", f"postgresql://app:{_r(r, ALNUM, 20)}@db.internal:5432/app"),
            ("mongodb url", f"mongodb+srv://admin:{_r(r, ALNUM, 16)}@cluster0.abcd.mongodb.net/prod"),
            ("github token", f"git clone https://x-access-token:ghs_{_r(r, ALNUM, 36)}@github.com/acme/api"),
            ("gitlab token", f"GITLAB_TOKEN=glpat-{_r(r, URLSAFE, 20)}"),
            ("slack token", f"SLACK_BOT_TOKEN=xoxb-{_r(r, string.digits, 11)}-{_r(r, string.digits, 13)}-{_r(r, ALNUM, 24)}"),
            ("stripe key", f"stripe.api_key = 'sk_live_{_r(r, ALNUM, 24)}'"),
            ("sendgrid key", f"SENDGRID_API_KEY=SG.{_r(r, URLSAFE, 22)}.{_r(r, URLSAFE, 43)}"),
            ("openai key", f"OPENAI_API_KEY=sk-proj-{_r(r, URLSAFE, 56)}"),
            ("anthropic key", f"ANTHROPIC_API_KEY=sk-ant-api03-{_r(r, URLSAFE, 93)}AA"),
            ("google api key", f"GOOGLE_API_KEY=AIza{_r(r, URLSAFE, 35)}"),
            ("google oauth secret", f"client_secret GOCSPX-{_r(r, URLSAFE, 28)}"),
            ("hugging face token", f"huggingface-cli login --token hf_{_r(r, string.ascii_letters, 34)}"),
            ("linear key", f"LINEAR_API_KEY=lin_api_{_r(r, ALNUM, 40)}"),
            ("postman key", f"postman key PMAK-{_r(r, HEX, 24)}-{_r(r, HEX, 34)}"),
            ("doppler token", f"DOPPLER_TOKEN=dp.st.prd.{_r(r, ALNUM, 43)}"),
            ("sentry token", f"SENTRY_AUTH_TOKEN=sntrys_{_r(r, URLSAFE, 60)}"),
            ("grafana token", f"grafana service account glsa_{_r(r, ALNUM, 32)}_{_r(r, HEX, 8)}"),
            ("databricks token", f"DATABRICKS_TOKEN=dapi{_r(r, HEX, 32)}"),
            ("pulumi token", f"PULUMI_ACCESS_TOKEN=pul-{_r(r, HEX, 40)}"),
            ("supabase token", f"supabase login --token sbp_{_r(r, HEX, 40)}"),
            ("age key", f"AGE-SECRET-KEY-1{_r(r, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)}"),
            ("azure storage", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={base64.b64encode(r.randbytes(64)).decode()};EndpointSuffix=core.windows.net"),
            ("jwt", "the session cookie was " + ".".join(
                base64.urlsafe_b64encode(part).decode().rstrip("=")
                for part in (b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"%d","exp":1893456000}' % r.randint(1, 10**6), r.randbytes(32))
            )),
            ("private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + base64.b64encode(r.randbytes(180)).decode() + "\n-----END OPENSSH PRIVATE KEY-----"),
            ("docker auth", '{"auths":{"ghcr.io":{"auth":"' + base64.b64encode(f"ci:{pw}".encode()).decode() + '"}}}'),
        ]  # fmt: skip
    return out


def negatives(seed: int = 13) -> list[tuple[str, str]]:
    """(kind, text that holds no secret but looks like it might)."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for i in range(2):
        r = rng
        blob = r.randbytes(64)
        sri = base64.b64encode(hashlib.sha384(blob).digest()).decode()
        sha512 = base64.b64encode(hashlib.sha512(blob).digest()).decode()
        sha256 = base64.b64encode(hashlib.sha256(blob).digest()).decode()
        commit = hashlib.sha1(blob).hexdigest()
        out += [
            ("npm integrity", f'"integrity": "sha512-{sha512}"'),
            ("npm integrity", f"lockfile entry integrity sha512-{sha512} resolved from the registry"),
            ("sri hash", f'<script src="/app.js" integrity="sha384-{sri}" crossorigin="anonymous"></script>'),
            ("csp hash", f"Content-Security-Policy: script-src 'self' 'sha256-{sha256}'"),
            ("uuid", f"the failing job id is {uuid.UUID(int=r.getrandbits(128))}"),
            ("uuid", f'{{"request_id": "{uuid.UUID(int=r.getrandbits(128))}"}}'),
            ("git sha", f"bisected to {commit}: the pool size change"),
            ("git sha", f"git revert {commit[:12]} fixed the flaky test"),
            ("placeholder", "OPENAI_API_KEY=your-api-key-here"),
            ("placeholder", "SLACK_BOT_TOKEN=xoxb-your-token-here"),
            ("placeholder", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
            ("placeholder", "password: <your password>"),
            ("placeholder", "api_key: ${API_KEY}"),
            ("placeholder", "token = os.environ['GITHUB_TOKEN']"),
            ("placeholder", "Authorization: Bearer <token>"),
            ("placeholder", "Authorization: Bearer $ACCESS_TOKEN"),
            ("placeholder", "DATABASE_URL=postgresql://user:password@localhost:5432/app"),
            ("placeholder", "stripe test key sk_test_... lives in the vault, never in the repo"),
            ("prose", "The token refresh failed because the clock skew exceeded five minutes."),
            ("prose", "Rotate the API key every 90 days; the password policy needs 16 characters."),
            ("prose", "password: the usual one from the team vault, ask Dana"),
            ("prose", "The secret to the flaky test was a missing await in the fixture."),
            ("config", "token_ttl_seconds: 3600\npassword_min_length: 16\napi_key_header: X-API-Key"),
            ("public key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{base64.b64encode(r.randbytes(32)).decode()[:43]} dev@laptop"),
            ("docker digest", f"image pinned to python@sha256:{hashlib.sha256(blob).hexdigest()}"),
            ("checksum", f"sha256sum: {hashlib.sha256(blob[::-1]).hexdigest()}  dist/app.tar.gz"),
            ("base64 image", "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + r.randbytes(60)).decode()),
            ("url", f"see https://github.com/acme/api/pull/{1200 + i} and the run at https://ci.acme.dev/runs/{r.randint(10**8, 10**9)}"),
            ("env reference", "export AWS_SECRET_ACCESS_KEY=$(vault kv get -field=secret aws/ci)"),
            ("hex color and ids", "palette #1f2937 #f59e0b; trace id 4bf92f3577b34da6a3ce929d0e0e4736"),
        ]  # fmt: skip
    return out


def encoded(seed: int = 17) -> list[tuple[str, str]]:
    """(encoding, text holding a known-format credential in that encoding)."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(3):
        secret = rng.choice(
            [
                f"ghp_{_r(rng, ALNUM, 36)}",
                f"AKIA{_r(rng, UPPER_DIGITS, 16)}",
                f"sk_live_{_r(rng, ALNUM, 24)}",
                f"xoxb-{_r(rng, string.digits, 12)}-{_r(rng, ALNUM, 24)}",
            ]
        )
        b64 = base64.b64encode(f"token={secret}".encode()).decode()
        out += [
            ("base64", f"the CI variable holds {b64}"),
            ("base64url", "config " + base64.urlsafe_b64encode(secret.encode()).decode()),
            ("hex", f"dumped bytes: {secret.encode().hex()}"),
            ("url-encoded", "callback?token=" + urllib.parse.quote(secret, safe="")),
            ("url-encoded", "https://api.acme.dev/hook?auth=" + urllib.parse.quote(f"Bearer {secret}")),
        ]  # fmt: skip
    return out


def split(seed: int = 19) -> list[tuple[str, str, str]]:
    """(kind, content, context): a credential cut in two between a memory's fields."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    for _ in range(3):
        for kind, secret in (
            ("github token", f"ghp_{_r(rng, ALNUM, 36)}"),
            ("aws access key id", f"AKIA{_r(rng, UPPER_DIGITS, 16)}"),
            ("stripe key", f"sk_live_{_r(rng, ALNUM, 24)}"),
        ):
            cut = rng.randint(6, len(secret) - 6)
            out.append(
                (kind, f"The deploy script needs {secret[:cut]}", f"{secret[cut:]} is the rest")
            )
    return out


def held_out(seed: int = 99) -> list[tuple[str, str]]:
    """(kind, text): written after the detectors above were tuned on positives(), to see how
    they do on shapes they were not written for (2026-11-26: 10 of 18 on first sight; the
    shapes missed were then added as shapes, not as these strings)."""
    r = random.Random(seed)
    pw = _r(r, ALNUM, 12) + "!" + _r(r, ALNUM, 4)
    hex_ = "0123456789abcdef"
    return [
        ("cloudflare token", f"export CLOUDFLARE_API_TOKEN={_r(r, URLSAFE, 40)}"),
        ("mailgun key", f"mailgun key-{_r(r, hex_, 32)}"),
        ("mapbox secret", f"MAPBOX sk.eyJ1{_r(r, ALNUM, 60)}.{_r(r, URLSAFE, 22)}"),
        ("pgpass", f"~/.pgpass: db.internal:5432:app:svc:{pw}"),
        ("jdbc url", f"jdbc:mysql://db:3306/app?user=root&password={pw}"),
        ("kubectl secret", f"kubectl create secret generic db --from-literal=password={pw}"),
        ("aws session token", f"AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjE{_r(r, ALNUM + '/+', 200)}"),
        (
            "basic header",
            "Authorization: Basic " + base64.b64encode(f"deploy:{pw}".encode()).decode(),
        ),
        (
            "discord webhook",
            f"https://discord.com/api/webhooks/{r.randint(10**17, 10**18)}/{_r(r, URLSAFE, 68)}",
        ),
        (
            "azure client secret",
            f"Azure client secret: {_r(r, ALNUM, 8)}~{_r(r, URLSAFE + '.', 31)}",
        ),
        ("heroku key", f"HEROKU_API_KEY={uuid.UUID(int=r.getrandbits(128))}"),
        ("ssh password", f"sshpass -p '{pw}' ssh deploy@10.0.0.5"),
        ("mysql password", f"mysql -u root -p{pw} app"),
        ("netrc", f"machine api.acme.dev login ci password {pw}"),
        ("ini password", f"[database]\nuser = app\npass = {pw}"),
        (
            "slack webhook",
            f"https://hooks.slack.com/services/T{_r(r, UPPER_DIGITS, 8)}/B{_r(r, UPPER_DIGITS, 10)}/{_r(r, ALNUM, 24)}",
        ),
        ("twilio auth token", f"TWILIO_AUTH_TOKEN={_r(r, hex_, 32)}"),
        (
            "service account",
            '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEv'
            + _r(r, ALNUM, 60)
            + '\\n-----END PRIVATE KEY-----\\n"}',
        ),
    ]
