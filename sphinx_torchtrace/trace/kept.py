"""Answers kept for the few objects asked last, by identity.

A build asks one question of one rank many times (a page per compile, the glance, the
directive's note): the answer for the objects asked last is kept, by ``id()`` with a weak
reference that tells a live object from one whose id was reused, and the oldest is dropped
past a handful, so memory holds a few answers, not one per rank of a thousand.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Owner = TypeVar("Owner")
Answer = TypeVar("Answer")


class Kept(Generic[Owner, Answer]):
    """The answers of ``work`` for the ``size`` owners asked last."""

    def __init__(self, work: Callable[[Owner], Answer], size: int = 8) -> None:
        self._work = work
        self._size = size
        self._found: OrderedDict[int, tuple[weakref.ref[Owner], Answer]] = OrderedDict()

    def __call__(self, owner: Owner) -> Answer:
        found = self.get(owner)
        if found is not None:
            return found[0]
        return self.put(owner, self._work(owner))

    def get(self, owner: Owner) -> tuple[Answer] | None:
        """The kept answer (in a tuple: an answer may be None), or None."""
        found = self._found.get(id(owner))
        if found is None or found[0]() is not owner:
            return None
        self._found.move_to_end(id(owner))
        return (found[1],)

    def put(self, owner: Owner, answer: Answer) -> Answer:
        self._found[id(owner)] = (weakref.ref(owner), answer)
        self._found.move_to_end(id(owner))
        while len(self._found) > self._size:
            self._found.popitem(last=False)
        return answer
