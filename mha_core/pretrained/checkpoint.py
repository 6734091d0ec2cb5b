"""Any checkpoint in the transformers layout, run through mc.forward: a folder with config.json, *.safetensors and
the tokenizer's files (tokenizer.json, or vocab.txt, or vocab.json with merges.txt).

What the families share lives here: reading the weights (safetensors, memory-mapped; float16 and bfloat16 held as
released and widened to float32 one layer at a time), the tokenizer (the `tokenizers` library), and the two shapes
of a layer: post-norm encoders (BERT, RoBERTa, DistilBERT: attention, residual, LayerNorm, feed-forward, residual,
LayerNorm) and pre-norm decoders (GPT-2, Llama, Mistral, Qwen2, Qwen3: norm, attention, residual, norm,
feed-forward, residual; then a final norm and the output layer). What differs per family (tensor names, sizes,
positions, the attention's options) is in families/<family>.py, one module each.

Nothing here imports transformers, loads a pickle or runs a model's own code.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..attention.config import ConfigError, MHAConfig
from ..attention.engine import forward
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from .common import PretrainedModel, PretrainedRun, TokenizedText
from .functional import frozen, gelu, layer_norm_, rms_norm, silu_
from .smollm2 import N_NEXT_TOKENS, NextToken

# A run keeps every layer's trace; 256 tokens is also the cap of the packaged models (minilm.py, smollm2.py).
MAX_CHECKPOINT_TOKENS = 256
_LOGIT_ROWS = 8192  # rows of the output layer widened at a time for the next token's logits


@dataclass(frozen=True, eq=False)
class Held:
    """A tensor as the checkpoint stores it: float32, float16, or bfloat16 (kept as its 16 bits, uint16: NumPy has
    no bfloat16). Transposes and slices are views; widen() gives the float32 values, exactly."""

    data: np.ndarray
    bfloat16: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> str:
        """As released: "bfloat16", "float16" or "float32"."""
        return "bfloat16" if self.bfloat16 else str(self.data.dtype)

    @property
    def T(self) -> Held:
        return Held(self.data.T, self.bfloat16)

    def __getitem__(self, index) -> Held:
        return Held(self.data[index], self.bfloat16)

    def widen(self) -> np.ndarray:
        """The float32 values (a new read-only array; the float32 data itself when already float32)."""
        if self.bfloat16:
            # A bfloat16 is the upper half of a float32: shifting its 16 bits up gives that float32 exactly.
            wide = (self.data.astype(np.uint32) << 16).view(np.float32)
        else:
            wide = self.data.astype(np.float32, copy=False)
        return frozen(wide)


@dataclass(frozen=True)
class Layout:
    """What a family's config.json says about the layer around attention (families/<family>.py fill it in)."""

    kind: str                          # "encoder" (post-norm, every token sees every other) or "decoder" (causal)
    configs: tuple[MHAConfig, ...]     # each layer's attention
    d_ff: int
    norm: str                          # "layer" (LayerNorm, with a bias) or "rms" (RMSNorm, no bias)
    norm_eps: float
    activation: str                    # the feed-forward's hidden_act: "gelu", "gelu_new", "relu", "silu", ...
    gated: bool                        # SwiGLU feed-forward (W_gate, W_up, W_down) instead of W_in, W_out
    max_positions: int                 # the longest input the model's positions allow
    positions: Callable[[np.ndarray], np.ndarray] | None = None  # ids (n,) -> learned position rows (None: RoPE)
    token_types: bool = False          # BERT's token type embeddings (one sentence: type 0)
    tied_output: bool = True           # decoders: the output layer is the token embeddings


