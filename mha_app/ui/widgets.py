"""Controls made from their settings' fields: label, help, bounds and choices come from settings.py, and every
value lives in the URL under its setting's name.

Numbers, texts and on/off settings are bound to the URL by Streamlit (bind="query-params"). A choice is shown by
its label but written to the URL as its key (stage=weights), and a tuple as one comma-separated parameter
(ablate=2,5); Streamlit's binding would write the label and a repeated parameter, so those two sync the URL here.
"""

from __future__ import annotations

import streamlit as st

from mha_app.state import url
from mha_app.state.settings import control, default, to_url

BIND = "query-params"


def number(container, name: str, lo=None, hi=None, start=None, **kw):
    """A number input over the field's bounds (or narrower ones that depend on other settings), starting at the
    field's default (or `start`, a default that depends on other settings)."""
    c = control(name)
    kw.setdefault("help", c.help)
    lo, hi = c.lo if lo is None else lo, c.hi if hi is None else hi
    start = default(name) if start is None else start
    return container.number_input(c.label, lo, hi, min(max(start, lo), hi), key=name, bind=BIND, **kw)


def checkbox(container, name: str, **kw) -> bool:
    c = control(name)
    kw.setdefault("help", c.help)
    return container.checkbox(c.label, default(name), key=name, bind=BIND, **kw)


def slider(container, name: str, **kw):
    c = control(name)
    kw.setdefault("help", c.help)
    return container.slider(c.label, c.lo, c.hi, default(name), key=name, bind=BIND, **kw)


def text(container, name: str, label: str | None = None, **kw) -> str:
    c = control(name)
    kw.setdefault("help", c.help)
    return container.text_area(label or c.label, value=default(name), max_chars=c.max_chars, key=name, bind=BIND,
                               **kw)


def select(container, name: str, options: list, **kw):
    """A selectbox over options that depend on other settings (h's divisors, a model's layers); a remembered value
    that is no longer one resets."""
    c = control(name)
    kw.setdefault("help", c.help)
    if name in st.session_state and st.session_state[name] not in options:
        st.session_state[name] = options[0]
    return container.selectbox(c.label, options, key=name, bind=BIND, **kw)


def _start(name: str, options: list):
    """The widget's value before it is drawn: its last one, else the link's (already checked), else the default;
    one that is no longer an option (other settings changed) becomes the default, or the first option."""
    if name not in st.session_state and name in st.query_params:
        st.session_state[name] = url.parse(name, st.query_params[name])
    if st.session_state.get(name) not in options:
        st.session_state[name] = default(name) if default(name) in options else options[0]


def _sync(name: str, value) -> None:
    """The URL follows the value: its key, or nothing for the default."""
    if value == default(name) or value == ():
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != to_url(value):
        st.query_params[name] = to_url(value)


def follow(name: str, value) -> None:
    """The URL follows a setting that no widget of this module holds (the open tab, mha_app.ui.layout.setting_tabs)."""
    _sync(name, value)


def current(name: str, options: list | None = None):
    """A choice's value before its widget is drawn (its last one, else the link's, else the default), for a control
    drawn above it whose words depend on it."""
    _start(name, list(control(name).choices if options is None else options))
    return st.session_state[name]


def choice(container, name: str, widget: str = "selectbox", options=None, labels: dict | None = None, **kw):
    """A choice among the field's keys (or `options`), shown by their labels (or by `labels`, where these depend on
    other settings); widget: selectbox, radio or segmented_control."""
    c = control(name)
    options = list(c.choices if options is None else options)
    _start(name, options)
    kw.setdefault("help", c.help)
    if widget == "segmented_control":
        kw.setdefault("required", True)
    shown = c.label_of if not labels else lambda key: labels.get(key, c.label_of(key))
    value = getattr(container, widget)(c.label, options, key=name, format_func=shown, **kw)
    _sync(name, value)
    return value


def multiselect(container, name: str, options: list, **kw) -> tuple:
    """A multiselect for a tuple setting (e.g. ablate); values no longer among the options (h changed) are dropped."""
    c = control(name)
    kw.setdefault("help", c.help)
    if name not in st.session_state:  # the first run: the link's value (already checked by check_link)
        st.session_state[name] = list(url.parse(name, st.query_params[name]) or ()) if name in st.query_params \
            else list(default(name))
    st.session_state[name] = [v for v in st.session_state[name] if v in options]
    value = tuple(sorted(container.multiselect(c.label, options, key=name, **kw)))
    _sync(name, value)
    return value
