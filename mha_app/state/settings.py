"""The app's settings: one frozen object, passed whole, and spelled out in the URL one field per parameter.

`Spec` holds what decides the computation (hashable: it is the cache key); `View` holds what only decides what is
shown. Each field carries its control's label, help, choices and bounds, and everything else follows from the
field: the widget reads them, url.check validates a link against them, and the share link and the JSON export are
the fields that differ from their defaults. A new control is one field here, one widget, and the code that uses it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from urllib.parse import urlencode

from mha_app.copy import links
from mha_app.copy.example import RANDOM_WEIGHTS
from mha_app.copy.lesson import SCREENS
from mha_core import divisors, figures
from mha_core.analysis import pooling
from mha_core.attention import engine
from mha_core.attention.config import head_split_problem, kv_split_problem
from mha_core.attention.inputs import token_spans
from mha_core.attention.masks import padding_problem
from mha_core.experiments.plant import PATTERNS
from mha_core.experiments.scaling import SCALES
from mha_core.pretrained import MODELS as PRETRAINED
from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS
from mha_core.teaching.published import presets
from mha_core.training import TASKS
from mha_core.training.tasks import D_MODELS, HEAD_COUNTS

APP_MAX_D_MODEL = 1024
APP_MAX_HEADS = 16
APP_MAX_TOKENS = 2048
APP_MAX_TEXT_CHARS = 4000
MAX_SEED = 2**31 - 1
MAX_SEQ_LEN = 2**20   # tokens, in the K/V cache tables (1M: the longest contexts in use)
MAX_BATCH = 1024
MAX_HEADS_SHOWN = max(APP_MAX_HEADS, *(card.n_heads for card in PRETRAINED.values()))  # random or trained heads

RANDOM = "random"
MODELS = (RANDOM, *PRETRAINED)
INPUTS = ("sentence", "random", "tiny", "pair")
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
DEFAULT_TEXT_Q = "Le chat s'est assis sur le tapis parce qu'il était fatigué."  # cross-attention: the translation
DEFAULT_COMPARE = "A tired cat was lying on the rug."
PLANTS = ("none", *PATTERNS)
MAX_STRENGTH = 30.0                     # at 30 a rule key keeps all but 2e-10 of the weight against 2047 others
# What the attention explorer can show: the stages of step 2, then what each key adds (contribution shares,
# mha_core.analysis.contributions), on the same grid and scale as the weights.
STAGES = (*pooling.STAGES, "contributions")
# The attention page's tabs, by key (the tab that is open is part of the view, and of its link). Short titles: all
# eight fit the main column at 1280 px (longer ones hid the last behind a scroll arrow).
ATTENTION_TABS = {"mix": "Mixing the values", "adds": "What each key adds", "plane": "Queries and keys",
                  "mask": "The mask", "focus": "How focused?", "scale": "Why √d_k?", "shared_kv": "Shared K/V",
                  "plant": "Plant a head"}
# A link that names one of these opens that view drawn: its question does not wait (see asks_by_default).
VIEW_NAMES = ("head", "query", "stage", "layer", "tab")


@dataclass(frozen=True)
class Control:
    """How a setting is offered: its label and help, and the values it may take (choices, or lo..hi).

    A choice is a short key that links carry and never change (stage=weights); `labels` says how a control shows
    each key, and `aliases` are older spellings that links may still carry (any letter case works too).
    """

    label: str
    help: str | None = None
    what: str = ""       # what the value is, in a link's warning (default: the label)
    choices: tuple = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    lo: float = 0        # bounds of a number, or of each number in a tuple setting
    hi: float = 0
    max_chars: int = 0

    def label_of(self, key) -> str:
        """What a control shows for a choice (its format_func)."""
        return self.labels.get(key, str(key))

    def choice(self, raw: str) -> str | None:
        """The key a link's text names, by key, label or alias, in any letter case; None when it names none."""
        wanted = raw.strip().casefold()
        for key in self.choices:
            if wanted in (key.casefold(), self.label_of(key).casefold()):
                return key
        return next((key for alias, key in self.aliases.items() if alias.casefold() == wanted), None)


def setting(default, label: str, **control):
    return field(default=default, metadata={"control": Control(label, **control)})


@dataclass(frozen=True)
class Problem:
    """A setting that does not work with the others: why, in plain words, and the value used instead."""

    name: str
    message: str
    fixed: object


