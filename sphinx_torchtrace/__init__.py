"""sphinx-torchtrace: PyTorch torch.compile trace logs as Sphinx documentation."""

__version__ = "0.1.0"
