"""How the extension finds traces in a project's sources, and where it writes their pages.

Pages are generated before Sphinx reads anything, from a scan of the sources:
the scan must find what the directive will run on and nothing else (a page that
shows the directive as an example is common), and the folder it writes must
never be one the user owns.
"""

from __future__ import annotations

from pathlib import Path

from .conftest import SiteMaker, generated_pages, inventory

SIMPLE = "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log"
COMP_METRICS = "@DATA@/shared/tlparse-inputs/inputs/comp_metrics.log"

RST_WITH_EXAMPLES = f"""Examples
========

Use it like this:

.. code-block:: rst

   .. torchtrace:: traces/my_run.log

or, in a literal block::

   .. torchtrace:: traces/other_run.log

And for real:

.. torchtrace:: {SIMPLE}
   :name: simple
"""

MYST_WITH_EXAMPLES = f"""# Examples

````markdown
```{{torchtrace}} traces/my_run.log
```
````

```{{code-block}} rst
.. torchtrace:: traces/other.log
```

```{{eval-rst}}
.. torchtrace:: {COMP_METRICS}
   :name: metrics
```

:::{{note}}
```{{torchtrace}} {SIMPLE}
---
name: simple
---
```
:::
"""


def test_examples_in_literal_blocks_are_not_traces(make_site: SiteMaker) -> None:
    app = make_site("simple", "text", pages={"index.rst": RST_WITH_EXAMPLES})
    assert app.warning.getvalue() == ""
    assert {p.split("/")[1] for p in generated_pages(app)} == {"simple"}


def test_myst_fences_and_yaml_options(make_site: SiteMaker) -> None:
    app = make_site("myst", "html", pages={"index.md": MYST_WITH_EXAMPLES})
    assert app.warning.getvalue() == ""
    assert {p.split("/")[1] for p in generated_pages(app)} == {"simple", "metrics"}
    assert {"simple/[0/0]", "metrics/[2/0]"} <= set(inventory(app)["frame"])


def test_one_trace_on_two_pages_is_one_set_of_pages(make_site: SiteMaker) -> None:
    page = f"{{title}}\n=====\n\n.. torchtrace:: {SIMPLE}\n   :name: simple\n"
    app = make_site(
        "simple",
        "html",
        pages={
            "index.rst": page.format(title="One") + "\n.. toctree::\n\n   sub/two\n",
            "sub/two.rst": page.format(title="Two"),
        },
    )
    assert app.warning.getvalue() == ""
    assert {p.split("/")[1] for p in generated_pages(app)} == {"simple"}
    two = (Path(app.outdir) / "sub" / "two.html").read_text(encoding="utf-8")
    assert 'href="../torchtrace/simple/index.html"' in two


def test_missing_log_on_two_pages_warns_twice_and_builds(make_site: SiteMaker) -> None:
    page = "{title}\n=====\n\n.. torchtrace:: /nowhere/run.log\n"
    app = make_site(
        "simple",
        "text",
        pages={
            "index.rst": page.format(title="One") + "\n.. toctree::\n\n   two\n",
            "two.rst": page.format(title="Two"),
        },
    )
    lines = app.warning.getvalue().strip().splitlines()
    assert len(lines) == 2
    assert "index.rst:4" in lines[0] and "two.rst:4" in lines[1]
    assert all("run.log" in line and "[torchtrace.read]" in line for line in lines)


def test_two_traces_with_one_label_warn_at_the_directive(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "text",
        pages={
            "index.rst": f"Two\n===\n\n.. torchtrace:: {SIMPLE}\n   :name: run\n\n"
            f".. torchtrace:: {COMP_METRICS}\n   :name: run\n",
        },
    )
    lines = app.warning.getvalue().strip().splitlines()
    assert len(lines) == 1
    assert "index.rst:7" in lines[0] and "[torchtrace.label]" in lines[0]
    assert "'run'" in lines[0]


def test_generated_dir_can_be_nested(make_site: SiteMaker) -> None:
    app = make_site("simple", confoverrides={"torchtrace_generated_dir": "reports/traces"})
    assert app.warning.getvalue() == ""
    srcdir = Path(app.srcdir)
    assert (srcdir / "reports" / "traces" / "simple" / "frame-0-0.rst").is_file()
    assert not (srcdir / "reports" / "reports").exists()
    assert not (srcdir / "torchtrace").exists()
    assert inventory(app)["frame"]["simple/[0/0]"].startswith("reports/traces/simple/")


def test_generated_dir_never_the_sources_themselves(make_site: SiteMaker) -> None:
    for value in ("", ".", "../elsewhere"):
        app = make_site("simple", "html", confoverrides={"torchtrace_generated_dir": value})
        srcdir = Path(app.srcdir)
        assert (srcdir / "conf.py").is_file() and (srcdir / "index.rst").is_file()
        warnings = app.warning.getvalue()
        assert "[torchtrace.config]" in warnings
        # the fallback folder is the one every part of the extension uses: its graph
        # and kernel pages are still known orphans
        assert "toctree" not in warnings
        assert (srcdir / "torchtrace" / "simple" / "index.rst").is_file()
        assert not (srcdir.parent / "elsewhere").exists()


def test_removing_the_directive_removes_the_pages(make_site: SiteMaker) -> None:
    first = make_site("simple", "text")
    srcdir = Path(first.srcdir)
    assert generated_pages(first)
    (srcdir / "index.rst").write_text("No trace\n========\n", encoding="utf-8")
    second = make_site("simple", "text", srcdir=srcdir, freshenv=False)
    assert second.warning.getvalue() == ""
    assert generated_pages(second) == []
    assert not any(d.startswith("torchtrace/") for d in second.env.all_docs)


def test_ambiguous_short_name_warns_and_links_the_first(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        pages={
            "index.rst": f"Two\n===\n\n.. torchtrace:: {SIMPLE}\n   :name: simple\n\n"
            f".. torchtrace:: {COMP_METRICS}\n   :name: metrics\n\n"
            "Which one: :torchtrace:frame:`[0/0]`? This one: :torchtrace:frame:`[2/0]`.\n",
        },
    )
    lines = app.warning.getvalue().strip().splitlines()
    assert len(lines) == 1
    assert "index.rst:10" in lines[0] and "[torchtrace.ambiguous]" in lines[0]
    assert "metrics/[0/0], simple/[0/0]" in lines[0]
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert 'href="torchtrace/metrics/frame-0-0.html#' in html
    assert 'href="torchtrace/metrics/frame-2-0.html#' in html


def test_logs_claiming_one_rank_get_pages_of_their_own(make_site: SiteMaker) -> None:
    # the three logs of this job (copies) all say rank 0 in their records: their file names'
    # ranks are used, and the two that disagree say so
    app = make_site(
        "simple",
        confoverrides={"suppress_warnings": ["torchtrace.md5"]},  # a damaged payload in it
        pages={
            "index.rst": "Schedule\n========\n\n.. torchtrace:: "
            "@DATA@/shared/tlparse-inputs/inputs/multi_rank_schedule\n   :name: sched\n"
        },
    )
    said = app.warning.getvalue().strip().splitlines()
    assert len(said) == 2 and all("[torchtrace.rank]" in line for line in said), said
    assert "its file name says rank 1" in said[0] and "its file name says rank 2" in said[1]
    frames = set(inventory(app)["frame"])
    assert {"sched/rank0/[0/0]", "sched/rank1/[0/0]", "sched/rank2/[0/0]"} <= frames
    html = (Path(app.outdir) / "torchtrace" / "sched" / "index.html").read_text(encoding="utf-8")
    assert ">rank1/[0/0]<" in html
