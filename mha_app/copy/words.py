"""The small rules every sentence follows: plurals, lists, head numbers, articles and numbers."""

from __future__ import annotations

from collections.abc import Iterable

from mha_core.teaching.notation import readable

__all__ = ["a", "count", "heads", "plural", "readable", "verb"]


def plural(n: int, word: str, many: str | None = None) -> str:
    """`word` for one, `many` (default: word + "s") for any other count: plural(1, "head") -> "head"."""
    return word if n == 1 else (many or word + "s")


def count(n: int, word: str, many: str | None = None) -> str:
    """A count with its noun, thousands separated: count(3, "head") -> "3 heads", count(1, "key") -> "1 key"."""
    return f"{n:,} {plural(n, word, many)}"


def verb(n: int, one: str, many: str) -> str:
    """The verb (or pronoun) that agrees with n things: verb(1, "stands", "stand") -> "stands"."""
    return one if n == 1 else many


def heads(numbers: Iterable[int]) -> str:
    """Head numbers in a sentence: "head 2", "heads 2, 5"."""
    numbers = list(numbers)
    return f"{plural(len(numbers), 'head')} {', '.join(map(str, numbers))}"


def a(noun: str) -> str:
    """The noun with its indefinite article: a("encoder") -> "an encoder"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
