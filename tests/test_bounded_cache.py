"""The bounded cache behind core's process-wide memos: least recently used out first,
bounded in entries and bytes, one compute per key across threads."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.bounded_cache import BoundedCache, CacheStats


def test_the_least_recently_used_entry_leaves_first() -> None:
    cache: BoundedCache[str, int] = BoundedCache(3)
    for i, key in enumerate("abc"):
        assert cache.put(key, i)
    assert cache.get("a") == 0  # a is now the most recent: b is the oldest
    cache.put("d", 3)
    assert cache.keys() == ["c", "a", "d"] and "b" not in cache
    cache.put("c", 9)  # putting a kept key makes it the most recent too
    cache.put("e", 4)
    assert cache.keys() == ["d", "c", "e"] and cache.peek("c") == 9
    assert len(cache) == 3


def test_peek_and_in_leave_the_order_alone() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1 and "a" in cache and cache.peek("z") is None
    cache.put("c", 3)
    assert cache.keys() == ["b", "c"]
    assert cache.stats() == CacheStats(entries=2, nbytes=0, hits=0, misses=0, evictions=1)


def test_the_byte_bound_evicts_oldest_first_and_refuses_a_value_too_big() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(10, max_bytes=10, size_of=len)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    cache.put("c", b"12")
    assert cache.stats().nbytes == 10
    cache.put("d", b"1")  # 11 bytes: a goes
    assert cache.keys() == ["b", "c", "d"] and cache.stats().nbytes == 7
    assert not cache.put("e", b"x" * 11)  # heavier than the bound: not kept, nothing goes
    assert cache.keys() == ["b", "c", "d"]
    cache.put("c", b"123456789")  # replacing counts the new size only (1 + 9): b goes
    assert cache.keys() == ["d", "c"] and cache.stats().nbytes == 10
    cache.clear()
    assert len(cache) == 0 and cache.stats().nbytes == 0


def test_a_cache_of_no_entries_keeps_nothing() -> None:
    cache: BoundedCache[str, int] = BoundedCache(0)
    assert not cache.put("a", 1) and len(cache) == 0
    assert cache.get_or_compute("a", lambda: 2) == 2 and len(cache) == 0


def test_bytes_need_a_size() -> None:
    with pytest.raises(ValueError, match="together"):
        BoundedCache(1, max_bytes=10)


def test_get_or_compute_counts_hits_and_misses() -> None:
    cache: BoundedCache[int, int] = BoundedCache(2)
    calls: list[int] = []

    def square(n: int) -> int:
        calls.append(n)
        return n * n

    assert [cache.get_or_compute(n, lambda n=n: square(n)) for n in (2, 3, 2, 4, 3)] == [
        4, 9, 4, 16, 9
    ]  # fmt: skip
    assert calls == [2, 3, 4, 3]  # 3 was evicted by 4 (2 was used after it)
    assert cache.get(5) is None
    assert cache.stats() == CacheStats(entries=2, nbytes=0, hits=1, misses=5, evictions=2)


def test_a_failed_compute_keeps_nothing_and_raises() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)

    def fail() -> int:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        cache.get_or_compute("a", fail)
    assert "a" not in cache and cache.get_or_compute("a", lambda: 1) == 1


def test_concurrent_callers_compute_each_key_once_and_stay_within_the_bound() -> None:
    cache: BoundedCache[int, tuple[int, int]] = BoundedCache(8)
    computed: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    def slow(key: int) -> tuple[int, int]:
        with lock:
            computed.append(key)
        time.sleep(0.02)  # long enough for the other callers of the key to arrive
        return key, threading.get_ident()

    def ask(caller: int) -> list[tuple[int, int]]:
        start.wait()
        return [cache.get_or_compute(k, lambda k=k: slow(k)) for k in (caller % 4, 4 + caller % 4)]

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(ask, range(16)))
    assert sorted(computed) == list(range(8))  # every key once, though 4 callers asked
    for key in range(8):  # every caller of a key got the one value computed
        assert len({a for answer in answers for a in answer if a[0] == key}) == 1
    assert len(cache) == 8 and cache.stats().misses == 8 and cache.stats().hits == 24


def test_concurrent_puts_and_gets_keep_the_bounds() -> None:
    cache: BoundedCache[int, bytes] = BoundedCache(50, max_bytes=400, size_of=len)

    def churn(seed: int) -> None:
        for i in range(2000):
            key = (seed * 7919 + i) % 200
            if i % 3:
                cache.put(key, b"x" * (key % 17))
            else:
                cache.get(key)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(churn, range(8)))
    stats, kept = cache.stats(), cache.keys()
    assert stats.entries == len(kept) <= 50 and stats.nbytes <= 400
    assert stats.nbytes == sum(len(v) for k in kept if (v := cache.peek(k)) is not None)
