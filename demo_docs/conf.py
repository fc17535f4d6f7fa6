"""The demo site: sphinx-torchtrace's showcase and its documentation."""

import sys
from pathlib import Path

# _ext/cli_reference.py: the command line's reference, generated from its parser
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "sphinx-torchtrace"
author = "sphinx-torchtrace developers"
extensions = ["myst_parser", "sphinx_torchtrace", "cli_reference"]
html_theme = "furo"
html_title = "sphinx-torchtrace demo"
exclude_patterns = ["_build"]
