"""A cache shared by every session of the server, bounded in entries and in bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np


def nbytes(obj, seen: set[int] | None = None) -> int:
    """Bytes of the NumPy arrays and byte strings reachable from obj (through dataclasses, tuples, lists and dicts),
    each once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, dict):
        return sum(nbytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return nbytes(vars(obj), seen)
    return 0


def read_only(obj, seen: set[int] | None = None):
    """obj itself, with every NumPy array reachable from it made read-only (it is about to be shared)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return obj
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        obj.setflags(write=False)
    elif isinstance(obj, dict):
        for value in obj.values():
            read_only(value, seen)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            read_only(value, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        read_only(vars(obj), seen)
    return obj


class BoundedCache:
    """Least recently used first out, once there are more than max_entries values or max_bytes in all.

    Safe to share between threads (Streamlit runs each session in its own): a key asked for by several sessions at
    once is computed once, the others wait for it. A value larger than max_bytes alone is returned, not kept.
    """

    def __init__(self, max_entries: int, max_bytes: int, size: Callable[[object], int] = nbytes):
        self.max_entries, self.max_bytes, self.size = max_entries, max_bytes, size
        self._values: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._values.values())

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def _lookup(self, key) -> tuple[bool, object]:
        """(True, value) when cached, else (False, the lock of this key's computation)."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return True, self._values[key][0]
            return False, self._computing.setdefault(key, threading.Lock())

    def peek(self, key: Hashable):
        """The value kept for key, or None when there is none (nothing is computed)."""
        with self._lock:
            if key not in self._values:
                return None
            self._values.move_to_end(key)
            return self._values[key][0]

    def get(self, key: Hashable, compute: Callable[[], object]):
        found, value = self._lookup(key)
        if found:
            return value
        with value:  # one computation of this key at a time; whoever waited finds it cached
            found, value = self._lookup(key)
            if found:
                return value
            try:
                value = compute()
                self._keep(key, value, self.size(value))
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return value

    def _keep(self, key, value, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            self._values[key] = (value, size)
            total = sum(s for _, s in self._values.values())
            while len(self._values) > self.max_entries or total > self.max_bytes:
                _, (_, dropped) = self._values.popitem(last=False)
                total -= dropped
