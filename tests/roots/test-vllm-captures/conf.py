project = "vllm-captures"
extensions = ["sphinx_torchtrace"]
exclude_patterns = ["_build"]
