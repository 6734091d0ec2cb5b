"""Turning text or a seed into the input matrix X (n, d_model)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from .config import MAX_TOKENS, ConfigError

# A token is a run of letters/digits (with an inner apostrophe, as in "don't"), or one punctuation mark.
TOKEN_PATTERN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split text into words and punctuation marks, e.g. "It's late." -> ["It's", "late", "."].

    Raises ConfigError for empty text or more than `max_tokens` tokens.
    """
    if not isinstance(text, str):
        raise ConfigError(f"The input must be text, got {type(text).__name__}.")
    tokens = TOKEN_PATTERN.findall(text)
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
