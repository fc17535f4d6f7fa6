project = "autotuning"
extensions = ["sphinx_torchtrace"]
exclude_patterns = ["_build"]
