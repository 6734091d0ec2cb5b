"""Time the pretrained models in mha_core.pretrained against transformers, and measure their load time and memory.

    python -m benchmarks.pretrained                    # both models: load, memory, forward at 16 and 128 tokens
    python -m benchmarks.pretrained --model smollm2    # one of them (minilm or smollm2)
    python -m benchmarks.pretrained --rounds 30        # more rounds for steadier medians

Targets: all-MiniLM-L6-v2 loads in <= 2 s in a fresh process and adds <= 200 MB of resident memory; SmolLM2-135M
loads in <= 5 s and adds <= 300 MB; a forward pass (every layer's attention trace and hidden state kept) takes
<= 2x the reference on the same text, for both.

SmolLM2 holds its layers in their 4-bit blocks and widens each to float32 as a run reaches it. The other
layout, every layer held in float32, is measured beside it in the same run ("f32 held": the same model with each
layer widened once at load and held, each matrix C-contiguous (out_features, in_features); in fresh
processes too) with the target: a forward pass <= 1.10x that. The widened weights are gguf's numbers bit for bit;
the hidden states differ from the f32-held run's in the last bits only, because the widened matrices are held in
W^T's order (blocks.py) and OpenBLAS sums some rows of x @ W^T in another order then: the largest difference,
relative to each hidden state's largest value, is printed.

The references are transformers' own models with eager attention, called with output_attentions=True and
output_hidden_states=True under torch.no_grad(): like our run, they materialise every layer's attention weights and
hidden states. MiniLM's is BertModel.from_pretrained(the same folder); SmolLM2's is
AutoModelForCausalLM.from_pretrained(the same GGUF file), called with logits_to_keep=1 because our run, too, only
predicts the token after the text. Both sides are timed from text (tokenising included) to all outputs.
Load time and memory come from fresh processes (median / largest of --fresh runs), so no cache flatters them;
the memory process imports numpy, tokenizers, the weight readers and mha_core first, so only the model counts.

Timing is interleaved: rounds in a rotating order; in each, an implementation first runs untimed for --settle
seconds, then its calls are timed for --block seconds. The settle matters on small machines: NumPy's OpenBLAS
and torch's OpenMP each keep their worker threads spinning for a while after a call, and a call that starts while
the other library's threads still spin can run 2x slower, which would measure the contention, not the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.0
TARGET_WIDENING = 1.10  # SmolLM2's forward, 4-bit held and widened per layer, against float32 held
TOKEN_COUNTS = (16, 128)
# Words that are one token each (a word piece for MiniLM, " word" for SmolLM2), so that texts have exact lengths.
WORDS = "the keys that the man who lives next door lost yesterday are on the table and the cat sat on the mat".split()

# Run in a fresh interpreter: import time, load time and the resident memory the loader adds.
FRESH_CODE = """
import dataclasses, json, re, time
def rss_mb():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmRSS:\\s+(\\d+) kB", f.read()).group(1)) / 1024
t0 = time.perf_counter()
import numpy, tokenizers, {readers}
import mha_core.pretrained as pretrained
t1 = time.perf_counter()
before = rss_mb()
t2 = time.perf_counter()
model = pretrained.{loader}()
if {f32_held}:  # every layer widened to float32 once and held; the 4-bit layers let go
    model = dataclasses.replace(model, layer_weights=tuple(w.widened() for w in model.layer_weights))
    pretrained.{loader}.cache_clear()
t3 = time.perf_counter()
after = rss_mb()
t4 = time.perf_counter()
model.run("The cat sat on the mat because it was tired.")
t5 = time.perf_counter()
model.run(" ".join(["word"] * (model.max_tokens - {specials})))
print(json.dumps({{"import_s": t1 - t0, "load_s": t3 - t2, "added_mb": after - before, "first_run_s": t5 - t4,
                  "after_max_mb": rss_mb() - before}}))
