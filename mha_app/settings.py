"""The app's settings: one frozen object, passed whole, and spelled out in the URL one field per parameter.

`Spec` holds what decides the computation (hashable: it is the cache key); `View` holds what only decides what is
shown. Each field carries its control's label, help, choices and bounds, and everything else follows from the
field: the widget reads them, url.check validates a link against them, and the share link and the JSON export are
the fields that differ from their defaults. A new control is one field here, one widget, and the code that uses it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from urllib.parse import urlencode

from mha_core import engine, figures
from mha_core.plant import PATTERNS
from mha_core.presets import TINY_CONFIG
from mha_core.pretrained import MODELS as PRETRAINED
from mha_core.published import presets
from mha_core.scaling import SCALES
from mha_core.training import TASKS
from mha_core.training.tasks import D_MODELS, HEAD_COUNTS

from .lesson import SCREENS

APP_MAX_D_MODEL = 1024
APP_MAX_HEADS = 16
APP_MAX_TOKENS = 2048
APP_MAX_TEXT_CHARS = 4000
MAX_SEED = 2**31 - 1
MAX_SEQ_LEN = 2**20   # tokens, in the K/V cache tables (1M: the longest contexts in use)
MAX_BATCH = 1024
MAX_HEADS_SHOWN = max(APP_MAX_HEADS, *(card.n_heads for card in PRETRAINED.values()))  # random or trained heads

RANDOM = "random weights"
MODELS = (RANDOM, *PRETRAINED)
INPUTS = ("sentence", "random", "tiny", "pair")
BACKENDS = dict(zip(("NumPy", "PyTorch"), engine.BACKENDS, strict=True))  # the label shown -> the engine's name
STAGES = {label: key for key, (label, _) in figures.STAGES.items()}      # the label shown -> figures' stage key
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
DEFAULT_TEXT_KV = "Le chat s'est assis sur le tapis parce qu'il était fatigué."
DEFAULT_COMPARE = "A tired cat was lying on the rug."
PLANTS = ("none", *PATTERNS)
MAX_STRENGTH = 30.0                     # at 30 a rule key keeps all but 2e-10 of the weight against 2047 others


@dataclass(frozen=True)
class Control:
    """How a setting is offered: its label and help, and the values it may take (choices, or lo..hi)."""

    label: str
    help: str | None = None
    what: str = ""       # what the value is, in a link's warning (default: the label)
    choices: tuple = ()
    lo: float = 0        # bounds of a number, or of each number in a tuple setting
    hi: float = 0
    max_chars: int = 0


def setting(default, label: str, **control):
    return field(default=default, metadata={"control": Control(label, **control)})


@dataclass(frozen=True)
class Spec:
    """What decides the computation: the model, the input and the layer's sizes."""

    model: str = setting(RANDOM, "Weights", choices=MODELS,
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
                       help="Blocks these keys for every query, as padding is blocked in a batch.")
    backend: str = setting("NumPy", "Backend", choices=tuple(BACKENDS),
                           help="NumPy is the readable reference; PyTorch uses a GPU when one is available.")
    text_kv: str = setting(DEFAULT_TEXT_KV, "Keys and values: the second sentence", max_chars=APP_MAX_TEXT_CHARS,
                           help="Cross-attention: the queries come from the first sentence, the keys and values "
                                "from this one (as a translating decoder reads its source sentence).")
    kv_heads: int = setting(0, "Key/value heads", lo=0, hi=APP_MAX_HEADS, what="the number of key/value heads",
                            help="Grouped-query attention (Ainslie et al. 2023): fewer key/value heads than query "
                                 "heads, each shared by a group of query heads. 1 = multi-query attention.")
    scale: str = setting(SCALES[0], "Scale the scores by", choices=SCALES,
                         help="Vaswani et al. (2017) multiply Q K^T by 1/√d_k; 'none' leaves the scores as they are.")
    ablate: tuple = setting((), "Switch heads off", lo=1, hi=MAX_HEADS_SHOWN, what="the heads to switch off",
                            help="Each chosen head's output is multiplied by 0 before W_O (Michel et al. 2019).")
    plant: str = setting(PLANTS[0], "Plant a head", choices=PLANTS,
                         help="Replace one head's W_Q rows so that, on this input, it attends by a fixed rule.")
    plant_head: int = setting(1, "Head to plant", lo=1, hi=APP_MAX_HEADS, what="the head to plant")
    strength: float = setting(4.0, "Strength", lo=0.0, hi=MAX_STRENGTH, what="the planted scores' strength",
                              help="The score softmax sees where the rule says 'look here' (0 elsewhere).")

    @property
    def card(self):
        """The pretrained model's ModelCard, or None for random weights."""
        return PRETRAINED.get(self.model)

    @property
    def heads(self) -> int:
        """The number of heads this spec computes."""
        if self.card:
            return self.card.n_heads
        return TINY_CONFIG.n_heads if self.input == "tiny" else self.h

    @property
    def softmax_scale(self) -> float | None:
        """MHAConfig's scale: None for 1/sqrt(d_k), 1.0 for none."""
        return None if self.scale == SCALES[0] else 1.0


