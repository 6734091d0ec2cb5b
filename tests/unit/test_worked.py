"""One attention weight worked by hand: against a computation written out here, and against the engine's own cell
to the last digit shown, in every mode (tiny, random, sentence, masks, grouped-query, trained model, both backends)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.special import softmax

import mha_core as mc
from mha_core.teaching.presets import TINY_CONFIG, tiny_example
from mha_core.teaching.worked import DECIMALS, agreed_decimals, fmt, latex_lines, same_to, work_cell


def _tiny():
    x, w = tiny_example()
    return mc.forward(x, w, TINY_CONFIG), TINY_CONFIG


def _random(causal=False, pad=0, kv=None, backend="numpy", scale=None, cross=False):
    cfg = mc.MHAConfig(32, 4, n_kv_heads=kv, causal=causal, scale=scale)
    x = mc.random_input(7, 32, seed=3)
    x_kv = mc.random_input(5, 32, seed=4) if cross else None
    mask = mc.padding_mask(5 if cross else 7, pad) if pad else None
    return mc.forward(x, mc.init_weights(cfg, seed=3), cfg, kv=x_kv, key_padding_mask=mask, backend=backend), cfg


def _sentence():
    cfg = mc.MHAConfig(64, 8)
    tokens = mc.tokenize("The cat sat on the mat because it was tired.")
    return mc.forward(mc.embed(tokens, 64, seed=0), mc.init_weights(cfg, seed=0), cfg), cfg


def _minilm():
    from mha_core.pretrained import load_minilm

    model = load_minilm()
    return model.run("The keys that the man lost are on the table.").layers[2], model.config


EXAMPLES = {"tiny": _tiny, "random": _random, "causal+pad": lambda: _random(causal=True, pad=2),
            "gqa": lambda: _random(kv=2), "sentence": _sentence, "torch": lambda: _random(backend="torch"),
            "cross, unscaled": lambda: _random(scale=1.0, cross=True, pad=1),
            "minilm": _minilm}


def test_tiny_cell_by_pencil_and_paper():
    # Head 2, query "I", key "tea": q = X[0, 2:4] = (1, 0); W_K swaps head 2's dimensions, so key j is
    # (X[j, 3], X[j, 2]): (0, 1) for I, (1, 0) for like and tea. The row's q·k_j = (0, 1, 1), scaled by 1/sqrt(2).
    tr, cfg = _tiny()
    cell = work_cell(tr, head=1, query=0, key=2, scale=cfg.softmax_scale)
    assert list(cell.q) == [1, 0] and list(cell.k) == [1, 0] and cell.dot == 1
    s = 1 / math.sqrt(2)
    e = [math.exp(v - s) for v in (0, s, s)]
    assert cell.score == pytest.approx(s, abs=1e-15)
    assert cell.weight == pytest.approx(e[2] / sum(e), abs=1e-15)
    assert latex_lines(cell) == [
        r"q_t \cdot k_s = \sum_{c=1}^{2} q_{t,c}\,k_{s,c} = 1 \times 1 + 0 \times 0 = 1",
        r"z_{ts} = \frac{q_t \cdot k_s}{\sqrt{d_k}} = \frac{1}{\sqrt{2}} = 0.7071",
        r"e^{z_{ts} - \max_{s'} z_{ts'}} = e^{0.7071 - 0.7071} = 1",
        r"\sum_{s'} e^{z_{ts'} - \max_{s''} z_{ts''}} = 0.4931 + 1 + 1 = 2.4931",
        r"\alpha_{ts} = \frac{1}{2.4931} = 0.4011",
    ]


@pytest.mark.parametrize("mode", EXAMPLES)
def test_every_cell_matches_a_softmax_written_out_here(mode):
    tr, cfg = EXAMPLES[mode]()
    h, n, m = tr.weights.shape
    group = h // tr.k.shape[0]
    for head in range(h):
        k = tr.k[head // group].astype(np.float64)
        for query in range(n):
            scores = k @ tr.q[head, query].astype(np.float64) * cfg.softmax_scale
            blocked = tr.mask[head, query] if tr.mask is not None else np.zeros(m, bool)
            expected = np.zeros(m) if blocked.all() else softmax(np.where(blocked, -np.inf, scores))
            for key in range(m):
                cell = work_cell(tr, head, query, key, cfg.softmax_scale)
                assert cell.weight == pytest.approx(expected[key], abs=1e-12)
                assert cell.score == pytest.approx(scores[key], abs=1e-12)


@pytest.mark.parametrize("mode", EXAMPLES)
def test_the_last_line_equals_the_engines_cell_to_the_last_digit_shown(mode):
    tr, cfg = EXAMPLES[mode]()
    h, n, m = tr.weights.shape
    fewer = 0
    for head in range(h):
        for query in range(n):
            for key in range(m):
                cell = work_cell(tr, head, query, key, cfg.softmax_scale)
                lines = latex_lines(cell)
                shown_score = re.search(r"= (\S+)$", lines[1]).group(1)
                assert shown_score == fmt(float(tr.scores[head, query, key]), cell.score_decimals)
                assert cell.score_decimals >= DECIMALS - 1 and cell.weight_decimals >= DECIMALS - 1
                if tr.mask is not None and tr.mask[head, query, key]:
                    assert "blocked" in lines[-1] and tr.weights[head, query, key] == 0
                else:
                    shown_weight = re.search(r"= (\S+)$", lines[-1]).group(1)
                    assert shown_weight == fmt(float(tr.weights[head, query, key]), cell.weight_decimals)
                fewer += min(cell.score_decimals, cell.weight_decimals) < DECIMALS
    if tr.q.dtype == np.float64:
        assert fewer == 0, "in float64 the engine and the hand computation agree to every decimal shown"
    assert fewer <= 0.02 * h * n * m, "a digit is dropped only where float32 rounding lands on a boundary"


def test_grouped_query_cell_reads_its_shared_kv_head():
    tr, cfg = _random(kv=2)
    cell = work_cell(tr, head=3, query=1, key=4, scale=cfg.softmax_scale)
    assert cell.kv_head == 1
    np.testing.assert_array_equal(cell.k, tr.k[1, 4].astype(np.float64))


def test_a_fully_blocked_row_gives_zero_weights_not_nan():
    cfg = mc.MHAConfig(8, 2)
    x = mc.random_input(3, 8)
    blocked = np.zeros((3, 3), bool)
    blocked[1] = True
    tr = mc.forward(x, mc.init_weights(cfg), cfg, attn_mask=blocked)
    cell = work_cell(tr, 0, 1, 2, cfg.softmax_scale)
    assert cell.weight == 0 and not np.isnan(cell.weights).any() and cell.row_max == 0
    assert "blocked" in latex_lines(cell)[-1]


def test_a_scale_other_than_one_over_sqrt_dk_is_written_as_such():
    tr, cfg = _tiny()
    cell = work_cell(tr, 0, 0, 0, scale=0.5, default_scale=False)
    assert r"\times \mathrm{scale}" in latex_lines(cell)[1] and cell.score == 0.5 * cell.dot


def test_long_sums_are_shortened_to_fit_a_line():
    tr, cfg = _sentence()
    line = latex_lines(work_cell(tr, 0, 0, 0, cfg.softmax_scale))[0]
    assert r"\dots" in line and line.count(r"\times") == 3 and line.startswith(r"\begin{aligned}")


@pytest.mark.parametrize("x, shown", [(1.0, "1"), (0.5, "0.5"), (-2.0, "-2"), (0.70710678, "0.7071"),
                                      (1.2e-7, "0.0000"), (-1e-9, "-0.0000"), (-np.inf, "−∞"), (-0.0, "0")])
def test_numbers_are_rounded_and_exact_ones_stay_short(x, shown):
    assert fmt(x) == shown


def test_agreed_decimals_drops_a_digit_only_where_the_numbers_round_apart():
    assert agreed_decimals(0.40115, 0.40115) == 4
    assert agreed_decimals(0.123449999, 0.123450001) == 3
    assert agreed_decimals(0.1, 0.9) == 4  # nothing agrees: keep the full precision, so the difference shows
    # 4.0000 by hand against the engine's float32 4.0 (a head planted with strength 4, its previous-token cell)
    # agree to the 4 decimals shown
    assert agreed_decimals(4.000000184031369, 4.0) == 4 and same_to(4.000000184031369, 4.0, 4)
