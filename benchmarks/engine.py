"""Time the full-trace forward of both mha_core backends against torch.nn.MultiheadAttention.

    python -m benchmarks.engine                 # all four sizes, about 80-90 s
    python -m benchmarks.engine --repeats 30    # a fixed number of rounds at every size
    python -m benchmarks.engine --sizes small   # only (16, 64, 8): a smoke run of a few seconds
    python -m benchmarks.engine --profile       # then time each step of the NumPy path

The reference is nn.MultiheadAttention (batch_first, batch of one) holding the same weights (via
mc.weights_to_torch), called with need_weights=True, average_attn_weights=False under torch.inference_mode:
like our trace, it has to materialise the per-head attention weights. All three run float32 on the CPU.

Measurements are interleaved: every round gives each implementation one block, in an order that rotates
from round to round, so that load changes and drift hit all three alike. A block starts with --settle
seconds of untimed calls, because numpy (OpenBLAS threads) and torch (OpenMP threads) leave their worker
threads spinning after a call, and on a machine with few cores the first call after a switch from the
other library's pool runs up to twice as slow (pass --settle 0 to see it). The table gives medians and a
noise column; the last lines check the targets (torch backend <= 1.2x, NumPy backend <= 1.5x of the
reference at the three larger sizes).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import platform
import statistics
import sys
import time

import numpy as np

# Importing mha_core turns on torch's huge-page allocator (as in the app); this benchmark imports torch first, so it
# sets the same variable itself, and the reference gets the same allocator: both sides are timed alike.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
import torch  # noqa: E402

import mha_core as mc
from mha_core.attention import engine as mc_engine

# (n tokens, d_model, heads)
SIZES = [(16, 64, 8), (128, 512, 8), (512, 768, 12), (1024, 1024, 16)]
TARGETS = {"torch": 1.2, "numpy": 1.5}  # at most this many times the reference's median, at the sizes below
TARGET_SIZES = SIZES[1:]
IMPLS = ("reference", "torch", "numpy")


def header() -> str:
    lines = [
        f"python {platform.python_version()} | numpy {np.__version__} | torch {torch.__version__} | "
        f"{platform.machine()} {os.cpu_count()} logical CPUs",
        f"torch.get_num_threads() = {torch.get_num_threads()}, "
        f"torch.get_num_interop_threads() = {torch.get_num_interop_threads()}",
    ]
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            lines.append(
                f"threadpool: {info.get('user_api')}/{info.get('internal_api')} {info.get('version') or ''} "
                f"num_threads={info.get('num_threads')} arch={info.get('architecture', '-')} "
                f"({os.path.basename(info.get('filepath', ''))})"
            )
    except ImportError:
        blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
        lines.append(f"numpy BLAS: {blas.get('name')} {blas.get('version')} (threadpoolctl not installed)")
    env = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    lines.append(f"thread env: {env or 'none set'}; load average at start: {load_average()}")
    return "\n".join(lines)


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def make_case(n: int, d_model: int, h: int, seed: int = 0):
    """Config, float32 weights (random nonzero biases), the matching torch module, and the input."""
    cfg = mc.MHAConfig(d_model, h)
    w = mc.init_weights(cfg, seed=seed, dtype=np.float32)
    rng = np.random.default_rng(seed + 1)
    w = dataclasses.replace(w, **{k: rng.uniform(-0.1, 0.1, getattr(w, k).shape).astype(np.float32)
                                  for k in ("b_Q", "b_K", "b_V", "b_O")})
    module = mc.weights_to_torch(w, cfg)
    x = mc.random_input(n, d_model, seed=seed, dtype=np.float32)
    return cfg, w, module, x


def reference_path(module, x) -> str:
    """Which implementation nn.MultiheadAttention dispatches to for this call (it has a fused fast path)."""
    original = getattr(torch, "_native_multi_head_attention", None)
    if original is None:
        return "Python path (F.multi_head_attention_forward)"
    used = []

    def spy(*args, **kwargs):
        used.append(True)
        return original(*args, **kwargs)

    X = torch.from_numpy(x)[None]
    torch._native_multi_head_attention = spy
    try:
        with torch.inference_mode():
            module(X, X, X, need_weights=True, average_attn_weights=False)
    finally:
        torch._native_multi_head_attention = original
    if used:
        return "fused fast path (torch._native_multi_head_attention)"
    return "Python path (F.multi_head_attention_forward)"


def runners(cfg, w, module, x):
    def reference():
        with torch.inference_mode():
            X = torch.from_numpy(x)[None]
            out, weights = module(X, X, X, need_weights=True, average_attn_weights=False)
        return out, weights

    def torch_backend():
        return mc.forward(x, w, cfg, backend="torch", device="cpu")

    def numpy_backend():
        return mc.forward(x, w, cfg, backend="numpy")

    return {"reference": reference, "torch": torch_backend, "numpy": numpy_backend}


def check_agreement(fns) -> float:
    """Max abs difference of outputs and weights between each backend and the reference (sanity, not timing)."""
    out, weights = fns["reference"]()
    worst = 0.0
    for name in ("torch", "numpy"):
        t = fns[name]()
        worst = max(worst, float(np.abs(t.output - out[0].numpy()).max()),
                    float(np.abs(t.weights - weights[0].numpy()).max()))
    return worst


def measure(fns, rounds: int | None, warmup: int, budget_s: float, settle_s: float, block_s: float):
    """Interleaved timings in seconds: {impl: [seconds per call]}, and the number of rounds run.

    Each round gives every implementation one block, in an order that rotates from round to round. A block
    first runs the implementation untimed for settle_s (at least once): numpy's OpenBLAS and torch's OpenMP
    keep their worker threads spinning for a while after a call, and on a machine with few cores the first
    call after a switch between the two pools pays for that. Then it times as many calls as fit in block_s
    (at least one). With rounds=None, rounds run until budget_s has passed (5 to 100 of them).
    """
    per_call = {name: [] for name in IMPLS}
    for _ in range(max(warmup, 2)):
        for name in IMPLS:
            t0 = time.perf_counter()
            fns[name]()
            per_call[name].append(time.perf_counter() - t0)
    calls = {name: int(min(100, max(1, block_s / min(per_call[name])))) for name in IMPLS}
    min_rounds, max_rounds = (5, 100) if rounds is None else (rounds, rounds)
    times = {name: [] for name in IMPLS}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    started, done = time.perf_counter(), 0
    try:
        while done < max_rounds and (done < min_rounds or time.perf_counter() - started < budget_s):
            for name in IMPLS[done % 3:] + IMPLS[:done % 3]:
                fn = fns[name]
                settle_until = time.perf_counter() + settle_s
                fn()
                while time.perf_counter() < settle_until:
                    fn()
                for _ in range(calls[name]):
                    t0 = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t0)
            gc.collect()
            done += 1
    finally:
        if gc_was_enabled:
            gc.enable()
    rounds = done
    return times, rounds


class Stopwatch:
    """Collects the time of named steps: `with sw("step"): ...`; medians() gives the median of each."""

    def __init__(self):
        self.times: dict[str, list[float]] = {}
        self._name, self._t0 = "", 0.0

    def __call__(self, name: str) -> Stopwatch:
        self._name = name
        return self

    def __enter__(self):
        self._t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.times.setdefault(self._name, []).append(time.perf_counter() - self._t0)

    def medians(self) -> list[tuple[str, float]]:
        return [(name, statistics.median(ts)) for name, ts in self.times.items()]


def profile_numpy(cfg, w, x, repeats: int) -> list[tuple[str, float]]:
    """Median time of each step of the NumPy path, done the same way as mha_core.attention.engine.attention_steps."""
    h, n = cfg.n_heads, x.shape[0]
    sw = Stopwatch()
    for _ in range(repeats):
        with sw("input checks (isfinite, astype)"):
            np.isfinite(x).all()
            x.astype(np.float32, copy=False)
        with sw("Q projection (x @ W_Q.T + b)"):
            q = mc_engine.split_heads(mc_engine.linear(x, w.W_Q, w.b_Q), h)
        with sw("K projection"):
            k = mc_engine.split_heads(mc_engine.linear(x, w.W_K, w.b_K), h)
        with sw("V projection"):
            v = mc_engine.split_heads(mc_engine.linear(x, w.W_V, w.b_V), h)
        with sw("q * scale"):
            qs = q * q.dtype.type(cfg.softmax_scale)
        with sw("scores = q @ k^T (batched)"):
            scores = qs @ k.transpose(0, 2, 1)
        with sw("softmax_rows"):
            weights = mc_engine.softmax_rows(scores)
        with sw("heads = weights @ v (batched)"):
            heads = weights @ v
        with sw("concat (transpose + copy)"):
            concat = heads.transpose(1, 0, 2).reshape(n, -1)
        with sw("output projection"):
            mc_engine.linear(concat, w.W_O, w.b_O)
        with sw("blocked_rows zeros"):
            np.zeros((h, n), dtype=bool)
    return sw.medians()


def profile_softmax(scores: np.ndarray, repeats: int) -> list[tuple[str, float]]:
    """Where softmax_rows spends its time, pass by pass, plus a fused torch softmax on the same array."""
    sw = Stopwatch()
    st = torch.from_numpy(scores)
    for _ in range(repeats):
        with sw("  max over rows"):
            row_max = scores.max(axis=-1, keepdims=True)
        with sw("  subtract"):
            e = np.subtract(scores, row_max)
        with sw("  exp (in place)"):
            np.exp(e, out=e)
        with sw("  sum over rows"):
            total = e.sum(axis=-1, keepdims=True)
        with sw("  divide (in place)"):
            np.divide(e, total, out=e)
        with sw("  [torch.softmax, same array]"):
            torch.softmax(st, dim=-1)
    return sw.medians()


def iqr(values) -> float:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[2] - q[0]


def fmt_size(size) -> str:
    n, d, h = size
    return f"n={n}, d={d}, h={h}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help="rounds per size; each round times a block of calls of every implementation "
                             "(default: as many rounds as fit --budget, 5..100)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds per size before timing (default 3)")
    parser.add_argument("--sizes", choices=["all", "small", "large"], default="all",
                        help="all four sizes, only the smallest, or only the three the targets apply to")
    parser.add_argument("--budget", type=float, default=18.0,
                        help="seconds of rounds per size when --repeats is not given (default 18)")
    parser.add_argument("--settle", type=float, default=0.1,
                        help="untimed seconds an implementation runs at the start of each block (default 0.1; "
                             "0 = one untimed call only)")
    parser.add_argument("--block", type=float, default=0.05,
                        help="timed seconds per block, at least one call (default 0.05; 0 = one call)")
    parser.add_argument("--threads", type=int, default=None,
                        help="limit torch (set_num_threads) and numpy's BLAS (threadpoolctl) to this many threads; "
                             "1 makes the comparison robust on a machine that other work keeps busy")
    parser.add_argument("--profile", action="store_true", help="also time each step of the NumPy path")
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
        try:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=args.threads)
        except ImportError:
            print("threadpoolctl is not installed: numpy's BLAS threads stay as they are", file=sys.stderr)
    sizes = {"all": SIZES, "small": SIZES[:1], "large": SIZES[1:]}[args.sizes]

    print(header())
    print("reference = torch.nn.MultiheadAttention(batch_first=True), need_weights=True, "
          "average_attn_weights=False, inference_mode; float32, CPU")
    cfg0, _, module0, x0 = make_case(*sizes[0])
    print(f"nn.MultiheadAttention runs its {reference_path(module0, x0)}")
    print(f"interleaved rounds (rotating order); per block: {args.settle:g} s untimed settle, then "
          f"{args.block:g} s of timed calls; medians over all timed calls")
    print()

    started = time.perf_counter()
    rows = []
    for size in sizes:
        cfg, w, module, x = make_case(*size)
        fns = runners(cfg, w, module, x)
        diff = check_agreement(fns)
        times, rounds = measure(fns, args.repeats, args.warmup, args.budget, args.settle, args.block)
        med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
        spread = max(iqr(ts) / statistics.median(ts) for ts in times.values())
        rows.append((size, med, rounds, spread))
        calls = " / ".join(str(len(times[name])) for name in IMPLS)
        print(f"  measured {fmt_size(size):<24} {rounds:>3} rounds, timed calls ref/torch/numpy {calls}, "
              f"max |diff| vs reference {diff:.1e}", flush=True)

    print()
    head = (f"{'size (n, d_model, h)':<26}{'rounds':>7}{'reference ms':>14}{'torch ms':>11}{'numpy ms':>11}"
            f"{'torch/ref':>11}{'numpy/ref':>11}{'IQR/med':>9}")
    print(head)
    print("-" * len(head))
    for size, med, rounds, spread in rows:
        ref = med["reference"]
        print(f"{fmt_size(size):<26}{rounds:>7}{ref:>14.3f}{med['torch']:>11.3f}{med['numpy']:>11.3f}"
              f"{med['torch'] / ref:>10.2f}x{med['numpy'] / ref:>10.2f}x{100 * spread:>8.0f}%")
    print("(IQR/med: the largest interquartile range of the three, relative to its median: the run's noise)")
    print()

    all_pass = True
    judged = [(size, med) for size, med, _, _ in rows if size in TARGET_SIZES]
    for size, med in judged:
        verdicts = []
        for name, limit in TARGETS.items():
            ratio = med[name] / med["reference"]
            ok = ratio <= limit
            all_pass &= ok
            verdicts.append(f"{name} {ratio:.2f}x <= {limit}x: {'PASS' if ok else 'MISS'}")
        print(f"{fmt_size(size):<26}" + " | ".join(verdicts))
    if judged:
        print(f"TARGETS (torch <= {TARGETS['torch']}x, numpy <= {TARGETS['numpy']}x of the reference at the "
              f"three larger sizes): {'PASS' if all_pass else 'MISS'}")
    else:
        print("TARGETS: not judged (they apply to the three larger sizes only)")
    print(f"total {time.perf_counter() - started:.1f} s; load average at end: {load_average()} "
          f"(this benchmark keeps about {torch.get_num_threads()} cores busy)")
    noisy = [fmt_size(size) for size, _, _, spread in rows if spread > 0.25]
    if noisy:
        print(f"WARNING: noisy timings at {'; '.join(noisy)} (IQR above 25% of the median): something else is "
              f"probably using the CPUs; rerun on an idle machine before trusting the verdicts.")

    if args.profile:
        for size in sizes:
            cfg, w, _, x = make_case(*size)
            reps = 5 if size[0] >= 512 else 20
            print()
            print(f"NumPy path, step by step, {fmt_size(size)} (median of {reps}):")
            steps = profile_numpy(cfg, w, x, reps)
            total = sum(t for _, t in steps)
            for name, t in steps:
                print(f"  {name:<36}{t * 1e3:>9.3f} ms {100 * t / total:>5.1f}%")
            print(f"  {'sum':<36}{total * 1e3:>9.3f} ms")
            scores = (mc.forward(x, w, cfg).scores).copy()
            for name, t in profile_softmax(scores, reps):
                print(f"  {name:<36}{t * 1e3:>9.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
