"""Operators link into PyTorch's API reference through the project's intersphinx (a
``torch`` mapping), and stay plain code without one: never a warning, nitpicky or not."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from sphinx_torchtrace.site.api_names import api_target, graph_operators

from .conftest import SiteMaker, copy_testroot, warnings_of

PYTORCH = "https://pytorch.org/docs/stable/"


def test_operators_name_the_api_page_that_documents_them() -> None:
    assert api_target("torch.ops.aten.addmm.default") == "torch.addmm"
    assert api_target("aten.relu_") == "torch.relu"
    assert api_target("torch._C._nn.linear") == "torch.nn.functional.linear"
    assert api_target("torch.nn.functional.gelu") == "torch.nn.functional.gelu"
    assert api_target("aten._softmax") is None  # private: no page
    assert api_target("extern_kernels.mm") is None
    code = "    addmm = torch.ops.aten.addmm.default(a, b);  x = torch.relu(addmm)\n" * 3
    assert graph_operators(code) == ["torch.ops.aten.addmm.default", "torch.relu"]


def _inventory(path: Path) -> None:
    """A small objects.inv of PyTorch's docs (what intersphinx downloads from pytorch.org)."""
    entries = "".join(
        f"{name} py:function 1 generated/{name}.html#$ -\n"
        for name in ("torch.relu", "torch.addmm", "torch.nn.functional.gelu")
    )
    header = (
        "# Sphinx inventory version 2\n# Project: PyTorch\n# Version: 2.13\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    path.write_bytes(header.encode() + zlib.compress(entries.encode()))


def test_a_torch_intersphinx_mapping_links_the_operators(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    srcdir = copy_testroot("simple", tmp_path / "site")
    _inventory(srcdir / "torch.inv")
    app = make_site(
        "simple",
        srcdir=srcdir,
        warningiserror=True,
        confoverrides={
            "extensions": ["sphinx_torchtrace", "sphinx.ext.intersphinx"],
            "intersphinx_mapping": {"torch": (PYTORCH, str(srcdir / "torch.inv"))},
            "nitpicky": True,
        },
    )
    assert app.statuscode == 0 and warnings_of(app) == ""
    frame = (Path(app.outdir) / "torchtrace/simple/frame-0-0.html").read_text("utf-8")
    for name in ("torch.relu", "torch.addmm", "torch.nn.functional.gelu"):
        assert f'href="{PYTORCH}generated/{name}.html#{name}"' in frame, name
    # an operator PyTorch's inventory lacks is code, not a link
    assert re.search(
        r'<code class="xref py py-obj[^"]*"><span class="pre">'
        r"torch\.ops\.aten\.amax\.default</span></code>",
        frame,
    )
    assert f'href="{PYTORCH}generated/torch.amax' not in frame


def test_without_a_mapping_operators_are_plain_code_even_when_nitpicky(
    make_site: SiteMaker,
) -> None:
    app = make_site("simple", warningiserror=True, confoverrides={"nitpicky": True})
    assert app.statuscode == 0 and warnings_of(app) == ""
    frame = (Path(app.outdir) / "torchtrace/simple/frame-0-0.html").read_text("utf-8")
    assert '<span class="pre">torch.ops.aten.addmm.default</span></code>' in frame
    assert "pytorch.org" not in frame