def activation(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The feed-forward's activation, in place on a float32 array, as transformers' ACT2FN computes it."""
    def gelu_tanh(x):  # "gelu_new" (GPT-2) and "gelu_pytorch_tanh": the tanh approximation
        inner = x + 0.044715 * x**3
        inner *= math.sqrt(2.0 / math.pi)
        np.tanh(inner, out=inner)
        inner += 1.0
        x *= 0.5
        x *= inner
        return x

    table = {"gelu": lambda x: gelu(x, out=x), "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh,
             "relu": lambda x: np.maximum(x, 0, out=x), "silu": silu_, "swish": silu_}
    if name not in table:
        raise ConfigError(f"The activation {name!r} is not supported; supported: {', '.join(sorted(table))}.")
    return table[name]


class Tensors:
    """The checkpoint's tensors by name, read from every *.safetensors file of the folder with safe_open (the file
    memory-mapped); `prefix` is what the model class puts before the base model's names ("model.", "bert.", ...)."""

    DTYPES = ("F32", "F16", "BF16")

    def __init__(self, folder: Path, anchor: str):
        from safetensors import safe_open

        files = sorted(folder.glob("*.safetensors"))
        if not files:
            raise ConfigError(f"{folder} has no *.safetensors file; this loader reads only safetensors weights.")
        self._open = [safe_open(str(f), framework="np") for f in files]
        self._files = {name: i for i, f in enumerate(self._open) for name in f.keys()}
        self._paths = files
        self._torch_open: dict[int, object] = {}  # the files opened for torch, which alone reads bfloat16
        starts = [name[: -len(anchor)] for name in self._files if name.endswith(anchor)]
        starts = [s for s in starts if s == "" or s.endswith(".")]
        if not starts:
            raise ConfigError(f"{folder}: no tensor named {anchor!r}; the weights do not fit config.json's model_type.")
        self.prefix = min(starts, key=len)

    def __call__(self, name: str, optional: bool = False) -> Held | None:
        """The tensor `name` (after the prefix, or as written), held as released; None if optional and absent."""
        full = self.prefix + name if self.prefix + name in self._files else name
        if full not in self._files:
            if optional:
                return None
            raise ConfigError(f"The checkpoint has no tensor {self.prefix + name!r}.")
        f = self._open[self._files[full]]
        dtype = f.get_slice(full).get_dtype()
        if dtype not in self.DTYPES:
            raise ConfigError(f"{full} is stored as {dtype}; this loader reads {', '.join(self.DTYPES)}.")
        if dtype == "BF16":
            import torch
            from safetensors import safe_open

            i = self._files[full]
            if i not in self._torch_open:
                self._torch_open[i] = safe_open(str(self._paths[i]), framework="pt")
            bits = self._torch_open[i].get_tensor(full).view(torch.int16).numpy().view(np.uint16)  # its 16 bits
            return Held(frozen(bits), bfloat16=True)
        return Held(frozen(f.get_tensor(full)))


def read_tokenizer(folder: Path, wrap: tuple[str, str] | None = None):
    """The folder's tokenizer as a tokenizers.Tokenizer: tokenizer.json as saved, else vocab.txt (WordPiece, BERT's
    [CLS] ... [SEP]) or vocab.json + merges.txt (byte-level BPE, with wrap's (first, last) around the text when
    given, RoBERTa's <s> ... </s>). Padding and truncation are off: tokenize() truncates itself."""
    from tokenizers import Tokenizer, processors
    from tokenizers.implementations import BertWordPieceTokenizer, ByteLevelBPETokenizer

    settings = {}
    if (folder / "tokenizer_config.json").is_file():
        settings = json.loads((folder / "tokenizer_config.json").read_text())
    if (folder / "tokenizer.json").is_file():
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    elif (folder / "vocab.txt").is_file():
        tokenizer = BertWordPieceTokenizer(str(folder / "vocab.txt"), lowercase=settings.get("do_lower_case", True))
    elif (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        tokenizer = ByteLevelBPETokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                                          add_prefix_space=settings.get("add_prefix_space", False))
        if wrap is not None:
            first, last = wrap
            tokenizer.post_processor = processors.RobertaProcessing((last, tokenizer.token_to_id(last)),
                                                                    (first, tokenizer.token_to_id(first)))
    else:
        raise ConfigError(f"{folder} has no tokenizer: expected tokenizer.json, vocab.txt, or vocab.json with "
                          "merges.txt.")
    tokenizer = getattr(tokenizer, "_tokenizer", tokenizer)  # the implementations wrap a Tokenizer
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@dataclass(frozen=True, eq=False)
class CheckpointRun(PretrainedRun):
    """One pass of a checkpoint over a text: every layer's trace and hidden state (as PretrainedRun), the final hidden
    states, and for a decoder the most likely next tokens.

    final (n, d_model): what transformers calls last_hidden_state: hidden_states[n_layers] after the final norm for
    a decoder, hidden_states[n_layers] itself for an encoder (whose layers end with their norm).
    """

    final: np.ndarray
    next_tokens: tuple[NextToken, ...]  # most likely first; () for an encoder


