"""Bounded per-process caches of things that never change once written: compiled policy
versions, frozen policy versions, frozen sandbox tools. Shared by a worker's threads."""

import threading
from collections import OrderedDict
from collections.abc import Hashable


class ProcessCache:
    """Least-recently-used eviction past `size` entries; None is never cached."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Hashable, object] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
