"""The test provider as a process of its own, and what the tests ask of it."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.support.paths import ROOT


class OidcProvider:
    """`with OidcProvider(folder) as provider:` a running provider at provider.url (issuer provider.issuer).

    `site_url` makes it issue tokens as the provider at that URL (its `iss`); `forged_kid` makes it sign under
    that key id (claims.forge_key_id)."""

    def __init__(self, directory: Path, *, site_url: str = "", forged_kid: str = "") -> None:
        self.directory = directory
        self.token = secrets.token_urlsafe(16)
        self.env = {**os.environ, "IDP_DATA_DIR": str(directory), "IDP_CONTROL_TOKEN": self.token,
                    "IDP_SITE_URL": site_url, "IDP_FORGED_KID": forged_kid,
                    "IDP_SECRET_KEY": secrets.token_urlsafe(32)}
        self.env.pop("DJANGO_SETTINGS_MODULE", None)
        self.proc: subprocess.Popen | None = None
        self.url = ""

    @property
    def issuer(self) -> str:
        return self.url + "/openid"

    def start(self, timeout: float = 60) -> OidcProvider:
        self.directory.mkdir(parents=True, exist_ok=True)
        with (self.directory / "provider.log").open("ab") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.oidc_provider.serve"], cwd=ROOT,
                                         env=self.env, stdout=log, stderr=subprocess.STDOUT)
        port_file = self.directory / "port"
        deadline = time.monotonic() + timeout
        while not port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the test provider exited early; see {self.directory / 'provider.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the test provider did not start within {timeout}s")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def log(self) -> str:
        return (self.directory / "provider.log").read_text(errors="replace")

    # -- the control endpoint (views.py)

    def _control(self, what: str, **data) -> dict:
        response = requests.post(f"{self.url}/control/{what}/", json=data, headers={"X-Control-Token": self.token},
                                 timeout=10)
        response.raise_for_status()
        return response.json()

    def client(self, client_id: str, secret: str, redirect_uris: list[str], *, require_consent: bool = True) -> None:
        self._control("client", client_id=client_id, secret=secret, redirect_uris=redirect_uris,
                      require_consent=require_consent)

    def person(self, username: str, *, password: str | None = None, groups: list[str] | None = None,
               email: str | None = None, new_username: str | None = None) -> str:
        """Make or change a person; returns their `sub`."""
        data = {"username": username, "password": password, "groups": groups, "email": email,
                "new_username": new_username}
        return self._control("user", **{k: v for k, v in data.items() if v is not None})["sub"]

    def issue_id_tokens_for(self, audience: str | None) -> None:
        """From now on the ID token's `aud` is `audience` (None: the client's, as it should be)."""
        self._control("behaviour", id_token_audience=audience)

    def key_ids(self) -> list[str]:
        return self._control("keys")["kids"]
