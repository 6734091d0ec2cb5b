"""The footer under the sidebar: the app's version, from the installed package's metadata, and its README."""

from __future__ import annotations

import functools
import re
from importlib.metadata import PackageNotFoundError, version

import streamlit as st

from mha_app.cli import app_dir

PACKAGE = "mha-visualiser"
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


@functools.cache  # the installed package's metadata: read once per process, not on every rerun
def app_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


@st.dialog("README", width="large")
def _readme() -> None:
    """The README beside app.py (shipped with the package too), with its pictures from the same folder."""
    folder = app_dir()
    text = (folder / "README.md").read_text(encoding="utf-8")
    parts = _IMAGE.split(text)  # text, alt, path, text, alt, path, ..., text
    for i in range(0, len(parts), 3):
        st.markdown(parts[i])
        if i + 2 < len(parts):
            st.image(str(folder / parts[i + 2]), caption=parts[i + 1] or None)


def footer() -> None:
    sb = st.sidebar
    sb.divider()
    left, right = sb.columns([3, 2], vertical_alignment="center")
    left.caption(f"MHA Visualiser {app_version()}")
    if right.button("README", key="readme", type="tertiary", icon=":material/description:",
                    help="How to install, run, test and deploy the app"):
        _readme()
