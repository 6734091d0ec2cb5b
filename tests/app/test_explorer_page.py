"""The attention page through AppTest: the explorer receives the example on view, once per example, and the view the
settings (and so the link) hold."""

from __future__ import annotations

import numpy as np

from helpers import load_pretrained
from mha_app.components.explorer.payload import read_payload
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
    saves = [b.proto for b in at.get("download_button") if "web page" in b.proto.label]
    assert len(saves) == 1 and saves[0].deferred_file_id, "the page file is made only when asked for"


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


def test_a_trained_models_layers_that_do_not_fit_go_in_carriers_the_layer_on_view_first():
    from mha_core.pretrained import load_minilm

    load_pretrained(load_minilm)
    text = " ".join(["the cat sat on the mat because it was tired and the dog slept"] * 10)  # about 140 tokens
    at = run_app({"model": "all-MiniLM-L6-v2", "text": text, "layer": "3"}, "pages/attention.py")
    assert not at.exception, [e.value for e in at.exception]

    def carriers(at) -> list[bytes]:
        return [e.proto.bytes for e in at.get("bidi_component") if e.proto.component_name == "mha_app.attention_layer"]

    header, arrays, view = explorer(at)
    run = at.session_state["view"][1].run
    sent = carriers(at)
    assert header["layers"] == [] and view["layer"] == 3 and header["layer_count"] == 6
    assert [read_payload(blob)[0]["layer"] for blob in sent] == [3, 2, 4, 1, 5, 6], "on view first, then the nearest"
    assert header["carried"] == {str(i): read_payload(blob)[0]["id"] for i, blob in enumerate(sorted(
        sent, key=lambda blob: read_payload(blob)[0]["layer"]), start=1)}
    for layer in (1, 3, 6):  # the engine's run, each layer in its own carrier
        np.testing.assert_array_equal(arrays[f"{layer}/weights"], run.layers[layer - 1].weights)
        np.testing.assert_array_equal(arrays[f"{layer}/raw"], run.layers[layer - 1].raw_scores())
    at.selectbox(key="layer").set_value(5).run()
    assert explorer(at)[0]["id"] == header["id"] and explorer(at)[2]["layer"] == 5, "another layer: the same frame"
    assert sorted(carriers(at)) == sorted(sent), "and the same carriers: the browser is sent references"
    assert read_payload(carriers(at)[0])[0]["layer"] == 5
