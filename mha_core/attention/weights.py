"""The learned matrices of one layer, in PyTorch's layout: W is (out_features, in_features), used as x @ W.T + b."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .config import ConfigError, MHAConfig


@dataclass(frozen=True)
class MHAWeights:
    """W_Q (h*d_k, d_model); W_K, W_V (n_kv_heads*d_k, d_model); W_O (d_model, h*d_k); biases or None;
    q_norm, k_norm (d_k,): the weights of the per-head RMSNorm on queries and keys (cfg.qk_norm_eps), or None."""

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    b_V: np.ndarray | None = None
    b_O: np.ndarray | None = None
    q_norm: np.ndarray | None = None
    k_norm: np.ndarray | None = None

    @property
    def dtype(self) -> np.dtype:
        return self.W_Q.dtype

    def arrays(self) -> dict[str, np.ndarray]:
        """Every matrix and bias that is present, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def astype(self, dtype) -> MHAWeights:
        """The same weights in another float dtype (self when nothing changes)."""
        if all(a.dtype == dtype for a in self.arrays().values()):
            return self
        return MHAWeights(**{name: a.astype(dtype) for name, a in self.arrays().items()})

    def check(self, cfg: MHAConfig) -> None:
        """Raise ConfigError unless these weights fit `cfg`."""
        q_out, kv_out = cfg.n_heads * cfg.d_k, cfg.kv_heads * cfg.d_k
        expected = {
            "W_Q": (q_out, cfg.d_model), "W_K": (kv_out, cfg.d_model), "W_V": (kv_out, cfg.d_model),
            "W_O": (cfg.d_model, q_out), "b_Q": (q_out,), "b_K": (kv_out,), "b_V": (kv_out,), "b_O": (cfg.d_model,),
            "q_norm": (cfg.d_k,), "k_norm": (cfg.d_k,),
        }
        for name, array in self.arrays().items():
            if array.shape != expected[name]:
                raise ConfigError(f"{name} has shape {array.shape}, but this configuration needs {expected[name]}.")
            if not np.issubdtype(array.dtype, np.floating):
                raise ConfigError(f"{name} must hold real floating-point numbers, got {array.dtype}.")
            if not np.isfinite(array).all():
                raise ConfigError(f"{name} contains NaN or infinite numbers; the weights must be finite.")
        has_bias = self.b_Q is not None
        if has_bias != cfg.bias:
            have = "have" if has_bias else "lack"
            raise ConfigError(f"The configuration says bias={cfg.bias}, but the weights {have} biases.")
        has_norm = self.q_norm is not None and self.k_norm is not None
        if has_norm != (cfg.qk_norm_eps is not None) or (self.q_norm is None) != (self.k_norm is None):
            raise ConfigError("A per-head norm on queries and keys needs both q_norm and k_norm in the weights and "
                              "qk_norm_eps in the configuration, or none of the three.")


def init_weights(cfg: MHAConfig, seed: int = 0, dtype=np.float32) -> MHAWeights:
    """Seeded weights drawn like torch.nn.MultiheadAttention's reset_parameters.

    The stacked input projection is Xavier-uniform, W_O is uniform(+-1/sqrt(d_model)) and every bias starts at 0.
    """
    rng = np.random.default_rng(seed)
    q_out, kv_out = cfg.n_heads * cfg.d_k, cfg.kv_heads * cfg.d_k
    fan_out = q_out + 2 * kv_out  # Xavier sees Q, K and V as one stacked matrix, as torch does
    in_bound = np.sqrt(6.0 / (fan_out + cfg.d_model))
    w_in = rng.uniform(-in_bound, in_bound, size=(fan_out, cfg.d_model)).astype(dtype)
    out_bound = 1.0 / np.sqrt(q_out)
    W_O = rng.uniform(-out_bound, out_bound, size=(cfg.d_model, q_out)).astype(dtype)
    W_Q, W_K, W_V = np.split(w_in, [q_out, q_out + kv_out])
    biases = {}
    if cfg.bias:
        biases = dict(b_Q=np.zeros(q_out, dtype), b_K=np.zeros(kv_out, dtype), b_V=np.zeros(kv_out, dtype),
                      b_O=np.zeros(cfg.d_model, dtype))
    return MHAWeights(W_Q=W_Q.copy(), W_K=W_K.copy(), W_V=W_V.copy(), W_O=W_O, **biases)


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy().copy()


def config_from_torch(module) -> MHAConfig:
    """The MHAConfig that describes a torch.nn.MultiheadAttention."""
    _check_supported(module)
    return MHAConfig(d_model=module.embed_dim, n_heads=module.num_heads, bias=module.in_proj_bias is not None)


def _check_supported(module) -> None:
    if module.bias_k is not None:
        raise ConfigError("add_bias_kv=True is not supported: it appends an extra learned key and value.")
    if module.add_zero_attn:
        raise ConfigError("add_zero_attn=True is not supported: it appends an extra all-zero key and value.")
    if not module._qkv_same_embed_dim:
        raise ConfigError("kdim/vdim different from embed_dim are not supported: keys and values must have d_model.")


