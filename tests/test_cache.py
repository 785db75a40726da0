"""The LRU + TTL cache: limits, expiry, counters and thread safety."""

from __future__ import annotations

import threading
import time

from devknow_jupyter.cache import ResultCache, cache_key


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