@dataclass(frozen=True)
class View:
    """What only decides what is shown: the layer, head and query token in focus, and the stage of step 2."""

    layer: int = setting(1, "Layer", lo=1, hi=max(card.n_layers for card in PRETRAINED.values()),
                         what="the layer of the pretrained model")
    head: int = setting(1, "Head", lo=1, hi=MAX_HEADS_SHOWN, what="the selected head")
    query: int = setting(1, "Query token (position)", lo=1, hi=APP_MAX_TOKENS, what="the selected query token",
                         help="Pick a token by its position; the figures show its row.")
    stage: str = setting("softmax weights", "Stage", choices=tuple(STAGES))
    zoom_query: int = setting(1, "Zoom: first query row", lo=1, hi=APP_MAX_TOKENS,
                              what="the zoom window's first query row",
                              help=f"The zoom window shows up to {figures.ZOOM} query rows from this one, every cell "
                                   "exact.")
    zoom_key: int = setting(1, "Zoom: first key column", lo=1, hi=APP_MAX_TOKENS,
                            what="the zoom window's first key column",
                            help=f"The zoom window shows up to {figures.ZOOM} key columns from this one.")
    key: int = setting(1, "Key token (position)", lo=1, hi=APP_MAX_TOKENS, what="the selected key token",
                       help="The key of the attention weight that is worked out by hand.")
    preset: str = setting(presets()[0].name, "Model", choices=tuple(shape.name for shape in presets()),
                          help="A model with published sizes, or a trained model of this app.")
    seq_len: int = setting(4096, "Sequence length (tokens)", lo=1, hi=MAX_SEQ_LEN,
                           what="the sequence length of the K/V cache")
    batch: int = setting(1, "Batch (sequences at once)", lo=1, hi=MAX_BATCH, what="the batch size of the K/V cache")
    present: int = setting(0, "Presentation mode", lo=0, hi=1, what="presentation mode: 1 = on, 0 = off")
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

    def values(self) -> dict:
        """Every setting by name, as plain values (the JSON export)."""
        return {**asdict(self.spec), **asdict(self.view)}

    def query_params(self) -> dict[str, str]:
        """The URL parameters that differ from the defaults (a short, shareable link)."""
        return {name: to_url(value) for name, value in self.values().items() if value != default(name)}

    def share_url(self, base: str) -> str:
        params = self.query_params()
        return f"{base}?{urlencode(params, safe=',')}" if params else base  # ablate=2,5 as typed


def to_url(value) -> str:
    """A setting's value as the URL spells it: true/false, 2,5 for a tuple, 4 for 4.0."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(map(to_url, value))
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as the same float
        return text[:-2] if text.endswith(".0") else text
    return str(value)
