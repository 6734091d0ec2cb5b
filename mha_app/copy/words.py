"""The small rules every sentence follows: plurals, lists, head numbers, articles and numbers."""

from __future__ import annotations

from collections.abc import Iterable

from mha_core.teaching.notation import readable

__all__ = ["a", "count", "heads", "listed", "plural", "readable", "verb"]


def plural(n: int, word: str, many: str | None = None) -> str:
    """`word` for one, `many` (default: word + "s") for any other count: plural(1, "head") -> "head"."""
    return word if n == 1 else (many or word + "s")


def count(n: int, word: str, many: str | None = None) -> str:
    """A count with its noun, thousands separated: count(3, "head") -> "3 heads", count(1, "key") -> "1 key"."""
    return f"{n:,} {plural(n, word, many)}"


def verb(n: int, one: str, many: str) -> str:
    """The verb (or pronoun) that agrees with n things: verb(1, "stands", "stand") -> "stands"."""
    return one if n == 1 else many


def listed(items: Iterable) -> str:
    """Items in a sentence, the last after "and": "2", "2 and 5", "1, 3 and 5"."""
    items = [str(i) for i in items]
    return " and ".join(filter(None, (", ".join(items[:-1]), items[-1]))) if items else ""


def heads(numbers: Iterable[int]) -> str:
    """Head numbers in a sentence: "head 2", "heads 2 and 5", "heads 1, 3 and 5"."""
    numbers = list(numbers)
    return f"{plural(len(numbers), 'head')} {listed(numbers)}"


def a(noun: str) -> str:
    """The noun with its indefinite article: a("encoder") -> "an encoder"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
