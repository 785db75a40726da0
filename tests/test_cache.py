"""The LRU + TTL cache: limits, expiry, counters, thread safety, and one partition per credential."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cache import ResultCache, cache_key, shared_cache
from devknow_jupyter.errors import AuthenticationError


def test_keys_normalise_argument_order():
    assert cache_key("e", "t", {"a": 1, "b": 2}) == cache_key("e", "t", {"b": 2, "a": 1})
    assert cache_key("e1", "t", {"a": 1}) != cache_key("e2", "t", {"a": 1})


def test_lru_evicts_least_recently_used_and_counts_hits():
    cache = ResultCache(max_entries=2, ttl=None)
    cache.set("a", 1)
    cache.set("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.set("c", 3)
    assert "b" not in cache and "a" in cache and "c" in cache
    assert cache.get("b") is None
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.size) == (1, 1, 2)
    assert stats.hit_rate == 0.5


def test_entries_expire_after_ttl():
    cache = ResultCache(max_entries=10, ttl=0.05)
    cache.set("k", "v")
    assert cache.get("k") == "v"
    time.sleep(0.08)
    assert cache.get("k") is None and len(cache) == 0


def test_configure_shrinks_and_zero_size_disables():
    cache = ResultCache(max_entries=5, ttl=None)
    for i in range(5):
        cache.set(i, i)
    cache.configure(max_entries=2)
    assert len(cache) == 2 and cache.get(4) == 4
    cache.configure(max_entries=0)
    cache.set("x", 1)
    assert len(cache) == 0 and cache.get("x") is None
    cache.clear()
    assert cache.stats().hits == 0


def test_concurrent_use_keeps_the_size_bound():
    cache = ResultCache(max_entries=50, ttl=None)

    def work(offset: int) -> None:
        for i in range(2000):
            cache.set((offset, i), i)
            cache.get((offset, i - 1))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50
    assert cache.hits + cache.misses == 8000


# -- credentials (issue 12, item 6) ------------------------------------------------------------------------

KEY = "dk-cache-test-GOOD-51c9e0"  # made-up keys for these tests
OTHER_KEY = "dk-cache-test-WRONG-7a44b2"


def test_cached_results_are_never_served_to_another_credential(sdk_server_factory):
    server = sdk_server_factory("--api-key", KEY)
    with DevKnowClient(server.url, api_key=KEY) as owner:
        hits = owner.search_documents("restrict an API key")
        docs = owner.get_documents(hits[:1])
        assert len(hits) and len(docs) == 1 and not hits.from_cache
    searches = len(server.calls("search_documents"))

    # Same process, same shared cache, same endpoint and query: a refused key, a token, no key at all.
    for credentials in ({"api_key": OTHER_KEY}, {"access_token": "tok-cache-test-3f0d"}, {}):
        with DevKnowClient(server.url, **credentials) as stranger:
            with pytest.raises(AuthenticationError):
                stranger.search_documents("restrict an API key")
            with pytest.raises(AuthenticationError):
                stranger.get_documents(hits[:1])

    # The owner's key still shares the cache across clients: no new request.
    with DevKnowClient(server.url, api_key=KEY) as again:
        assert again.search_documents("restrict an API key").from_cache
        assert again.get_documents(hits[:1]).info.from_cache
        shown = [repr(again), repr(again.status()), repr(again.cache), repr(again.cache.stats())]
    assert len(server.calls("search_documents")) == searches

    # Neither a key nor its tag is visible, and no cache key holds a key or its plain hash.
    cache = shared_cache()
    keys = repr(list(cache._data))
    tags = {key[0][1] for key in cache._data if key[0][1]}
    assert len(tags) == 1
    for secret in (KEY, OTHER_KEY, hashlib.sha256(KEY.encode()).hexdigest()[:16], *tags):
        assert not any(secret in text for text in shown), secret
    for secret in (KEY, OTHER_KEY, hashlib.sha256(KEY.encode()).hexdigest()[:16]):
        assert secret not in keys
