"""`mha-viz`: start the app, from a checkout or from an installed package (`pip install .`, then `mha-viz`).

`mha-viz --help` lists the app's own options (address, port, the page and model to open); any other argument goes to
`streamlit run`, e.g. `mha-viz --server.port 8600`, and `mha-viz --streamlit-help` lists those.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent / "streamlit_app"  # app.py, pages/, config, README: copied by setup.py
CHECKOUT = Path(__file__).resolve().parents[1]                 # the repository, for an editable install
HOME = "overview"      # the default page, at the address's root
DEFAULT_PORT = "8501"  # Streamlit's


def app_dir() -> Path:
    """The folder that holds app.py and pages/ (and .streamlit/config.toml and the README beside them)."""
    for folder in (PACKAGED, CHECKOUT):
        if (folder / "app.py").is_file() and (folder / "pages").is_dir():
            return folder
    raise FileNotFoundError(f"app.py and pages/ are neither in {PACKAGED} nor in {CHECKOUT}: reinstall the package")


def pages(folder: Path) -> list[str]:
    """The pages' url paths: their files' names (app.py gives every page its file's name), the home page first."""
    names = sorted(path.stem for path in (folder / "pages").glob("*.py"))
    return sorted(names, key=lambda name: name != HOME)


def parser(page_names: list[str]) -> argparse.ArgumentParser:
    from mha_app.state.settings import MODELS

    p = argparse.ArgumentParser(
        prog="mha-viz", allow_abbrev=False,  # an option that is not exactly one of these is Streamlit's
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start the app: multi-head attention, step by step.",
        epilog="Streamlit's own options: any other argument is passed on to `streamlit run`, e.g.\n"
               "  mha-viz --server.headless true\n  mha-viz --server.port 8600\n"
               "`mha-viz --streamlit-help` lists them.")
    p.add_argument("--address", help="the address the server listens on (Streamlit's --server.address)")
    p.add_argument("--port", type=int, help=f"the port it listens on (Streamlit's --server.port; {DEFAULT_PORT} if "
                                            "not given)")
    p.add_argument("--page", choices=page_names, metavar="PAGE",
                   help="the page to open (Streamlit has no option for it: mha-viz prints the page's address); "
                        "one of " + ", ".join(page_names))
    p.add_argument("--model", choices=MODELS, metavar="MODEL",
                   help="the model to open it with (the address's ?model=); one of " + ", ".join(MODELS))
    p.add_argument("--streamlit-help", action="store_true", help="show the options of `streamlit run` and exit")
    return p


def _last(args: list[str], option: str) -> str | None:
    """The value the last `option VALUE` or `option=VALUE` in args gives (Streamlit takes the last), if any."""
    value = None
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(f"{option}="):
            value = arg.split("=", 1)[1]
    return value


def start_url(args: list[str], page: str | None, model: str | None) -> str:
    """The address to open for `page` and `model`, on the address and port that args give the server."""
    address = _last(args, "--server.address")
    host = "localhost" if address in (None, "", "0.0.0.0", "::") else address
    path = "" if page in (None, HOME) else page
    return f"http://{host}:{_last(args, '--server.port') or DEFAULT_PORT}/{path}" + (f"?model={model}" if model else "")


def streamlit_args(argv: list[str], app: Path) -> tuple[list[str], str | None]:
    """What follows `streamlit` for mha-viz's arguments argv (app: app.py), and the address to open when they name a
    page or a model (else None). Exits with argparse's message and code 2 on an unknown page or model."""
    known, rest = parser(pages(app.parent)).parse_known_args(argv)
    if known.streamlit_help:
        return ["run", "--help"], None
    ours = [*(["--server.address", known.address] if known.address is not None else []),
            *(["--server.port", str(known.port)] if known.port is not None else [])]
    args = ["run", str(app), *ours, *rest]
    url = start_url(args, known.page, known.model) if known.page or known.model else None
    return args, url


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli as streamlit_cli

    try:
        app = app_dir() / "app.py"
    except FileNotFoundError as err:
        sys.exit(f"mha-viz: {err}")
    args, url = streamlit_args(sys.argv[1:] if argv is None else argv, app)
    if url:
        print(f"mha-viz: open {url}", flush=True)
    sys.argv = ["streamlit", *args]
    sys.exit(streamlit_cli.main())


if __name__ == "__main__":
    main()
