"""``benchmarks/bench_repeats.py`` counts a block as a repeat when an earlier block showed
its text, however it is marked up, and names where each copy is."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_repeats import repeats  # noqa: E402

TEXT = "def forward(self, x):\n    return x &lt; 2\n" * 10  # 420 characters once decoded


def fold(title: str, body: str) -> str:
    return f"<details><summary>{title} (4.0 KiB)</summary><pre>{body}</pre></details>"


def test_a_repeat_is_the_same_text_under_any_markup_and_is_named_by_where_it_is(
    tmp_path: Path,
) -> None:
    marked_up = TEXT.replace("return", '<span class="k">return</span>')
    a = "<h2>Failure</h2>" + fold("The whole message", TEXT) + fold("reason#2", marked_up)
    b = fold("output_code", TEXT) + fold("short", "x = 1") + fold("other", TEXT + "!")
    (tmp_path / "a.html").write_text(a, encoding="utf-8")
    (tmp_path / "b.html").write_text(b, encoding="utf-8")
    kinds: Counter[tuple[str, str, str]] = Counter()
    total, repeated = repeats(tmp_path, 300, kinds)
    assert total == len(a.encode()) + len(b.encode())
    again = [f"<pre>{marked_up}</pre>", f"<pre>{TEXT}</pre>"]
    assert repeated == sum(len(x.encode()) for x in again)
    assert kinds == Counter(
        {
            ("The whole message", "reason", "same page"): len(again[0].encode()),
            ("The whole message", "output_code", "another page"): len(again[1].encode()),
        }
    )
