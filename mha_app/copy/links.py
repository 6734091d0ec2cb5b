"""What the app says about a link's settings: a value that cannot be read (url.check), and a setting that does not
work with the others (Settings.problems, whose words url.check repeats for the settings a link gave)."""

from __future__ import annotations

from collections.abc import Sequence

from mha_app.copy.markup import quote
from mha_app.copy.words import count, verb

# --- A value the link spells wrong -------------------------------------------------------------------------------


def _bound(x) -> str:
    """A bound as the warnings write it: 0…30 for a number with decimals, 1…2048 for a whole number."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def unknown_setting(name: str) -> str:
    return f"The link has an unknown setting {quote(name)}; it was ignored."


def repeated(name: str, times: int, last: str) -> str:
    """A parameter given `times` times; the last one, `last`, counts."""
    return f"`{name}` appears {times} times in the link; only the last one, {quote(last)}, is used."


def bad_list(name: str, what: str, lo: int, hi: int, bad: Sequence[str]) -> str:
    """A tuple setting (ablate=2,5) whose parts `bad` are not whole numbers in lo..hi (the first three shown)."""
    return (f"`{name}` lists {what} by number from {lo} to {hi}, separated by commas (e.g. {lo},{lo + 1}); the "
            f"link's {', '.join(quote(b) for b in bad[:3])} {verb(len(bad), 'was', 'were')} left out.")


def not_a_number(name: str, what: str, raw: str, whole: bool = False) -> str:
    """A number setting whose text is not a number (whole: not a whole number)."""
    kind = "a whole number" if whole else "a number"
    return f"`{name}` should be {kind} ({what}), but the link says {quote(raw)}; using the default."


def out_of_bounds(name: str, raw: str, lo, hi, what: str, value: int | None = None) -> str:
    """A number outside lo…hi: the whole number `value` it reads as, or the link's text quoted (a decimal number,
    or one longer than 12 characters)."""
    shown = quote(raw) if value is None or len(raw) > 12 else value
    return f"`{name}` = {shown} is outside {_bound(lo)}…{_bound(hi)} ({what}); using the default."


def not_on_off(name: str, label: str, raw: str) -> str:
    return (f"`{name}` is on or off ({label}): 1 or 0 (also true/false, yes/no, on/off), but the link says "
            f"{quote(raw)}; using the default.")


def not_a_choice(name: str, choices: Sequence[str], raw: str) -> str:
    return f"`{name}` must be one of {', '.join(choices)}, but the link says {quote(raw)}; using the default."


def too_long(name: str, max_chars: int) -> str:
    return (f"`{name}` in the link is longer than {max_chars:,} characters; only the first {max_chars:,} are "
            "used.")


def too_many_tokens(name: str, tokens: int, limit: int) -> str:
    return (f"`{name}` in the link has {tokens:,} tokens, more than the {limit:,} the app shows; only the first "
            f"{limit:,} are used.")


def link_problem(name: str, message: str) -> str:
    """A rule between settings that a setting the link gave breaks (a Problem's message), named by its parameter."""
    return f"`{name}`: {message}"


# --- A setting that does not work with the others (Settings.problems) --------------------------------------------


def head_count_fixed(problem: str, fixed: int) -> str:
    """h does not divide d_model (problem: the engine's words); `fixed`, the nearest that does, is used."""
    return f"{problem} Using h = {fixed} instead."


def kv_heads_ignored(model: str | None, n_heads: int, n_kv_heads: int) -> str:
    """A number of key/value heads chosen with fixed weights: a trained model's (model, its own heads) or the tiny
    example's (model None)."""
    weights = f"{model}'s trained weights" if model else "the tiny example's fixed weights"
    own = ("one key/value head per query head" if n_kv_heads == n_heads else
           f"their own {n_kv_heads} key/value heads, each shared by {n_heads // n_kv_heads} query heads")
    return f"The number of key/value heads applies to random weights; {weights} have {own}, so it was ignored."


def kv_heads_fixed(problem: str) -> str:
    """The key/value heads do not divide h (problem: the engine's words)."""
    return f"{problem} Using one key/value head per query head (plain multi-head attention)."


def scale_kept(model: str) -> str:
    return (f"Switching the scaling off applies to random weights; {model} was trained with the 1/√d_k scaling and "
            "keeps it (the attention page compares both anyway).")


def plant_ignored(model: str) -> str:
    return f"Planting a head applies to random weights; {model}'s heads are shown as trained."


def _only(n: int, word: str) -> str:
    """ "there are only 4 heads", "there is only 1 head"."""
    return f"there {verb(n, 'is', 'are')} only {count(n, word)}"


def plant_head_missing(head: int, heads: int) -> str:
    return f"Head {head} cannot be planted: {_only(heads, 'head')}; planting head 1."


def ablate_missing(head: int, heads: int, kept: Sequence[int]) -> str:
    """Head `head` (the largest asked for) is past the last of `heads`; `kept`: the asked-for heads that exist."""
    rest = f"switching off {','.join(map(str, kept))} only." if kept else "no head is switched off."
    return f"Head {head} cannot be switched off: {_only(heads, 'head')}; {rest}"


CAUSAL_PAIR = ("A causal mask hides later tokens of the same sequence; in cross-attention the queries read another "
               "sequence, which a decoder sees whole. The causal mask is off for two sentences.")


def padding_fixed(problem: str) -> str:
    """Padding that blocks every key (problem: the engine's words)."""
    return f"{problem} No padding is used."


def head_missing(head: int, heads: int) -> str:
    return f"Head {head} does not exist: {_only(heads, 'head')}; showing head 1."


def layer_missing(layer: int, model: str, n_layers: int) -> str:
    return f"Layer {layer} does not exist: {model} has only {count(n_layers, 'layer')}; showing layer 1."


def query_missing(query: int, n: int) -> str:
    return f"Query token {query} does not exist: {_only(n, 'token')}; showing the last one, {n}."


def zoom_missing(start: int, n: int, what: str) -> str:
    """The zoom window's first row or column (`what`: "query row", "key column") past the last of n."""
    return (f"The zoom window cannot start at {start}: {_only(n, what)}; it starts at the last one, "
            f"{n}.")

