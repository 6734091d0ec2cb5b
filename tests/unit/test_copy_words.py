"""The small rules every sentence follows (mha_app.copy.words): lists of heads in a sentence."""

from __future__ import annotations

from mha_app.copy.words import heads, listed


def test_a_list_puts_and_before_its_last_item():
    assert listed([]) == "" and listed([2]) == "2" and listed([2, 5]) == "2 and 5"
    assert listed([1, 3, 5]) == "1, 3 and 5"


def test_heads_are_named_with_their_plural_and_an_and():
    assert heads([2]) == "head 2" and heads([2, 5]) == "heads 2 and 5" and heads([1, 3, 5]) == "heads 1, 3 and 5"
