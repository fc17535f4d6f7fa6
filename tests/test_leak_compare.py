"""A comparison publishes no more than a trace's pages: ``torchtrace-diff`` and
``torchtrace-trend`` draw from the runs as the pages show them (each record masked as a
whole, by the masker of every run compared), on real logs with the leak campaign's shapes
planted where a comparison quotes them (metrics fields a table cuts, a function's name,
a graph named after an environment value whose guard is in the other run)."""

from __future__ import annotations

from pathlib import Path

from .conftest import DATA, SiteMaker, copy_testroot, write_page
from .test_leak_build import (
    AWS_PAIR,
    AWS_SECRET,
    ENV_VALUE,
    URL_PASSWORD,
    artifact,
    guard,
    key_body,
    left,
    private_key,
    web_token,
    with_metrics,
    with_records,
)

PAIR = DATA / "captured" / "pairs" / "recompile"
PAGE = """Runs
====

.. torchtrace-diff:: logs/baseline.log logs/new.log
   :name: cmp

.. torchtrace-trend:: logs/baseline.log logs/new.log
   :labels: before, after
"""


def _planted(log: Path, secrets: dict[str, str], records: list[str]) -> str:
    """A real run's log with ``secrets`` in every compilation_metrics record's fields (the
    same in both runs: the frames still match) and ``records`` after its first record."""
    text = log.read_text(encoding="utf-8")
    lines = []
    for line in text.split("\n"):
        if '{"compilation_metrics": ' in line:
            line = with_metrics(line, **secrets)
        lines.append(line)
    return with_records("\n".join(lines), records)


def test_diff_and_trend_pages_publish_no_planted_secret(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    key, jwt = private_key(7), web_token(7)
    secrets = {
        "co_name": f"step {jwt} " + AWS_PAIR,
        "fail_user_frame_filename": key,
        "fail_reason": f"https://deploy:{URL_PASSWORD}@db.internal/x",
    }
    graph = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        return (x,)"
    (baseline,) = (PAIR / "baseline").glob("*.log")
    (new,) = (PAIR / "new").glob("*.log")
    srcdir = copy_testroot("simple", tmp_path / "project")
    (srcdir / "logs").mkdir()
    (srcdir / "logs" / "baseline.log").write_text(
        _planted(baseline, secrets, [artifact("leak_note", guard("HF_TOKEN", ENV_VALUE))]),
        encoding="utf-8",
    )
    (srcdir / "logs" / "new.log").write_text(
        _planted(new, secrets, [artifact(f"arg {ENV_VALUE} g", graph)]), encoding="utf-8"
    )
    write_page(srcdir, "index.rst", PAGE)
    app = make_site("simple", "html", srcdir=srcdir)
    pages = [p.as_posix() for p in Path(app.outdir).rglob("*.html")]
    assert any("cmp" in p for p in pages), pages  # the comparison's pages were built
    for secret in (key_body(key), jwt, URL_PASSWORD, AWS_SECRET, ENV_VALUE):
        assert left(app, secret) == [], secret[:20]