@dataclass(frozen=True, eq=False)
class CheckpointModel(PretrainedModel):
    """A checkpoint loaded by load(): its weights held as released (Held), read-only, never changed afterwards."""

    family: str                        # config.json's model_type
    layout: Layout
    config: MHAConfig                  # layer 0's attention (every layer has these sizes)
    n_layers: int
    embeddings: dict                   # "word" (vocab, d_model), and as the family has them: "position",
                                       # "token_type", "embed_norm_w/_b", "final_norm_w/_b", "output" (vocab, d_model)
    layer_weights: tuple[dict, ...]    # per layer: Held tensors by the names layer() reads (families/*.py)
    tokenizer: object = field(repr=False)
    path: str = ""
    max_tokens: int = MAX_CHECKPOINT_TOKENS
    name: str = "the model"            # the folder's name, for messages

    @property
    def kind(self) -> str:
        return self.layout.kind

    def tokenize(self, text: str) -> TokenizedText:
        """The text's tokens, special tokens included, at most max_tokens (an encoder keeps its closing token)."""
        tokens, ids = self.encode(text)
        added = len(self.added_tokens)
        if len(tokens) <= added:
            raise ConfigError(f"The text has no characters {self.name} can read: type a sentence with words in it.")
        n_in_text = len(tokens)
        truncated = n_in_text > self.max_tokens
        message = ""
        if truncated:
            keep_last = 1 if self.kind == "encoder" and added else 0
            tokens = tokens[: self.max_tokens - keep_last] + tokens[len(tokens) - keep_last:]
            ids = ids[: self.max_tokens - keep_last] + ids[len(ids) - keep_last:]
            message = (f"Your text had {n_in_text} tokens; {self.name} reads at most {self.max_tokens} here, so only "
                       f"the first {self.max_tokens} were used.")
        return TokenizedText(tokens=tokens, ids=frozen(np.array(ids, dtype=np.int64)), n_in_text=n_in_text,
                             truncated=truncated, message=message)

    def _norm(self, x: np.ndarray, weight: Held, bias: Held | None) -> np.ndarray:
        """The family's norm over the last axis, into a new array (n, d_model)."""
        if self.layout.norm == "rms":
            return rms_norm(x, weight.widen(), self.layout.norm_eps)
        return layer_norm_(x.copy(), weight.widen(), bias.widen(), self.layout.norm_eps)

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """The input of layer 0 (n, d_model): token embeddings, plus learned positions and token type 0 where the
        family has them, in transformers' order of additions; an encoder's LayerNorm after them."""
        e, lay = self.embeddings, self.layout
        x = e["word"][ids].widen().copy()                                       # (n, d_model)
        if lay.token_types:
            x += e["token_type"][0].widen()
        if lay.positions is not None:
            x += e["position"][lay.positions(ids)].widen()
        if "embed_norm_w" in e:
            x = self._norm(x, e["embed_norm_w"], e.get("embed_norm_b"))
        return x

    def weights_in_order(self, backend: str = "numpy"):
        """Each layer's tensors widened to float32 when the run reaches that layer (and let go after it)."""
        for held in self.layer_weights:
            yield {name: a.widen() for name, a in held.items()}

    @staticmethod
    def attention_weights(w: dict) -> MHAWeights:
        """The MHAWeights of a widened layer (W_Q ... b_O, q_norm, k_norm where present)."""
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O", "q_norm", "k_norm")
        return MHAWeights(**{name: w[name] for name in names if name in w})

    def layer(self, l: int, x: np.ndarray, backend: str = "numpy", device: str = "auto",
              head_mask: np.ndarray | None = None, weights: dict | None = None) -> tuple[Trace, np.ndarray]:
        """Layer l on x (n, d_model): its attention trace (by mc.forward) and its output (n, d_model)."""
        w = weights if weights is not None else {name: a.widen() for name, a in self.layer_weights[l].items()}
        lay, cfg = self.layout, self.layout.configs[l]
        attn = self.attention_weights(w)
        if lay.kind == "encoder":
            # Post-norm: attention, residual, norm; feed-forward, residual, norm.
            trace = forward(x, attn, cfg, head_mask=head_mask, backend=backend, device=device)
            h = self._wide_norm(trace.output + x, w, "norm1")                       # (n, d_model)
            out = self._feed_forward(h, w)
            out += h
            return trace, self._wide_norm(out, w, "norm2")                          # (n, d_model)
        # Pre-norm: norm, attention, residual; norm, feed-forward, residual.
        trace = forward(self._wide_norm(x, w, "norm1"), attn, cfg, head_mask=head_mask, backend=backend,
                        device=device)
        h = x + trace.output                                                        # (n, d_model)
        out = self._feed_forward(self._wide_norm(h, w, "norm2"), w)
        out += h
        return trace, out

    def _wide_norm(self, x: np.ndarray, w: dict, name: str) -> np.ndarray:
        """The norm `name` ("norm1", "norm2") of a widened layer on x, into a new array."""
        if self.layout.norm == "rms":
            return rms_norm(x, w[name + "_w"], self.layout.norm_eps)
        return layer_norm_(x.copy(), w[name + "_w"], w[name + "_b"], self.layout.norm_eps)

    def _feed_forward(self, x: np.ndarray, w: dict) -> np.ndarray:
        """The feed-forward block on x (n, d_model) -> (n, d_model): act(x W_in^T + b_in) W_out^T + b_out, or
        SwiGLU's act(x W_gate^T) * x W_up^T, then W_down (W_out here)."""
        act = activation(self.layout.activation)
        inner = x @ w["W_in"].T                                                     # (n, d_ff)
        if "b_in" in w:
            inner += w["b_in"]
        if self.layout.gated:
            gate = x @ w["W_gate"].T                                                # (n, d_ff)
            if "b_gate" in w:
                gate += w["b_gate"]
            inner *= act(gate)
        else:
            inner = act(inner)
        out = inner @ w["W_out"].T                                                  # (n, d_model)
        if "b_out" in w:
            out += w["b_out"]
        return out

    def final_hidden(self, last: np.ndarray) -> np.ndarray:
        """What the output layer reads: the final norm of the last layer's output (a decoder), or that output."""
        e = self.embeddings
        return self._norm(last, e["final_norm_w"], e.get("final_norm_b")) if "final_norm_w" in e else last

    def next_token_probabilities(self, final_last: np.ndarray) -> np.ndarray:
        """(vocab,) float64: the probability of each token after the text, from its last final hidden state."""
        out = self.embeddings["word" if self.layout.tied_output else "output"]
        logits = np.concatenate([out[i : i + _LOGIT_ROWS].widen() @ final_last
                                 for i in range(0, out.shape[0], _LOGIT_ROWS)]).astype(np.float64)  # (vocab,)
        logits -= logits.max()
        p = np.exp(logits)
        p /= p.sum()
        return p

    def next_tokens(self, final_last: np.ndarray, k: int = N_NEXT_TOKENS) -> tuple[NextToken, ...]:
        """The k most likely next tokens (fewer when the vocabulary is smaller), most likely first."""
        p = self.next_token_probabilities(final_last)
        k = min(k, len(p))
        top = np.argsort(-p, kind="stable")[:k]  # ties: the lower id first
        return tuple(NextToken(token=self.tokenizer.id_to_token(int(i)), text=self.tokenizer.decode([int(i)]),
                               id=int(i), probability=float(p[i])) for i in top)

    def make_run(self, fields: dict) -> CheckpointRun:
        final = frozen(self.final_hidden(fields["hidden_states"][-1]))
        next_tokens = self.next_tokens(final[-1]) if self.kind == "decoder" else ()
        return CheckpointRun(**fields, final=final, next_tokens=next_tokens)


