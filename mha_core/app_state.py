"""The app's settings as plain data: defaults, limits, and a check of settings that arrive in a URL.

Kept free of Streamlit so it can be tested and reused on its own.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from .config import divisors

APP_MAX_D_MODEL = 1024
APP_MAX_HEADS = 16
APP_MAX_TOKENS = 2048
APP_MAX_TEXT_CHARS = 4000
MAX_SEED = 2**31 - 1

MODELS = ("random weights", "all-MiniLM-L6-v2")
INPUTS = ("sentence", "random", "tiny")
BACKENDS = {"NumPy": "numpy", "PyTorch": "torch"}
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
# The four stages of step 2, as the attention page names them (and the URL spells them).
STAGES = {"raw scores": "raw", "scaled scores": "scaled", "mask": "mask", "softmax weights": "weights"}


@dataclass(frozen=True)
class Settings:
    """Everything that decides what the app shows; each field is one URL query parameter."""

    model: str = MODELS[0]
    input: str = "sentence"
    text: str = DEFAULT_TEXT
    n: int = 8
    d_model: int = 64
    h: int = 8
    seed: int = 0
    pe: bool = True
    causal: bool = False
    pad: int = 0
    backend: str = "NumPy"
    layer: int = 1
    head: int = 1
    query: int = 1
    stage: str = "softmax weights"

    def query_params(self) -> dict[str, str]:
        """The URL parameters that differ from the defaults (a short, shareable link)."""
        default = asdict(Settings())
        return {k: _to_url(v) for k, v in asdict(self).items() if v != default[k]}

    def share_url(self, base: str) -> str:
        params = self.query_params()
        return f"{base}?{urlencode(params)}" if params else base


def _to_url(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def head_options(d_model: int) -> list[int]:
    """Head counts the app offers for this d_model: those that divide it, up to APP_MAX_HEADS."""
    return divisors(d_model, APP_MAX_HEADS)


def closest_head_count(d_model: int, wanted: int) -> int:
    """The valid head count nearest to `wanted` (the larger one on a tie)."""
    return min(head_options(d_model), key=lambda h: (abs(h - wanted), -h))


def quote(raw) -> str:
    """A URL value made safe to show inside Markdown: shortened, with markup characters escaped."""
    text = str(raw)
    text = text if len(text) <= 24 else text[:24] + "…"
    return "“" + re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~])", r"\\\1", text) + "”"


def _int_in(params, key, lo, hi, problems, what) -> int | None:
    raw = params.get(key)
    if raw is None:
        return None
    try:
        value = int(raw)
    except (TypeError, ValueError):
        problems.append(f"`{key}` should be a whole number ({what}), but the link says {quote(raw)}; "
                        "using the default.")
        return None
    if not lo <= value <= hi:
        problems.append(f"`{key}` = {value} is outside {lo}…{hi} ({what}); using the default.")
        return None
    return value


def check_query_params(params: dict[str, str]) -> list[str]:
    """Plain-words warnings for URL parameters that cannot be used as given; [] when all is well.

    Streamlit drops a bound widget's invalid URL value by itself; this says why, so nothing changes silently.
    """
    problems: list[str] = []
    known = set(asdict(Settings()))
    for key in params:
        if key not in known:
            problems.append(f"The link has an unknown setting {quote(key)}; it was ignored.")
    choices = {"model": MODELS, "input": INPUTS, "backend": tuple(BACKENDS), "pe": ("true", "false"),
               "causal": ("true", "false"), "stage": tuple(STAGES)}
    for key, allowed in choices.items():
        if key in params and params[key] not in allowed:
            problems.append(f"`{key}` must be one of {', '.join(allowed)}, but the link says {quote(params[key])}; "
                            "using the default.")
    d_model = _int_in(params, "d_model", 1, APP_MAX_D_MODEL, problems, "the model width d_model")
    h = _int_in(params, "h", 1, APP_MAX_HEADS, problems, "the number of heads")
    n = _int_in(params, "n", 1, APP_MAX_TOKENS, problems, "the number of random tokens")
    _int_in(params, "seed", 0, MAX_SEED, problems, "the random seed")
    _int_in(params, "pad", 0, APP_MAX_TOKENS - 1, problems, "how many tokens to mask as padding")
    _int_in(params, "layer", 1, 6, problems, "the layer of the pretrained model")
    head = _int_in(params, "head", 1, APP_MAX_HEADS, problems, "the selected head")
    _int_in(params, "query", 1, APP_MAX_TOKENS, problems, "the selected query token")
    if h is not None:
        width = d_model if d_model is not None else Settings.d_model
        if width % h:
            problems.append(
                f"h = {h} does not divide d_model = {width}: each head needs d_model / h whole dimensions. "
                f"Head counts that work: {', '.join(map(str, head_options(width)))}. Using "
                f"h = {closest_head_count(width, h)} instead."
            )
        elif head is not None and head > h:
            problems.append(f"`head` = {head} but there are only {h} heads; showing head 1.")
    if "text" in params and len(params["text"]) > APP_MAX_TEXT_CHARS:
        problems.append(f"The text in the link is longer than {APP_MAX_TEXT_CHARS:,} characters; it was cut.")
    if n is not None and "pad" in params and str(params["pad"]).isdigit() and int(params["pad"]) >= n:
        problems.append(f"`pad` = {params['pad']} would mask every one of the {n} tokens; no padding is used.")
    return problems
