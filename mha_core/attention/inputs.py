"""Turning text or a seed into the input matrix X (n, d_model)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

from .config import MAX_TOKENS, ConfigError

# A token is a run of letters/digits (with an inner apostrophe, as in "don't"), or one punctuation mark.
TOKEN_PATTERN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
# Invisible characters that separate, like a space: control characters, zero-width space, byte-order mark, and the
# direction marks and overrides (no token carries them, so a typed right-to-left override cannot reorder a label).
SEPARATORS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b\ufeff\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
ZERO_WIDTH_JOINERS = "\u200c\u200d"  # ZWNJ (inside Persian words), ZWJ (inside emoji sequences)
MARKS = ("Mn", "Mc", "Me", "Cf")  # combining marks, and invisible format characters such as the soft hyphen


def _extends(ch: str) -> bool:
    """A character that belongs to the one before it: a combining mark (accents, Arabic and Hebrew vowel signs,
    Indic vowel signs, variation selectors), a joiner, a skin-tone modifier, or another invisible format mark."""
    return unicodedata.category(ch) in MARKS or "\U0001f3fb" <= ch <= "\U0001f3ff"


def _regional(token: str) -> bool:
    return all("\U0001f1e6" <= ch <= "\U0001f1ff" for ch in token)


def _continues(previous: str, token: str) -> bool:
    """Whether `token`, written right after `previous`, is part of the same character or word as typed."""
    return (_extends(token[0]) or previous[-1] in ZERO_WIDTH_JOINERS
            or (unicodedata.category(previous[-1]) in MARKS and token[0].isalnum())  # a word goes on after a mark
            or (_regional(previous) and len(previous) == 1 and _regional(token)))   # a flag is two letters


def token_spans(text: str) -> list[tuple[int, int]]:
    """Where each token of `text` starts and ends, as (start, end) character positions (see tokenize)."""
    spans: list[tuple[int, int]] = []
    for match in TOKEN_PATTERN.finditer(SEPARATORS.sub(" ", text)):  # same length: positions stay
        # The pattern splits at every character that is neither a letter nor a digit; glue back what belongs
        # together as typed (an accent, an emoji with its skin tone, a family emoji), so labels show it whole.
        if spans and match.start() == spans[-1][1] and _continues(text[slice(*spans[-1])], match.group()):
            spans[-1] = (spans[-1][0], match.end())
        else:
            spans.append(match.span())
    return spans


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split text into words and punctuation marks, e.g. "It's late." -> ["It's", "late", "."].

    Accents and other combining marks stay with their letter, and an emoji with its modifiers and joiners stays one
    token; zero-width spaces and direction marks separate tokens like a space.

    Raises ConfigError for empty text or more than `max_tokens` tokens.
    """
    if not isinstance(text, str):
        raise ConfigError(f"The input must be text, got {type(text).__name__}.")
    tokens = [text[start:end] for start, end in token_spans(text)]
    if not tokens:
        raise ConfigError("The text has no words in it: type at least one word.")
    if len(tokens) > max_tokens:
        raise ConfigError(
            f"The text has {len(tokens):,} tokens, but the limit is {max_tokens:,}. Shorten it and try again."
        )
    return tokens


def _token_seed(token: str, seed: int) -> int:
    # A stable hash (Python's hash() changes between runs), so a word keeps its vector across sessions.
    digest = hashlib.blake2b(f"{seed}\x00{token.lower()}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    """The sinusoidal encoding of "Attention Is All You Need": sin on even dimensions, cos on odd ones."""
    position = np.arange(n)[:, None]                                   # (n, 1)
    freq = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)  # (ceil(d_model/2),)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(position * freq)
    pe[:, 1::2] = np.cos(position * freq[: d_model // 2])
    return pe                                                          # (n, d_model)


def embed(tokens: list[str], d_model: int, seed: int = 0, positional: bool = True,
          dtype=np.float32) -> np.ndarray:
    """Deterministic embeddings (n, d_model): the same word (ignoring case) gets the same vector in any sentence.

    Each entry is drawn from N(0, 1) by a generator seeded with the word and `seed`; with `positional`, the
    sinusoidal positional encoding is added so that word order matters.
    """
    if not tokens:
        raise ConfigError("There are no tokens to embed: give at least one.")
    x = np.stack([np.random.default_rng(_token_seed(tok, seed)).standard_normal(d_model) for tok in tokens])
    if positional:
        x = x + positional_encoding(len(tokens), d_model)
    return x.astype(dtype)                                             # (n, d_model)


def random_input(n: int, d_model: int, seed: int = 0, dtype=np.float32) -> np.ndarray:
    """n random token vectors with N(0, 1) entries, (n, d_model)."""
    if n <= 0 or d_model <= 0:
        raise ConfigError(f"Random input needs at least one token and one dimension; got n={n}, d_model={d_model}.")
    if n > MAX_TOKENS:
        raise ConfigError(f"n = {n} tokens is above this tool's limit of {MAX_TOKENS}.")
    return np.random.default_rng(seed).standard_normal((n, d_model)).astype(dtype)
