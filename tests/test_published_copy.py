"""The published copy of a trace (``site/published.py``) shares what masking leaves as it is.

Pages are drawn from a masked copy of the model; copying every object made a 1,024-rank
build hold each rank's model twice (0.53 -> 1.15 GB since 26 November).  What masking does
not change is the model's own object; what it changes is a copy, and the model as read
keeps its text."""

from __future__ import annotations

from sphinx_torchtrace.site.published import published_trace
from sphinx_torchtrace.trace import load_trace

from .conftest import DATA

LOG = DATA / "shared" / "recompiles"


def test_unmasked_parts_are_shared_and_masked_parts_copied() -> None:
    trace = load_trace(LOG)
    [rank] = trace.ranks
    secret = rank.strings[min(rank.strings)]  # a file name the stacks hold
    shown = published_trace(trace, lambda text: text.replace(secret, "[masked]"), homes=False)
    [shown_rank] = shown.ranks
    # a string table entry that is the secret is masked in the copy, kept in the model
    assert shown_rank.strings[min(rank.strings)] == "[masked]"
    assert rank.strings[min(rank.strings)] == secret
    # what holds no masked text (and no payload, which is read through the mask) is the
    # model's own object, not a copy of it
    for name in ("stats", "pids", "torch_version", "export"):
        assert getattr(shown_rank, name) is getattr(rank, name), name
    assert rank.stats and rank.pids and rank.torch_version
    # what holds it is a copy: the stack trie names the file
    assert shown_rank.stack_trie is not rank.stack_trie
    # a published copy with nothing to mask still reads payloads through the mask
    same = published_trace(trace, lambda text: text, homes=False)
    assert same.ranks[0].stats is rank.stats
    assert same.ranks[0] is not rank


def test_the_copy_of_a_trace_that_is_masked_changes_nothing_in_the_model() -> None:
    trace = load_trace(LOG)
    before = repr(trace.ranks[0].compiles)
    published_trace(trace, lambda text: text.upper(), homes=True)
    assert repr(trace.ranks[0].compiles) == before