def _linear_parts(*linears) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """The weights (out_features, in_features) and biases (None where absent) of nn.Linear modules, copied."""
    return ([_numpy(m.weight) for m in linears],
            [None if getattr(m, "bias", None) is None else _numpy(m.bias) for m in linears])


def _transformers_weights(module) -> MHAWeights | None:
    """The weights of an attention module from transformers (by its parts' names), or None when it is none of them.

    GPT2Attention: one fused c_attn, a Conv1D storing (in, out), so W = weight^T cut into W_Q, W_K, W_V; c_proj is W_O.
    BertAttention, RobertaAttention: self.query, self.key, self.value, and W_O in output.dense.
    DistilBERT's attention: q_lin, k_lin, v_lin, out_lin.
    LlamaAttention, MistralAttention, Qwen2Attention, Qwen3Attention: q_proj, k_proj, v_proj, o_proj, and Qwen3's
    per-head q_norm and k_norm.
    """
    if hasattr(module, "c_attn") and hasattr(module, "c_proj"):
        if getattr(module, "is_cross_attention", False):
            raise ConfigError("GPT-2's cross-attention is not supported: its queries come from a second sequence.")
        W_Q, W_K, W_V = np.split(_numpy(module.c_attn.weight).T, 3)    # (d_model, d_model) each, as x @ W.T reads
        b_Q, b_K, b_V = np.split(_numpy(module.c_attn.bias), 3)
        return MHAWeights(W_Q=W_Q.copy(), W_K=W_K.copy(), W_V=W_V.copy(), W_O=_numpy(module.c_proj.weight).T.copy(),
                          b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=_numpy(module.c_proj.bias))
    if hasattr(module, "self") and hasattr(getattr(module, "output", None), "dense"):
        parts = (module.self.query, module.self.key, module.self.value, module.output.dense)
    elif all(hasattr(module, name) for name in ("q_lin", "k_lin", "v_lin", "out_lin")):
        parts = (module.q_lin, module.k_lin, module.v_lin, module.out_lin)
    elif all(hasattr(module, name) for name in ("q_proj", "k_proj", "v_proj", "o_proj")):
        parts = (module.q_proj, module.k_proj, module.v_proj, module.o_proj)
    elif hasattr(module, "query") and hasattr(module, "key"):
        raise ConfigError(f"{type(module).__name__} has no output projection: pass the module around it "
                          "(BertAttention, e.g. model.encoder.layer[0].attention), which also holds W_O.")
    else:
        return None
    (W_Q, W_K, W_V, W_O), (b_Q, b_K, b_V, b_O) = _linear_parts(*parts)
    norms = {}
    if hasattr(module, "q_norm") and hasattr(module, "k_norm"):
        norms = dict(q_norm=_numpy(module.q_norm.weight), k_norm=_numpy(module.k_norm.weight))
    return MHAWeights(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O, **norms)


def weights_from_torch(module) -> MHAWeights:
    """Copy the weights of a torch.nn.MultiheadAttention, or of an attention module from transformers (GPT-2, BERT,
    RoBERTa, DistilBERT, Llama, Mistral, Qwen2, Qwen3: see _transformers_weights), keeping their dtype."""
    import torch

    if not isinstance(module, torch.nn.MultiheadAttention):
        w = _transformers_weights(module)
        if w is None:
            raise ConfigError(f"{type(module).__name__} is not an attention module this tool can read: give a "
                              "torch.nn.MultiheadAttention or the attention of a GPT-2, BERT, RoBERTa, DistilBERT, "
                              "Llama, Mistral, Qwen2 or Qwen3 model from transformers.")
        return w
    _check_supported(module)
    W_Q, W_K, W_V = np.split(_numpy(module.in_proj_weight), 3)
    biases = {}
    if module.in_proj_bias is not None:
        b_Q, b_K, b_V = np.split(_numpy(module.in_proj_bias), 3)
        biases = dict(b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=_numpy(module.out_proj.bias))
    return MHAWeights(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=_numpy(module.out_proj.weight), **biases)


def weights_to_torch(w: MHAWeights, cfg: MHAConfig):
    """A torch.nn.MultiheadAttention(batch_first=True) holding exactly these weights."""
    import torch

    w.check(cfg)
    if cfg.kv_heads != cfg.n_heads:
        raise ConfigError("torch.nn.MultiheadAttention has no grouped-query heads: use n_kv_heads=None.")
    if cfg.rope_theta is not None:
        raise ConfigError("torch.nn.MultiheadAttention has no rotary positions: use rope_theta=None.")
    dtype = torch.tensor(w.W_Q[:0]).dtype
    module = torch.nn.MultiheadAttention(cfg.d_model, cfg.n_heads, bias=cfg.bias, batch_first=True, dtype=dtype)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.tensor(np.concatenate([w.W_Q, w.W_K, w.W_V])))
        module.out_proj.weight.copy_(torch.tensor(w.W_O))
        if cfg.bias:
            module.in_proj_bias.copy_(torch.tensor(np.concatenate([w.b_Q, w.b_K, w.b_V])))
            module.out_proj.bias.copy_(torch.tensor(w.b_O))
    return module.eval()
