"""Redis as Django's cache, as an optimisation only: every call is bounded (CACHE_TIMEOUT, on connecting and
on each answer) and one that fails acts as a miss, so a cache that is down or hung makes the app slower,
never a server error. After a failure, calls in that process skip Redis for CACHE_RETRY_SECONDS (a breaker),
so a hung Redis costs one bound per process, not one per call. What a miss means is each caller's: the API
throttle counts nothing while the cache is away (its limit is lifted), the rule labels are built again."""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

from extraction.common.breaker import Breaker

log = logging.getLogger(__name__)


class CacheAway(ValueError):
    """incr() of a cache that cannot be reached: a ValueError, as Django's incr() of a missing key."""


class BoundedRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        params = {**params}
        options = {**params.get("OPTIONS", {})}
        self._retry_seconds = float(options.pop("retry_seconds", 5.0))
        timeout = float(options.pop("timeout", 0.5))
        options.setdefault("socket_connect_timeout", timeout)
        options.setdefault("socket_timeout", timeout)
        params["OPTIONS"] = options
        super().__init__(server, params)
        self.breaker = Breaker(seconds=self._retry_seconds)

    def _guarded(self, call, fallback):
        if not self.breaker.closed():
            return fallback()
        try:
            return call()
        except RedisError as err:
            if self.breaker.trip():
                log.warning("the cache does not answer (%s: %s); the app goes on without it for %g s",
                            type(err).__name__, err, self.breaker.seconds)
            return fallback()

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).add(key, value, timeout, version), lambda: False)

    def get(self, key, default=None, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).get(key, default, version), lambda: default)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).set(key, value, timeout, version), lambda: None)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).touch(key, timeout, version), lambda: False)

    def delete(self, key, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).delete(key, version), lambda: False)

    def get_many(self, keys, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).get_many(keys, version), dict)

    def has_key(self, key, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).has_key(key, version), lambda: False)

    def incr(self, key, delta=1, version=None):
        def away():
            raise CacheAway(f"the cache does not answer; {key!r} is not counted")
        return self._guarded(lambda: super(BoundedRedisCache, self).incr(key, delta, version), away)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).set_many(data, timeout, version),
                             lambda: list(data))

    def delete_many(self, keys, version=None):
        return self._guarded(lambda: super(BoundedRedisCache, self).delete_many(keys, version), lambda: None)

    def clear(self):
        return self._guarded(lambda: super(BoundedRedisCache, self).clear(), lambda: False)
