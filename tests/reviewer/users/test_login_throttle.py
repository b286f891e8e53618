"""Login throttling: per account and per address with separate limits, atomic under a flood, never a way
for a stranger to lock other people out, the address taken from a trusted proxy's header only."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.backends import ModelBackend
from django.db import connection
from django.test import Client, RequestFactory
from django.urls import reverse

from reviewer.client_address import client_address
from reviewer.models import LoginThrottle
from reviewer.users.throttle import DEVICE_COOKIE
from tests.support.accounts import PASSWORD

STRANGER, OFFICE = "203.0.113.7", "198.51.100.20"


def _login(client: Client, username: str, password: str, address: str, **headers) -> int:
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address,
                       headers=headers).status_code


@pytest.fixture
def limits(settings):
    settings.LOGIN_MAX_FAILURES = 5
    settings.LOGIN_MAX_FAILURES_PER_ADDRESS = 20
    settings.LOGIN_LOCKOUT_SECONDS = 300
    settings.TRUSTED_PROXIES = []
    return settings


def test_wrong_passwords_for_one_account_lock_that_account_and_no_other_at_the_same_address(users, limits):
    client = Client()
    for _ in range(5):
        assert _login(client, "reviewer", "wrong", STRANGER) == 200
    assert _login(client, "reviewer", PASSWORD, STRANGER) == 429  # that account waits, even with its password
    assert _login(Client(), "admin", PASSWORD, STRANGER) == 302  # everyone else at that address logs in
    assert _login(Client(), "supervisor", PASSWORD, STRANGER) == 302


def test_one_address_trying_many_accounts_is_stopped_at_its_own_limit_and_nobody_elsewhere(users, limits):
    client = Client()
    for i in range(20):
        assert _login(client, f"guess{i}", "wrong", STRANGER) == 200
    assert _login(client, "admin", PASSWORD, STRANGER) == 429  # the spraying address waits
    assert _login(Client(), "admin", PASSWORD, OFFICE) == 302


def test_a_stranger_cannot_lock_an_owner_out_of_the_browser_she_logged_in_with(users, limits):
    owner = Client()
    assert _login(owner, "admin", PASSWORD, OFFICE) == 302
    assert owner.cookies[DEVICE_COOKIE].value  # her browser is now known to her account
    owner.post(reverse("logout"))
    stranger = Client()
    for _ in range(30):  # the account's and the stranger's address limits both run out
        _login(stranger, "admin", "wrong", STRANGER)
    assert _login(Client(), "admin", PASSWORD, OFFICE) == 429  # a browser the account never saw waits
    assert _login(owner, "admin", PASSWORD, OFFICE) == 302  # hers does not
    # Her cookie names her account only: it opens no way around the limits for another one.
    thief = Client()
    thief.cookies[DEVICE_COOKIE] = owner.cookies[DEVICE_COOKIE].value
    for _ in range(5):
        _login(thief, "reviewer", "wrong", OFFICE)
    assert _login(thief, "reviewer", PASSWORD, OFFICE) == 429


def test_a_known_browser_gets_its_own_few_tries_and_no_more(users, limits):
    owner = Client()
    assert _login(owner, "admin", PASSWORD, OFFICE) == 302
    owner.post(reverse("logout"))
    for _ in range(5):
        assert _login(owner, "admin", "wrong", OFFICE) == 200
    assert _login(owner, "admin", PASSWORD, OFFICE) == 429


def test_a_lockout_ends_after_its_window(users, limits):
    limits.LOGIN_LOCKOUT_SECONDS = 1
    client = Client()
    for _ in range(5):
        _login(client, "reviewer", "wrong", STRANGER)
    assert _login(client, "reviewer", PASSWORD, STRANGER) == 429
    LoginThrottle.objects.update(expires_at=LoginThrottle.objects.first().expires_at.replace(year=2000))
    assert _login(client, "reviewer", PASSWORD, STRANGER) == 302


class CountingBackend(ModelBackend):
    """Counts the password checks that really ran."""

    calls = 0
    lock = threading.Lock()

    def authenticate(self, request, username=None, password=None, **kwargs):
        with CountingBackend.lock:
            CountingBackend.calls += 1
        return super().authenticate(request, username=username, password=password, **kwargs)


@pytest.mark.django_db(transaction=True)
def test_thirty_parallel_wrong_passwords_get_exactly_the_limit_checked(users, limits):
    limits.AUTHENTICATION_BACKENDS = ["tests.reviewer.users.test_login_throttle.CountingBackend"]
    CountingBackend.calls = 0
    start = threading.Barrier(30)
    codes: list[int] = []

    def guess(i: int) -> None:
        try:
            start.wait()
            codes.append(_login(Client(), "admin", f"wrong-{i}", STRANGER))
        finally:
            connection.close()

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] * 5 + [429] * 25
    assert CountingBackend.calls == 5


def _request(remote: str, forwarded: str | None = None):
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **meta)


def test_the_client_address_is_read_from_the_header_only_when_a_trusted_proxy_wrote_it(settings):
    import ipaddress

    settings.CLIENT_ADDRESS_HEADER = "X-Forwarded-For"
    settings.TRUSTED_PROXIES = []
    assert client_address(_request("127.0.0.1", "1.2.3.4")) == "127.0.0.1"  # no proxy configured: the peer
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8")]
    assert client_address(_request("127.0.0.1", "1.2.3.4")) == "1.2.3.4"
    # What a client writes itself sits left of what the proxies appended, and is never read.
    assert client_address(_request("127.0.0.1", "6.6.6.6, 1.2.3.4")) == "1.2.3.4"
    assert client_address(_request("127.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.5")) == "1.2.3.4"  # two proxies
    assert client_address(_request("9.9.9.9", "1.2.3.4")) == "9.9.9.9"  # not from a trusted proxy: ignored
    assert client_address(_request("127.0.0.1", "not-an-address")) == "127.0.0.1"
    assert client_address(_request("127.0.0.1")) == "127.0.0.1"


def test_behind_the_proxy_one_clients_failures_do_not_block_the_others(users, limits):
    import ipaddress

    limits.TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    attacker = Client()
    for i in range(25):
        _login(attacker, f"guess{i}", "wrong", "127.0.0.1", **{"X-Forwarded-For": STRANGER})
    assert _login(attacker, "admin", PASSWORD, "127.0.0.1", **{"X-Forwarded-For": STRANGER}) == 429
    # The attacker cannot claim to be someone else: the proxy appends the address it really saw.
    assert _login(attacker, "admin", PASSWORD, "127.0.0.1", **{"X-Forwarded-For": f"{OFFICE}, {STRANGER}"}) == 429
    assert _login(Client(), "admin", PASSWORD, "127.0.0.1", **{"X-Forwarded-For": OFFICE}) == 302


# What the login form turns into "sup1" before the password is checked (it strips and NFKC-normalises).
LOOK_ALIKES = ["ｓｕｐ1", "sup１", "ｓｕｐ１", "𝐬up1", "𝓈𝓊𝓅𝟣", "ſup1", "ⓢup1", "sup¹", " sup1 "]


def test_a_look_alike_username_shares_the_accounts_login_limit(db, limits):
    from django.contrib.auth.models import User

    User.objects.create_user(username="sup1", password=PASSWORD)
    for name in LOOK_ALIKES:  # the login page really takes each of them for sup1
        assert _login(Client(), name, PASSWORD, OFFICE) == 302, name
    for i in range(5):
        assert _login(Client(), "sup1", "wrong", f"203.0.113.{i}") == 200
    # Names differing only in case share it too: no two accounts may differ only in case (services.users).
    for i, name in enumerate([*LOOK_ALIKES, "ＳＵＰ1", "Sup1"], start=10):  # each from a new browser and address
        assert _login(Client(), name, PASSWORD, f"203.0.113.{i}") == 429, name
        assert _login(Client(), name, "wrong", f"198.51.100.{i}") == 429, name


def test_wrong_passwords_spread_over_look_alikes_lock_the_account_itself(db, limits):
    from django.contrib.auth.models import User

    User.objects.create_user(username="sup1", password=PASSWORD)
    for i, name in enumerate(LOOK_ALIKES[:5]):
        assert _login(Client(), name, "wrong", f"203.0.113.{i}") == 200, name
    assert _login(Client(), "sup1", PASSWORD, OFFICE) == 429
