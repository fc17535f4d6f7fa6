"""The demo site: sphinx-torchtrace's showcase and its documentation."""

project = "sphinx-torchtrace"
author = "sphinx-torchtrace developers"
extensions = ["myst_parser", "sphinx_torchtrace"]
html_theme = "furo"
html_title = "sphinx-torchtrace demo"
exclude_patterns = ["_build"]