"""


@dataclass(frozen=True)
class Bench:
    """One model: how to load it, how the reference is built and called, and its targets."""

    title: str
    loader: str            # the function in mha_core.pretrained
    readers: str           # what reads the weight files (imported before the memory is measured)
    specials: int          # special tokens the tokenizer adds to a text
    target_load_s: float
    target_memory_mb: float
    reference: str         # the reference, for the report
    packed: bool = False   # layers held in 4-bit blocks, widened per layer: also measured held in float32

    def text_of(self, n_tokens: int) -> str:
        return " ".join(WORDS[i % len(WORDS)] for i in range(n_tokens - self.specials))


BENCHES = {
    "minilm": Bench("all-MiniLM-L6-v2", "load_minilm", "safetensors.numpy", 2, 2.0, 200.0,
                    "transformers.BertModel (eager)"),
    "smollm2": Bench("SmolLM2-135M-Instruct (Q4_1 GGUF, layers held in 4-bit blocks, computed in float32)",
                     "load_smollm2", "gguf", 0, 5.0, 300.0,
                     "transformers AutoModelForCausalLM from the same GGUF (eager)", packed=True),
}


def fresh_process_stats(bench: Bench, repeats: int, f32_held: bool = False) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    code = FRESH_CODE.format(readers=bench.readers, loader=bench.loader, specials=bench.specials, f32_held=f32_held)
    out = []
    for _ in range(repeats):
        result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=300, check=True)
        out.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return out


def measure(fns: dict, rounds: int, settle: float, block: float) -> dict[str, list[float]]:
    """Interleaved timings in seconds, per implementation (see the module docstring)."""
    names = list(fns)
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            fn = fns[name]
            start = time.perf_counter()
            fn()
            while time.perf_counter() - start < settle:
                fn()
            start = time.perf_counter()
            while True:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
                if time.perf_counter() - start >= block:
                    break
    return times


def float32_held(model):
    """The model with every layer widened once and held in float32, each matrix C-contiguous
    (out_features, in_features) as gguf's dequantize gives it (a run of the 4-bit model widens into W^T's order)."""
    import numpy as np

    from mha_core.attention.weights import MHAWeights
    from mha_core.pretrained.smollm2 import SmolLM2Weights

    def held(layer):
        w, c = layer.widened(), np.ascontiguousarray
        return SmolLM2Weights(attention=MHAWeights(**{k: c(a) for k, a in w.attention.arrays().items()}),
                              attn_norm=w.attn_norm, ffn_norm=w.ffn_norm, W_gate=c(w.W_gate), W_up=c(w.W_up),
                              W_down=c(w.W_down))

    return dataclasses.replace(model, layer_weights=tuple(held(layer) for layer in model.layer_weights))


def load_reference(name: str, model):
    """(load seconds, call(text) -> outputs with .attentions) for the model's transformers reference."""
    import torch
    import transformers

    t = time.perf_counter()
    if name == "minilm":
        ref = transformers.BertModel.from_pretrained(model.model_dir, attn_implementation="eager",
                                                     local_files_only=True).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(model.model_dir, local_files_only=True)
        extra = {}
    else:
        path = Path(model.path)
        ref = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                                attn_implementation="eager").eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        extra = {"logits_to_keep": 1}
    load_s = time.perf_counter() - t

    def call(text):
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            return ref(**enc, output_attentions=True, output_hidden_states=True, **extra)

    return load_s, call


