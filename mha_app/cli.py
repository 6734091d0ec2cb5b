"""`mha-viz`: start the app, from a checkout or from an installed package (`pip install .`, then `mha-viz`).

Extra arguments go to `streamlit run`, e.g. `mha-viz --server.port 8600`.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent / "streamlit_app"  # app.py, pages/, config, README: copied by setup.py
CHECKOUT = Path(__file__).resolve().parents[1]                 # the repository, for an editable install


def app_dir() -> Path:
    """The folder that holds app.py and pages/ (and .streamlit/config.toml and the README beside them)."""
    for folder in (PACKAGED, CHECKOUT):
        if (folder / "app.py").is_file() and (folder / "pages").is_dir():
            return folder
    raise FileNotFoundError(f"app.py and pages/ are neither in {PACKAGED} nor in {CHECKOUT}: reinstall the package")


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli as streamlit_cli

    try:
        app = app_dir() / "app.py"
    except FileNotFoundError as err:
        sys.exit(f"mha-viz: {err}")
    sys.argv = ["streamlit", "run", str(app), *(sys.argv[1:] if argv is None else argv)]
    sys.exit(streamlit_cli.main())


if __name__ == "__main__":
    main()