def head_options(d_model: int) -> list[int]:
    """Head counts the app offers for this d_model: those that divide it, up to APP_MAX_HEADS."""
    return divisors(d_model, APP_MAX_HEADS)


def closest_head_count(d_model: int, wanted: int) -> int:
    """The valid head count nearest to `wanted` (the larger one on a tie)."""
    return min(head_options(d_model), key=lambda h: (abs(h - wanted), -h))


@dataclass(frozen=True)
class Spec:
    """What decides the computation: the model, the input and the layer's sizes."""

    model: str = setting(RANDOM, "Weights", choices=MODELS, labels={RANDOM: RANDOM_WEIGHTS},
                         aliases={"random weights": RANDOM, "minilm": "all-MiniLM-L6-v2",
                                  "smollm2": "SmolLM2-135M-Instruct"},
                         help="Random weights show the mechanics at any size; a trained model shows real heads.")
    input: str = setting("sentence", "Input", choices=INPUTS)
    text: str = setting(DEFAULT_TEXT, "Sentence", max_chars=APP_MAX_TEXT_CHARS)
    n: int = setting(8, "Tokens n", lo=1, hi=APP_MAX_TOKENS, what="the number of random tokens")
    d_model: int = setting(128, "d_model", lo=1, hi=APP_MAX_D_MODEL, help="Width of every token vector.",
                           what="the model width d_model")
    h: int = setting(8, "Heads h", lo=1, hi=APP_MAX_HEADS, what="the number of heads")
    seed: int = setting(0, "Seed", lo=0, hi=MAX_SEED, what="the random seed",
                        help="Fixes the random weights and embeddings: same seed, same numbers.")
    pe: bool = setting(True, "Positional encoding",
                       help="Adds the sinusoidal position signal to sentence embeddings, so word order matters.")
    causal: bool = setting(False, "Causal mask",
                           help="Each token may only look at itself and earlier tokens, as in a decoder.")
    pad: int = setting(0, "Mask the last tokens as padding", lo=0, hi=APP_MAX_TOKENS - 1,
                       what="how many tokens to mask as padding",
                       help="Blocks these keys for every query, as padding is blocked in a batch. In a batch the "
                            "padding is filler ([PAD] tokens added to make texts the same length); here the last "
                            "real tokens stand in for it, so you can see what blocking does. A padded token's own "
                            "output, as a query, is thrown away.")
    backend: str = setting("numpy", "Backend", choices=engine.BACKENDS, labels={"numpy": "NumPy", "torch": "PyTorch"},
                           aliases={"pytorch": "torch"},
                           help="NumPy is the readable reference; PyTorch uses a GPU when one is available.")
    # Cross-attention (input = pair): `text` is the source sentence, read first (its tokens make the keys and
    # values, Y), and text_q the sentence being written from it (its tokens make the queries, X). Links from before
    # carried text_kv, with the roles the other way round: url.check turns them into these two.
    text_q: str = setting(DEFAULT_TEXT_Q, "The sentence being written: the queries", max_chars=APP_MAX_TEXT_CHARS,
                          help="Cross-attention: each token of this sentence asks (its query) what to take from the "
                               "source sentence above (its keys and values), as a decoder does while it writes a "
                               "translation.")
    kv_heads: int = setting(0, "Key/value heads h_kv", lo=0, hi=APP_MAX_HEADS, what="the number of key/value heads",
                            help="Grouped-query attention (Ainslie et al. 2023): fewer key/value heads than query "
                                 "heads, each shared by a group of query heads. 1 = multi-query attention.")
    scale: str = setting(SCALES[0], "Scale the scores by", choices=SCALES, labels={"sqrt_dk": "1/√d_k"},
                         aliases={"1/sqrt(d_k)": "sqrt_dk", "1/√dk": "sqrt_dk"},
                         help="Vaswani et al. (2017) multiply Q K^T by 1/√d_k; 'none' leaves the scores as they are.")
    ablate: tuple = setting((), "Switch heads off", lo=1, hi=MAX_HEADS_SHOWN, what="the heads to switch off",
                            help="Each chosen head's output is multiplied by 0 before W_O (Michel et al. 2019).")
    plant: str = setting(PLANTS[0], "Plant a head", choices=PLANTS,
                         help="Replace one head's block of W_Q so that, on this input, it attends by a fixed rule.")
    plant_head: int = setting(1, "Head to plant", lo=1, hi=APP_MAX_HEADS, what="the head to plant")
    strength: float = setting(4.0, "Strength", lo=0.0, hi=MAX_STRENGTH, what="the planted scores' strength",
                              help="The score softmax sees where the rule says 'look here' (0 elsewhere).")

    @property
    def card(self):
        """The pretrained model's ModelCard, or None for random weights."""
        return PRETRAINED.get(self.model)

    @property
    def query_text(self) -> str:
        """The text whose tokens make the queries: in cross-attention the sentence being written (text_q), else
        the sentence (text)."""
        return self.text_q if self.input == "pair" else self.text

    @property
    def heads(self) -> int:
        """The number of (query) heads this spec computes."""
        if self.card:
            return self.card.n_heads
        return TINY_CONFIG.n_heads if self.input == "tiny" else self.h

    @property
    def sizes_fixed(self) -> bool:
        """Whether d_model and h are fixed (a trained model, or the tiny example) rather than chosen."""
        return self.card is not None or self.input == "tiny"

    @property
    def softmax_scale(self) -> float | None:
        """MHAConfig's scale: None for 1/sqrt(d_k), 1.0 for none."""
        return None if self.scale == SCALES[0] else 1.0

    def token_counts(self) -> tuple[int, int] | None:
        """(n, m): the query and key tokens, for random weights (a trained model's own tokenizer counts them);
        None for a text without words (the page says so)."""
        if self.card is not None:
            return None
        if self.input in ("sentence", "pair"):
            n = min(len(token_spans(self.query_text)), APP_MAX_TOKENS)
        else:
            n = len(TINY_TOKENS) if self.input == "tiny" else self.n
        m = min(len(token_spans(self.text)), APP_MAX_TOKENS) if self.input == "pair" else n
        return (n, m) if n and m else None

    def problems(self) -> list[Problem]:
        """The rules between this spec's settings that it breaks, each with the value that works instead.

        Later rules see the earlier fixes (the key/value heads are checked against the corrected h). The link
        checker warns with these words, the sidebar offers only values that pass, and example.py runs on
        `normalised()`.
        """
        found: list[Problem] = []
        spec = self

        def broke(name: str, message: str, fixed) -> None:
            nonlocal spec
            found.append(Problem(name, message, fixed))
            spec = replace(spec, **{name: fixed})

        card = self.card
        if not self.sizes_fixed and (problem := head_split_problem(self.d_model, self.h, APP_MAX_HEADS)):
            fixed = closest_head_count(self.d_model, self.h)
            broke("h", links.head_count_fixed(problem, fixed), fixed)
        if spec.kv_heads and spec.sizes_fixed:
            n_kv = card.n_kv_heads if card else spec.heads  # the tiny example: one per query head
            broke("kv_heads", links.kv_heads_ignored(card.name if card else None, spec.heads, n_kv), 0)
        elif spec.kv_heads and (problem := kv_split_problem(spec.h, spec.kv_heads)):
            broke("kv_heads", links.kv_heads_fixed(problem), 0)
        if card and spec.scale != SCALES[0]:
            broke("scale", links.scale_kept(card.name), SCALES[0])
        if card and spec.plant != PLANTS[0]:
            broke("plant", links.plant_ignored(card.name), PLANTS[0])
        if spec.plant_head > spec.heads:
            broke("plant_head", links.plant_head_missing(spec.plant_head, spec.heads), 1)
        if spec.ablate and max(spec.ablate) > spec.heads:
            kept = tuple(i for i in spec.ablate if i <= spec.heads)
            broke("ablate", links.ablate_missing(max(spec.ablate), spec.heads, kept), kept)
        if spec.input == "pair" and spec.causal:
            broke("causal", links.CAUSAL_PAIR, False)
        counts = spec.token_counts()
        if counts and (problem := padding_problem(counts[1], spec.pad)):
            broke("pad", links.padding_fixed(problem), 0)
        return found

    def allows(self, **values) -> bool:
        """Whether these settings (e.g. causal=True) keep to the rules, with this spec's others."""
        changed = replace(self, **values)
        return not any(p.name in values for p in changed.problems())

    def normalised(self) -> Spec:
        """The spec with every broken rule fixed (see problems)."""
        return replace(self, **{p.name: p.fixed for p in self.problems()})
