"""Every directive option is checked: a located warning that names what is valid, never a crash."""

from __future__ import annotations

import pytest

from .conftest import SiteMaker, warnings_of

PAGE = "Report\n======\n\n.. torchtrace:: {path}\n{options}"
SIMPLE = "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log"
RANKS = "@DATA@/shared/tlparse-inputs/inputs/multi_rank_logs"


@pytest.mark.parametrize(
    ("path", "options", "says"),
    [
        (SIMPLE, "   :sections: header, triee\n", "unknown sections triee; valid: header"),
        (SIMPLE, "   :section: header\n", "unknown option :section:; valid: name"),
        (SIMPLE, "   :ranks: one\n", "option :ranks: expected 'all' or a comma-separated"),
        (SIMPLE, "   :latest: yes\n", "option :latest:"),
        (RANKS, "   :ranks: 1, 7\n", ":ranks: 7 not in the trace (its ranks: 0, 1, 2, 3)"),
    ],
)
def test_a_bad_option_warns_at_the_directive(
    make_site: SiteMaker, path: str, options: str, says: str
) -> None:
    app = make_site("simple", "html", pages={"index.rst": PAGE.format(path=path, options=options)})
    warnings = warnings_of(app)
    assert says in warnings, warnings
    assert "index.rst:4" in warnings and "[torchtrace.option]" in warnings
    assert "Traceback" not in warnings and "Extension error" not in warnings


def test_a_missing_trace_names_the_resolved_path(make_site: SiteMaker) -> None:
    page = PAGE.format(path="/nope.log", options="")
    app = make_site("simple", "html", pages={"index.rst": page})
    warnings = warnings_of(app)
    assert f"{app.srcdir}/nope.log does not exist" in warnings
    assert "a leading / means the source folder" in warnings and "[torchtrace.read]" in warnings
