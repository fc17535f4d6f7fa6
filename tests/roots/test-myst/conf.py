project = "myst"
extensions = ["myst_parser", "sphinx_torchtrace"]
exclude_patterns = ["_build"]
