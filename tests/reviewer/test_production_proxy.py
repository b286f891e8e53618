"""PROOFDESK_ENV=production end to end behind a TLS-terminating proxy (issue 40): gunicorn with production
settings on the test database, reached as the proxy reaches it, from 127.0.0.1 with the proxy's headers
(Host, X-Forwarded-Proto, X-Forwarded-For). Plain HTTP is sent to HTTPS, the proxy's HTTPS gets secure cookies
and HSTS, a person signs in through it, static files come from the collected manifest, errors list nothing."""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
from http.cookies import SimpleCookie

import pytest

from tests.support.accounts import PASSWORD
from tests.support.faults import free_port, wait_until
from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
HOST = "proofdesk.example.org"


@pytest.fixture
def production(worker_env, tmp_path):
    env = {**worker_env, "PROOFDESK_ENV": "production", "PROOFDESK_VAR_DIR": str(tmp_path / "var"),
           "SECRET_KEY": "production-test-" + "k" * 50, "ALLOWED_HOSTS": HOST, "TRUSTED_PROXIES": "127.0.0.1",
           "CSRF_TRUSTED_ORIGINS": f"https://{HOST}"}
    env.pop("DJANGO_DEBUG", None)
    collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stderr[-2000:]
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "reviewer.wsgi", "--workers", "2", "--bind",
                             f"127.0.0.1:{port}"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def request(method: str, path: str, *, https: bool = True, body: str | None = None,
                headers: dict[str, str] | None = None) -> tuple[http.client.HTTPResponse, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sent = {"Host": HOST, "X-Forwarded-For": "203.0.113.7", **({"X-Forwarded-Proto": "https"} if https else {}),
                **(headers or {})}
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        content = response.read()
        conn.close()
        return response, content

    def up() -> bool:
        try:
            return request("GET", "/login/")[0].status == 200
        except OSError:
            return False

    try:
        wait_until(up, 60, "gunicorn serving in production")
        yield request
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def _cookies(response: http.client.HTTPResponse) -> SimpleCookie:
    jar = SimpleCookie()
    for header in response.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    return jar


def test_behind_a_tls_proxy_production_sends_http_to_https_and_serves_https_securely(production, users, settings):
    from django.conf import global_settings

    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS  # as the server hashes (the suite's is faster)
    users["reviewer"].set_password(PASSWORD)
    users["reviewer"].save(update_fields=["password"])
    plain, _ = production("GET", "/queue/?x=1", https=False)
    assert plain.status == 301 and plain.getheader("Location") == f"https://{HOST}/queue/?x=1"

    page, content = production("GET", "/login/")
    assert page.status == 200
    assert "max-age=31536000" in page.getheader("Strict-Transport-Security", "")
    assert "script-src 'self'" in page.getheader("Content-Security-Policy", "")
    csrf = _cookies(page)["csrftoken"]
    assert csrf["secure"] and csrf["samesite"].lower() == "lax"
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', content).group(1).decode()

    signed_in, _ = production(
        "POST", "/login/", body=f"csrfmiddlewaretoken={token}&username=reviewer&password={PASSWORD}",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": f"https://{HOST}",
                 "Referer": f"https://{HOST}/login/", "Cookie": f"csrftoken={csrf.value}"})
    assert signed_in.status == 302, signed_in.status
    session = _cookies(signed_in)["sessionid"]
    assert session["secure"] and session["httponly"]
    queue, _ = production("GET", "/queue/", headers={"Cookie": f"sessionid={session.value}"})
    assert queue.status == 200 and "no-store" in queue.getheader("Cache-Control")


def test_in_production_static_files_come_from_the_manifest_and_errors_list_nothing(production, users):
    page, content = production("GET", "/login/")
    css = re.search(rb'href="(/static/css/proofdesk\.[0-9a-f]{12}\.css)"', content)
    assert css, "a hashed static file name from the manifest"
    styles, _ = production("GET", css.group(1).decode())
    assert styles.status == 200 and "max-age=315360000" in styles.getheader("Cache-Control", "")
    missing, body = production("GET", "/no-such-page/")
    assert missing.status == 404 and b"urlpatterns" not in body and b"URLconf" not in body
    api, problem = production("GET", "/api/v2/nothing")
    assert api.status == 404 and api.getheader("Content-Type") == "application/problem+json"
    wrong_host, _ = production("GET", "/login/", headers={"Host": "evil.example"})
    assert wrong_host.status == 400
