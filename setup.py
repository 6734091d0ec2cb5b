"""Ships the Streamlit app's own files inside the package, so an installed `mha-viz` finds them.

Everything else is in pyproject.toml. app.py, pages/, the app's Streamlit config and the README live at the top of
the repository (Streamlit finds pages next to app.py); a built wheel copies them into mha_app/streamlit_app/.
An editable install runs the checkout's own files instead (see mha_app.cli.app_dir).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
APP_FILES = ["app.py", "README.md", ".streamlit/config.toml", "assets/screenshot.png", *(
    str(p.relative_to(ROOT)) for p in sorted((ROOT / "pages").glob("*.py")))]


class BuildPyWithApp(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in APP_FILES:
            target = Path(self.build_lib) / "mha_app" / "streamlit_app" / name
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / name), str(target))


setup(cmdclass={"build_py": BuildPyWithApp})