@dataclass(frozen=True)
class View:
    """What only decides what is shown: the layer, head and query token in focus, and the stage of step 2."""

    layer: int = setting(1, "Layer", lo=1, hi=max(card.n_layers for card in PRETRAINED.values()),
                         what="the layer of the pretrained model")
    head: int = setting(1, "Head", lo=1, hi=MAX_HEADS_SHOWN, what="the selected head")
    query: int = setting(1, "Query token (position)", lo=1, hi=APP_MAX_TOKENS, what="the selected query token",
                         help="Pick a token by its position; the figures show its row.")
    stage: str = setting("weights", "Stage", choices=STAGES,
                         aliases={"softmax weights": "weights", "contribution shares": "contributions"},
                         labels={"raw": "raw scores", "scaled": "scaled scores", "weights": "softmax weights"})
    zoom_query: int = setting(1, "Zoom: first query row", lo=1, hi=APP_MAX_TOKENS,
                              what="the zoom window's first query row",
                              help=f"The zoom window shows up to {figures.ZOOM} query rows from this one, every cell "
                                   "exact.")
    zoom_key: int = setting(1, "Zoom: first key column", lo=1, hi=APP_MAX_TOKENS,
                            what="the zoom window's first key column",
                            help=f"The zoom window shows up to {figures.ZOOM} key columns from this one.")
    key: int = setting(1, "Key token (position)", lo=1, hi=APP_MAX_TOKENS, what="the selected key token",
                       help="The key of the attention weight that is worked out by hand.")
    preset: str = setting(presets()[0].key, "Model", choices=tuple(shape.key for shape in presets()),
                          labels={shape.key: shape.name for shape in presets()},
                          help="A model with published sizes, or a trained model of this app.")
    seq_len: int = setting(4096, "Sequence length (tokens)", lo=1, hi=MAX_SEQ_LEN,
                           what="the sequence length of the K/V cache")
    batch: int = setting(1, "Batch (sequences at once)", lo=1, hi=MAX_BATCH, what="the batch size of the K/V cache")
    present: bool = setting(False, "Presentation mode")
    screen: int = setting(1, "Screen", lo=1, hi=len(SCREENS), what="the screen of the lesson")
    compare: str = setting(DEFAULT_COMPARE, "Compare with", max_chars=APP_MAX_TEXT_CHARS,
                           help="A second sentence: the trained model's sentence vectors of both are compared, "
                                "with and without the switched-off heads.")
    # The "Heads learn" page: the tiny model it trains (numbers as text, the way the link spells them).
    task: str = setting("induction", "Task", choices=tuple(TASKS), help="What the tiny model learns to do.")
    task_h: str = setting("4", "Heads h", choices=tuple(map(str, HEAD_COUNTS)), what="the tiny model's heads",
                          help="Every head count has the same parameters: each head works in d_model / h dimensions.")
    task_d_model: str = setting("64", "d_model", choices=tuple(map(str, D_MODELS)), what="the tiny model's width",
                                help="Width of every token vector of the tiny model.")
    task_seed: int = setting(0, "Training seed", lo=0, hi=MAX_SEED, what="the training seed",
                             help="Fixes the first random weights and every training batch: same seed, same run.")
    tab: str = setting("mix", "Tab", choices=tuple(ATTENTION_TABS), labels=ATTENTION_TABS,
                       what="the open tab of the attention page")
    ask: bool = setting(True, "Ask before showing",
                        help="Each step asks a question before it shows the figure that answers it. Untick to see "
                             "every figure at once, with the question's answer.")


    def problems(self, spec: Spec) -> list[Problem]:
        """The rules between what is shown and what is computed (a normalised spec) that this view breaks."""
        found = []
        if self.head > spec.heads:
            found.append(Problem("head", links.head_missing(self.head, spec.heads), 1))
        card = spec.card
        if card and self.layer > card.n_layers:
            found.append(Problem("layer", links.layer_missing(self.layer, card.name, card.n_layers), 1))
        counts = spec.token_counts()
        if counts:
            n, m = counts
            if self.query > n:
                found.append(Problem("query", links.query_missing(self.query, n), n))
            for name, count, what in (("zoom_query", n, "query row"), ("zoom_key", m, "key column")):
                if getattr(self, name) > count:
                    found.append(Problem(name, links.zoom_missing(getattr(self, name), count, what), count))
        return found