def model_folder(path: Path) -> Path:
    """The folder holding config.json: path itself, or, in the sentence-transformers layout whose modules.json names
    its Transformer module's own folder (0_Transformer in older saves), that folder."""
    modules = path / "modules.json"
    if modules.is_file():
        for module in json.loads(modules.read_text()):
            sub = path / module.get("path", "")
            if module.get("type", "").endswith("Transformer") and (sub / "config.json").is_file():
                return sub
    return path


def load_checkpoint(path, families: dict, max_tokens: int = MAX_CHECKPOINT_TOKENS) -> CheckpointModel:
    """A checkpoint folder as a CheckpointModel; families: model_type -> the family's module (families/)."""
    path = Path(path)
    if not path.is_dir():
        raise ConfigError(f"{path} is not a folder: give the folder that holds config.json and the weights.")
    folder = model_folder(path)
    if not (folder / "config.json").is_file():
        raise ConfigError(f"{folder} has no config.json; a checkpoint in the transformers layout needs one.")
    hp = json.loads((folder / "config.json").read_text())
    family = families.get(hp.get("model_type"))
    if family is None:
        raise ConfigError(f"model_type {hp.get('model_type')!r} is not supported; supported: "
                          f"{', '.join(sorted(families))}.")
    layout = family.layout(hp)
    read = Tensors(folder, family.ANCHOR)
    embeddings = {name: a for name, a in family.embeddings(read, hp).items() if a is not None}
    layers = tuple(family.layer(read, l, hp) for l in range(len(layout.configs)))
    if layout.kind == "decoder" and not layout.tied_output and "output" not in embeddings:
        raise ConfigError(f"{folder}: config.json says the output layer is not tied, but it has no lm_head weights.")
    for cfg, held in zip(layout.configs, layers, strict=True):  # shapes only: zeros of each shape, no memory
        MHAWeights(**{n: np.broadcast_to(np.float32(0), a.shape) for n, a in held.items()
                      if n in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O", "q_norm", "k_norm")}).check(cfg)
    # A sentence-transformers folder may keep the tokenizer beside modules.json or in the Transformer's folder.
    tokenizer_files = ("tokenizer.json", "vocab.txt", "vocab.json")
    has_tokenizer = any((path / name).is_file() for name in tokenizer_files)
    tokenizer = read_tokenizer(path if has_tokenizer else folder, getattr(family, "WRAP", None))
    return CheckpointModel(name=path.name or str(path), family=hp["model_type"], layout=layout,
                           config=layout.configs[0], n_layers=len(layers), embeddings=embeddings,
                           layer_weights=layers, tokenizer=tokenizer, path=str(path),
                           max_tokens=min(max_tokens, layout.max_positions))
