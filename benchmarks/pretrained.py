"""Time all-MiniLM-L6-v2 in mha_core.pretrained against transformers' BertModel, and measure its load and memory.

    python -m benchmarks.pretrained                 # load, memory, forward at 16 and 128 tokens
    python -m benchmarks.pretrained --rounds 30     # more rounds for steadier medians

Targets: load_minilm() <= 2 s in a fresh process; a forward pass (6 layers, every attention trace and hidden state
kept) <= 2x the reference on the same text; <= 200 MB resident memory added by load_minilm().

The reference is BertModel.from_pretrained(the same folder, attn_implementation="eager") called with
output_attentions=True and output_hidden_states=True under torch.no_grad(): like our run, it materialises every
layer's attention weights and hidden states. Both are timed from text (tokenising included) to all outputs.
Load time and memory come from fresh processes (median / largest of --fresh runs), so no cache flatters them;
the memory process imports numpy, tokenizers, safetensors and mha_core first, so only the model counts.

Timing is interleaved: rounds in a rotating order; in each, an implementation first runs untimed for --settle
seconds, then its calls are timed for --block seconds. The settle matters on small machines: NumPy's OpenBLAS
and torch's OpenMP each keep their worker threads spinning for a while after a call, and a call that starts while
the other library's threads still spin can run 2x slower, which would measure the contention, not the code.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_LOAD_S = 2.0
TARGET_RATIO = 2.0
TARGET_MEMORY_MB = 200.0
TOKEN_COUNTS = (16, 128)
# Words that are one word piece each, so that a text of n - 2 of them has exactly n tokens.
WORDS = "the keys that the man who lives next door lost yesterday are on the table and the cat sat on the mat".split()

# Run in a fresh interpreter: import time, load time and the resident memory load_minilm() adds.
FRESH_CODE = """
import json, re, time
def rss_mb():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmRSS:\\s+(\\d+) kB", f.read()).group(1)) / 1024
t0 = time.perf_counter()
import numpy, tokenizers, safetensors.numpy
import mha_core.pretrained as pretrained
t1 = time.perf_counter()
before = rss_mb()
t2 = time.perf_counter()
model = pretrained.load_minilm()
t3 = time.perf_counter()
after = rss_mb()
t4 = time.perf_counter()
model.run("The cat sat on the mat because it was tired.")
t5 = time.perf_counter()
model.run(" ".join(["word"] * 254))
print(json.dumps({"import_s": t1 - t0, "load_s": t3 - t2, "added_mb": after - before, "first_run_s": t5 - t4,
                  "after_256_mb": rss_mb() - before}))
"""


def fresh_process_stats(repeats: int) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = []
    for _ in range(repeats):
        result = subprocess.run([sys.executable, "-c", FRESH_CODE], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=300, check=True)
        out.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return out


def text_of(n_tokens: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_tokens - 2))


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds per size (default 12)")
    parser.add_argument("--settle", type=float, default=0.15, help="untimed seconds before each block (default 0.15)")
    parser.add_argument("--block", type=float, default=0.1, help="timed seconds per block, >= 1 call (default 0.1)")
    parser.add_argument("--fresh", type=int, default=3, help="fresh processes for load time and memory (default 3)")
    args = parser.parse_args(argv)

    fresh = fresh_process_stats(args.fresh)
    load_s = statistics.median(f["load_s"] for f in fresh)
    import_s = statistics.median(f["import_s"] for f in fresh)
    first_s = statistics.median(f["first_run_s"] for f in fresh)
    added_mb = max(f["added_mb"] for f in fresh)
    after_256 = max(f["after_256_mb"] for f in fresh)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    import torch

    t = time.perf_counter()
    import transformers
    from transformers import AutoTokenizer, BertModel  # transformers imports lazily: this is the real import

    transformers_import_s = time.perf_counter() - t
    transformers.utils.logging.disable_progress_bar()
    from mha_core.pretrained import load_minilm

    model = load_minilm()
    t = time.perf_counter()
    bert = BertModel.from_pretrained(model.model_dir, attn_implementation="eager", local_files_only=True).eval()
    bert_load_s = time.perf_counter() - t
    tokenizer = AutoTokenizer.from_pretrained(model.model_dir, local_files_only=True)

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("n/a",)
    print("all-MiniLM-L6-v2: mha_core.pretrained against transformers.BertModel (eager), float32, CPU")
    print(f"python {platform.python_version()} | numpy {np.__version__} | torch {torch.__version__} | "
          f"transformers {transformers.__version__} | {os.cpu_count()} logical CPUs | "
          f"torch threads {torch.get_num_threads()} | load average {' '.join(f'{v:.2f}' for v in load)}")
    print()
    print(f"fresh processes ({args.fresh}):  import mha_core.pretrained (+numpy, tokenizers) {import_s:.3f} s | "
          f"load_minilm() {load_s:.3f} s | first run() {first_s * 1e3:.1f} ms  (medians)")
    print(f"resident memory added by load_minilm(): {added_mb:.1f} MB (largest); after a 256-token run: "
          f"{after_256:.1f} MB")
    print(f"reference, for comparison: import transformers {transformers_import_s:.2f} s | "
          f"BertModel.from_pretrained {bert_load_s:.3f} s")
    print()

    def ours(text, backend):
        return lambda: model.run(text, backend=backend)

    def reference(text):
        def call():
            enc = tokenizer(text, return_tensors="pt")
            with torch.no_grad():
                return bert(**enc, output_attentions=True, output_hidden_states=True)
        return call

    print(f"forward, text -> all 6 layers' traces and hidden states; {args.rounds} interleaved rounds, "
          f"{args.settle:g} s settle + {args.block:g} s timed per block; medians")
    print(f"{'tokens':>6} | {'ours numpy':>10} | {'ours torch':>10} | {'reference':>10} | {'numpy/ref':>9} | "
          f"{'torch/ref':>9} | {'max|attn diff|':>14} | calls")
    ratios = {}
    for n in TOKEN_COUNTS:
        text = text_of(n)
        run = model.run(text)
        assert len(run.tokens) == n, (n, len(run.tokens))
        ref_out = reference(text)()
        diff = max(float(np.abs(run.layers[l].weights - ref_out.attentions[l][0].numpy()).max()) for l in range(6))
        fns = {"numpy": ours(text, "numpy"), "torch": ours(text, "torch"), "reference": reference(text)}
        times = measure(fns, args.rounds, args.settle, args.block)
        med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
        ratios[n] = med["numpy"] / med["reference"]
        calls = "/".join(str(len(times[name])) for name in fns)
        print(f"{n:>6} | {med['numpy']:>7.2f} ms | {med['torch']:>7.2f} ms | {med['reference']:>7.2f} ms | "
              f"{ratios[n]:>8.2f}x | {med['torch'] / med['reference']:>8.2f}x | {diff:>14.1e} | {calls}")
    print()

    verdicts = [(load_s <= TARGET_LOAD_S, f"load_minilm() {load_s:.3f} s <= {TARGET_LOAD_S:g} s"),
                (added_mb <= TARGET_MEMORY_MB, f"memory added {added_mb:.1f} MB <= {TARGET_MEMORY_MB:g} MB")]
    verdicts += [(r <= TARGET_RATIO, f"forward at {n} tokens (NumPy backend) {r:.2f}x the reference <= "
                                     f"{TARGET_RATIO:g}x") for n, r in ratios.items()]
    for ok, line in verdicts:
        print(f"{'PASS' if ok else 'MISS'}  {line}")
    return 0 if all(ok for ok, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