FIELDS = {f.name: f for cls in (Spec, View) for f in fields(cls)}  # every setting by name (= URL parameter)


def control(name: str) -> Control:
    return FIELDS[name].metadata["control"]


def default(name: str):
    return FIELDS[name].default


@dataclass(frozen=True)
class Settings:
    """Everything that decides what the app shows."""

    spec: Spec = Spec()
    view: View = View()

    @classmethod
    def of(cls, **values) -> Settings:
        """Settings from flat field values, e.g. Settings.of(h=4, head=2)."""
        unknown = set(values) - set(FIELDS)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        return cls(Spec(**{f.name: values[f.name] for f in fields(Spec) if f.name in values}),
                   View(**{f.name: values[f.name] for f in fields(View) if f.name in values}))

    def problems(self) -> list[Problem]:
        """Every rule between the settings that these break (Spec.problems, then View.problems)."""
        spec = self.spec.normalised()
        return self.spec.problems() + self.view.problems(spec)

    def normalised(self) -> Settings:
        """The settings with every broken rule fixed."""
        spec = self.spec.normalised()
        return Settings(spec, replace(self.view, **{p.name: p.fixed for p in self.view.problems(spec)}))

    def values(self) -> dict:
        """Every setting by name, as plain values (the JSON export)."""
        return {**asdict(self.spec), **asdict(self.view)}

    def query_params(self, n: int | None = None) -> dict[str, str]:
        """The URL parameters that differ from the defaults (a short, shareable link); n, the example's number of
        query tokens, decides the default query token (see view_defaults)."""
        defaults = {**{name: f.default for name, f in FIELDS.items()}, **view_defaults(self.spec, n)}
        params = {name: to_url(value) for name, value in self.values().items()
                  if value != defaults[name] and name != "ask"}
        # ask=false always; ask=true only where the link would not ask without it (it names a view)
        if not self.view.ask or not asks_by_default(params, self.view.present):
            params["ask"] = to_url(self.view.ask)
        return params

    def share_url(self, base: str, n: int | None = None) -> str:
        params = self.query_params(n)
        return f"{base}?{urlencode(params, safe=',')}" if params else base  # ablate=2,5 as typed


