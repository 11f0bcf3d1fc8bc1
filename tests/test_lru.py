"""The process-wide LRU map behind the query-vector, normalised-text and parent-span caches."""

from __future__ import annotations

import threading

import pytest

from equimind.core.lru import LRU


def test_a_hit_refreshes_and_the_oldest_is_dropped() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the newest
    cache.put("c", 3)  # drops "b", the least recently used
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)
    cache.put("a", 10)  # a re-put replaces in place
    assert cache.get("a") == 10 and len(cache) == 2


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        LRU(0)


def test_concurrent_puts_keep_the_bound() -> None:
    cache: LRU[int, int] = LRU(50)

    def work(base: int) -> None:
        for i in range(2000):
            cache.put(base + i, i)
            cache.get(base + i // 2)

    threads = [threading.Thread(target=work, args=(k * 10_000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 50
