"""The attention page through AppTest: the explorer receives the example on view, once per example, and the view the
settings (and so the link) hold."""

from __future__ import annotations

import numpy as np

from helpers import load_pretrained
from screen import explorer, run_app


def test_the_attention_page_sends_the_explorer_its_example_and_the_links_view():
    at = run_app({"causal": "true", "head": "3", "query": "4", "stage": "raw scores"}, "pages/attention.py")
    assert not at.exception, [e.value for e in at.exception]
    settings, example = at.session_state["view"]
    header, arrays, view = explorer(at)
    assert view == {"layer": 1, "head": 3, "query": 4, "stage": "raw"}
    assert header["tokens"] == example.tokens and header["heads"] == example.cfg.n_heads == 8
    np.testing.assert_array_equal(arrays["1/weights"], example.trace.weights)
    np.testing.assert_array_equal(arrays["1/mask"][0], np.triu(np.ones((example.n, example.n)), 1))


def test_a_rerun_sends_the_same_payload_and_another_example_another():
    at = run_app(page="pages/attention.py")
    first = explorer(at)[0]["id"]
    at.run()
    assert explorer(at)[0]["id"] == first, "the same bytes: the browser is sent a reference to its copy"
    at.selectbox(key="h").set_value(4).run()
    header, _, _ = explorer(at)
    assert header["id"] != first and header["heads"] == 4


def test_a_trained_model_sends_every_layer_that_fits():
    from mha_core.pretrained import load_minilm

    load_pretrained(load_minilm)
    at = run_app({"model": "all-MiniLM-L6-v2", "layer": "2"}, "pages/attention.py")
    assert not at.exception, [e.value for e in at.exception]
    header, arrays, view = explorer(at)
    run = at.session_state["view"][1].run
    assert header["layers"] == [1, 2, 3, 4, 5, 6] and view["layer"] == 2
    for layer in (1, 6):
        np.testing.assert_array_equal(arrays[f"{layer}/weights"], run.layers[layer - 1].weights)
    at.selectbox(key="layer").set_value(5).run()
    assert explorer(at)[0]["id"] == header["id"] and explorer(at)[2]["layer"] == 5, "another layer: the same data"
