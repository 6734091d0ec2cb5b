"""Heads learn: train a tiny attention model on the CPU, watch its heads form, find the same heads in real models,
and test the claims about heads."""

import streamlit as st

from mha_app.run.view import view
from mha_app.sections import heads_learn

view()
st.title("Heads learn: watch attention heads form")
heads_learn.intro()
choice = heads_learn.controls()
run = heads_learn.training(choice)
if run is not None:
    heads_learn.show_run(run)
    heads_learn.real_heads(run)
heads_learn.claims(choice)