def run_bench(name: str, args) -> list[tuple[bool, str]]:
    """Print one model's figures; return its (target met, line) verdicts."""
    import numpy as np

    import mha_core.pretrained as pretrained

    bench = BENCHES[name]
    fresh = fresh_process_stats(bench, args.fresh)
    load_s = statistics.median(f["load_s"] for f in fresh)
    import_s = statistics.median(f["import_s"] for f in fresh)
    first_s = statistics.median(f["first_run_s"] for f in fresh)
    added_mb = max(f["added_mb"] for f in fresh)
    after_max = max(f["after_max_mb"] for f in fresh)

    model = getattr(pretrained, bench.loader)()
    ref_load_s, reference = load_reference(name, model)
    # The float32-held layout, for comparison in this run: the same layers, each widened once and held in float32.
    held = float32_held(model) if bench.packed else None

    print(f"{bench.title}: mha_core.pretrained against {bench.reference}, float32, CPU")
    print(f"fresh processes ({args.fresh}):  import mha_core.pretrained (+numpy, tokenizers, {bench.readers}) "
          f"{import_s:.3f} s | {bench.loader}() {load_s:.3f} s | first run() {first_s * 1e3:.1f} ms  (medians)")
    print(f"resident memory added by {bench.loader}(): {added_mb:.1f} MB (largest); after a {model.max_tokens}-token "
          f"run: {after_max:.1f} MB")
    if held is not None:
        before = fresh_process_stats(bench, args.fresh, f32_held=True)
        before_mb = max(f["added_mb"] for f in before)
        print(f"  the same with every layer held in float32: {before_mb:.1f} MB, after a "
              f"{model.max_tokens}-token run: {max(f['after_max_mb'] for f in before):.1f} MB; the layers now hold "
              f"{sum(w.nbytes for w in model.layer_weights) / 2**20:.1f} MB")
    print(f"reference, for comparison: loading it {ref_load_s:.3f} s")
    print(f"forward, text -> all {model.n_layers} layers' traces and hidden states; {args.rounds} interleaved rounds, "
          f"{args.settle:g} s settle + {args.block:g} s timed per block; medians")
    fns_of = {"numpy": lambda t: model.run(t), "torch": lambda t: model.run(t, backend="torch"),
              "reference": lambda t: reference(t)}
    if held is not None:
        fns_of |= {"numpy f32 held": lambda t: held.run(t), "torch f32 held": lambda t: held.run(t, backend="torch")}
        print(f"{'tokens':>6} | {'ours numpy':>10} | {'f32 held':>10} | {'ours torch':>10} | {'f32 held':>10} | "
              f"{'reference':>10} | {'numpy/ref':>9} | {'widening':>15} | {'max|attn diff|':>14} | calls")
    else:
        print(f"{'tokens':>6} | {'ours numpy':>10} | {'ours torch':>10} | {'reference':>10} | {'numpy/ref':>9} | "
              f"{'torch/ref':>9} | {'max|attn diff|':>14} | calls")
    ratios, widening, drift = {}, {}, {}
    for n in TOKEN_COUNTS:
        text = bench.text_of(n)
        run = model.run(text)
        assert len(run.tokens) == n, (n, len(run.tokens))
        ref_out = reference(text)
        diff = max(float(np.abs(run.layers[l].weights - ref_out.attentions[l][0].numpy()).max())
                   for l in range(model.n_layers))
        if held is not None:  # the same weights, summed in another order by some of OpenBLAS's kernels
            before = held.run(text)
            drift[n] = max(float(np.abs(a - b).max() / np.abs(b).max())
                           for a, b in zip(run.hidden_states, before.hidden_states, strict=True))
        fns = {key: (lambda f=f, t=text: f(t)) for key, f in fns_of.items()}
        times = measure(fns, args.rounds, args.settle, args.block)
        med = {key: statistics.median(ts) * 1e3 for key, ts in times.items()}
        ratios[n] = med["numpy"] / med["reference"]
        calls = "/".join(str(len(times[key])) for key in fns)
        if held is not None:
            widening[n] = (med["numpy"] / med["numpy f32 held"], med["torch"] / med["torch f32 held"])
            print(f"{n:>6} | {med['numpy']:>7.2f} ms | {med['numpy f32 held']:>7.2f} ms | {med['torch']:>7.2f} ms | "
                  f"{med['torch f32 held']:>7.2f} ms | {med['reference']:>7.2f} ms | {ratios[n]:>8.2f}x | "
                  f"{widening[n][0]:>5.2f}x / {widening[n][1]:.2f}x | {diff:>14.1e} | {calls}")
        else:
            print(f"{n:>6} | {med['numpy']:>7.2f} ms | {med['torch']:>7.2f} ms | {med['reference']:>7.2f} ms | "
                  f"{ratios[n]:>8.2f}x | {med['torch'] / med['reference']:>8.2f}x | {diff:>14.1e} | {calls}")
    if held is not None:
        print("widening = ours / f32 held, numpy / torch; hidden states against f32 held, largest difference relative "
              f"to each one's largest value (NumPy): {', '.join(f'{d:.1e} at {n}' for n, d in drift.items())}")
    print()
    verdicts = [(load_s <= bench.target_load_s, f"{bench.loader}() {load_s:.3f} s <= {bench.target_load_s:g} s"),
                (added_mb <= bench.target_memory_mb,
                 f"{bench.loader}(): memory added {added_mb:.1f} MB <= {bench.target_memory_mb:g} MB")]
    verdicts += [(r <= TARGET_RATIO, f"{bench.title.split(' ')[0]} forward at {n} tokens (NumPy backend) {r:.2f}x "
                                     f"the reference <= {TARGET_RATIO:g}x") for n, r in ratios.items()]
    verdicts += [(r <= TARGET_WIDENING, f"{bench.title.split(' ')[0]} forward at {n} tokens ({backend} backend) "
                                        f"{r:.2f}x the float32-held layers <= {TARGET_WIDENING:g}x")
                 for n, pair in widening.items() for backend, r in zip(("NumPy", "torch"), pair, strict=True)]
    return verdicts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=[*BENCHES, "all"], default="all", help="which model (default all)")
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds per size (default 12)")
    parser.add_argument("--settle", type=float, default=0.15, help="untimed seconds before each block (default 0.15)")
    parser.add_argument("--block", type=float, default=0.1, help="timed seconds per block, >= 1 call (default 0.1)")
    parser.add_argument("--fresh", type=int, default=3, help="fresh processes for load time and memory (default 3)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # each line as it comes: a run takes minutes on a busy machine

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    import torch

    t = time.perf_counter()
    import transformers
    from transformers import AutoTokenizer, BertModel  # noqa: F401  transformers imports lazily: the real import

    transformers_import_s = time.perf_counter() - t
    transformers.utils.logging.disable_progress_bar()
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("n/a",)
    print(f"python {platform.python_version()} | numpy {np.__version__} | torch {torch.__version__} | "
          f"transformers {transformers.__version__} | {os.cpu_count()} logical CPUs | "
          f"torch threads {torch.get_num_threads()} | load average {' '.join(f'{v:.2f}' for v in load)} | "
          f"import transformers {transformers_import_s:.2f} s")
    print()
    verdicts = []
    for name in BENCHES if args.model == "all" else [args.model]:
        verdicts += run_bench(name, args)
    for ok, line in verdicts:
        print(f"{'PASS' if ok else 'MISS'}  {line}")
    return 0 if all(ok for ok, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