# Where a planted head's page starts instead of query 1: the first query its rule reaches (previous), or the first
# where its key is neither the query itself nor the one before it (first).
PLANTED_START = {"previous": 2, "first": 3}


def view_defaults(spec: Spec, n: int | None = None) -> dict:
    """The head and query token shown when none is chosen, where they depend on what is computed: a planted head,
    else head 1; with a causal mask (a decoder) the last token that is not padding (the one that sees every other,
    whose next token a decoder predicts; a padded query's output is thrown away), else the first word: after [CLS]
    in an encoder whose tokenizer puts it first (its row is a special token's, not a word's). A head planted to look
    at the previous token starts on the second token, the first to have one; one planted on the first token on the
    third, the first query whose first token is neither itself nor the one before it (on query 1 it looks like a
    head planted on the token itself). n: the number of query tokens (None: the query's default stays 1). A link
    that names its query keeps it."""
    causal = spec.causal or (spec.card is not None and spec.card.kind == "decoder")
    padded = spec.pad if spec.card is None and spec.input != "pair" else 0  # in pair mode padding is the source's
    first_word = spec.card.first_word if spec.card is not None and n and n > spec.card.first_word else 1
    query = max(1, n - padded) if n and causal else first_word
    if query == 1 and n and spec.plant in PLANTED_START:
        query = min(PLANTED_START[spec.plant], n)
    return {"head": spec.plant_head if spec.plant != PLANTS[0] else 1, "query": query}


def asks_by_default(names: Collection[str], present: bool) -> bool:
    """Whether a link that gives no `ask` asks its questions before it shows their figures: in presentation mode,
    yes; else only when it names no view (VIEW_NAMES), as a visit to a step page does: a link to a head, a query, a
    stage, a layer or a tab was made to show it."""
    return present or not any(name in names for name in VIEW_NAMES)


def to_url(value) -> str:
    """A setting's value as the links the app writes spell it: true/false, 2,5 for a tuple, 4 for 4.0."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(map(to_url, value))
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as the same float
        return text[:-2] if text.endswith(".0") else text
    return str(value)
