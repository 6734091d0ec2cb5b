"""`mha-viz`: its own options in its help, and how its arguments become `streamlit run`'s (no server is started)."""

from __future__ import annotations

import pytest

from app_pages import app_pages
from mha_app import cli
from mha_app.state.settings import MODELS

APP = cli.app_dir() / "app.py"


def run(*argv: str) -> tuple[list[str], str | None]:
    return cli.streamlit_args(list(argv), APP)


def test_help_lists_the_apps_options_and_how_to_reach_streamlits(capsys):
    with pytest.raises(SystemExit) as done:
        run("--help")
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    for option in ("--address", "--port", "--page", "--model", "--streamlit-help"):
        assert option in text
    assert "any other argument is passed on to `streamlit run`" in text
    assert "--server.headless true" in text
    assert "attention" in text and "all-MiniLM-L6-v2" in text  # the choices are named


def test_the_pages_are_the_apps_url_paths_the_home_page_first():
    names = cli.pages(APP.parent)
    assert names[0] == "overview"
    assert sorted(names) == sorted(page.url_path or "overview" for page in app_pages())


def test_no_arguments_run_the_app_as_they_always_did():
    assert run() == (["run", str(APP)], None)
    assert run("--server.port", "8600") == (["run", str(APP), "--server.port", "8600"], None)
    assert run("--server.headless=true", "--theme.base", "dark") == (
        ["run", str(APP), "--server.headless=true", "--theme.base", "dark"], None)


def test_address_and_port_become_streamlits_options():
    args, url = run("--address", "127.0.0.1", "--port", "8600")
    assert args == ["run", str(APP), "--server.address", "127.0.0.1", "--server.port", "8600"]
    assert url is None  # no page or model named: the server's own address line says where to go


def test_page_and_model_give_the_address_to_open():
    args, url = run("--port", "8600", "--page", "attention", "--model", MODELS[1])
    assert args == ["run", str(APP), "--server.port", "8600"]
    assert url == f"http://localhost:8600/attention?model={MODELS[1]}"
    assert run("--page", "overview")[1] == "http://localhost:8501/"  # the home page is the root
    assert run("--address", "0.0.0.0", "--server.port=9000", "--model", "random")[1] == "http://localhost:9000/?model=random"
    assert run("--address", "10.0.0.5", "--page", "cost")[1] == "http://10.0.0.5:8501/cost"


def test_streamlit_help_asks_streamlit_run_for_its_own():
    assert run("--streamlit-help") == (["run", "--help"], None)


def test_no_abbreviation_of_the_apps_options_is_taken_from_streamlits():
    assert run("--mod", "x")[0] == ["run", str(APP), "--mod", "x"]


@pytest.mark.parametrize(("option", "value"), [("--page", "nowhere"), ("--model", "gpt-5")])
def test_an_unknown_page_or_model_is_refused_with_code_2(capsys, option, value):
    with pytest.raises(SystemExit) as done:
        run(option, value)
    assert done.value.code == 2
    error = capsys.readouterr().err
    assert f"argument {option}: invalid choice: '{value}'" in error
