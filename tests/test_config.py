"""Every configuration value is checked: a bad one is a located warning and its default."""

from __future__ import annotations

import pytest

from .conftest import SiteMaker, warnings_of


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("torchtrace_path_rewrites", {"(": "x"}, "rule '('"),
        ("torchtrace_path_rewrites", ["/home/"], "dict of"),
        ("torchtrace_sidebar_frames", -1, "0 or more"),
        ("torchtrace_generated_dir", "../out", "sub-folder"),
        ("torchtrace_capture", "sometimes", "must be one of 'auto', 'always', 'never'"),
        ("torchtrace_capture_timeout", 0, "seconds above 0"),
        ("torchtrace_capture_cache", "", "must be a folder"),
    ],
)
def test_a_bad_value_warns_and_the_build_goes_on(
    make_site: SiteMaker, name: str, value: object, says: str
) -> None:
    app = make_site("simple", "html", confoverrides={name: value})
    warnings = warnings_of(app)
    assert f"{name} = " in warnings and says in warnings and "torchtrace.config" in warnings
    assert "Extension error" not in warnings and "Traceback" not in warnings
    assert (app.outdir / "torchtrace" / "simple" / "index.html").exists()


def test_user_rewrites_come_before_the_defaults(make_site: SiteMaker) -> None:
    rules = {r"/home/user/project/": "<proj>/"}
    app = make_site("simple", "text", confoverrides={"torchtrace_path_rewrites": rules})
    page = (app.outdir / "torchtrace" / "simple" / "frame-0-0.txt").read_text("utf-8")
    assert "<proj>/simple.py" in page  # the user's rule
    assert "<site-packages>/torch" in page  # the defaults still apply
    off = make_site("simple", "text", confoverrides={"torchtrace_default_path_rewrites": False})
    page = (off.outdir / "torchtrace" / "simple" / "frame-0-0.txt").read_text("utf-8")
    assert "<site-packages>" not in page


def test_a_flag_of_the_wrong_type_in_conf_py_warns(make_site: SiteMaker) -> None:
    conf = 'project = "simple"\nextensions = ["sphinx_torchtrace"]\n'
    app = make_site(
        "simple", "html", pages={"conf.py": conf + 'torchtrace_default_path_rewrites = "yes"\n'}
    )
    assert "torchtrace_default_path_rewrites = 'yes' must be True or False" in warnings_of(app)
