"""A sample of the leak campaign (``tests/leaks``; the whole of it: ``nox -s leaks``).

Canaries of every secret shape (tokens of the major hosts, AWS key ids and secrets, JSON Web
Tokens, PEM private keys, passwords in URLs, values of environment guards, the user's name
under every home root) planted in every place of every input kind (envelope fields, payload
lines, JSON strings with escapes, interned strings, file names, gzip members, a line longer
than the readers' chunks, text logs, debug folders, runtime profiles, captures): ``check``
lists each at its line, and none is left in ``redact``'s output, a bundle or a default
build, in any byte they write or print.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from .leaks.campaign import campaign, parse_args, print_report
from .leaks.oracle import OUTPUTS
from .leaks.places import KIND_PLACES, KINDS, P_LONG_PAYLOAD, TEXT_LONG
from .leaks.shapes import SHAPES

#: The sample: every kind but the long text log (the long trace log has the same cuts).
SAMPLE_KINDS = [k for k in KINDS if k != TEXT_LONG]


@pytest.mark.campaign
def test_a_sample_of_the_leak_campaign_leaves_no_canary() -> None:
    args = parse_args(
        [
            "--canaries",
            "1000",
            "--seed",
            "51",
            "--scale",
            "0.1",
            "--kinds",
            ",".join(SAMPLE_KINDS),
            "--quiet",
        ]
    )
    report = campaign(args)
    # the sample is what it says: every kind, shape and place, each input read and built
    assert report.errors == []
    assert {kind for kind, _, _ in report.planted} == set(SAMPLE_KINDS)
    assert {shape for _, _, shape in report.planted} == set(SHAPES)
    places = {place.split(" (")[0].removesuffix(" at a cut") for _, place, _ in report.planted}
    # one long log: its long line is a record line (the campaign's next round: a payload's)
    assert places == {p for k in SAMPLE_KINDS for p in KIND_PLACES[k]} - {P_LONG_PAYLOAD}
    assert report.canaries >= 1000
    assert {cmd for _, cmd, _ in report.status} == set(OUTPUTS)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_report(report, 0)
    survived = {(o, shape, place) for o, _, place, shape in report.survived}
    assert survived - KNOWN_GAPS == set(), text.getvalue()
    breaches = [b for b in report.breaches if not _known_breach(b)]
    assert breaches == [], text.getvalue()


def _known_breach(breach: str) -> bool:
    """A fault :data:`KNOWN_BREACHES` names."""
    return any(k in breach for k in KNOWN_BREACHES)


#: What the sample still finds, each class named (output, shape, place) so that nothing else
#: may survive; issue 51 stays open until this is empty (``nox -s leaks`` reports them all).
KNOWN_GAPS: set[tuple[str, str, str]] = set()
#: Faults of redact that are no leak, found by the campaign and not yet mended (redact is
#: idempotent, keeps every record readable and removes no more than the canaries hold).
KNOWN_BREACHES: tuple[str, ...] = ()


@pytest.mark.campaign
def test_a_one_line_private_key_at_a_text_logs_cut_is_found_and_masked() -> None:
    """The campaign's seed 3, input 23 (a text log line longer than the readers' pieces):
    a private key written on one line, its body parted by spaces, lay across the piece's
    cut; ``check`` missed it, ``redact`` left it, a second ``redact`` changed the line.
    The cut now moves before a key's first line whose end marker is past it."""
    report = campaign(parse_args(["--canaries", "50000", "--seed", "3", "--only", "23", "--quiet"]))
    assert report.errors == []
    assert {kind for kind, _, _ in report.planted} == {TEXT_LONG}
    assert not report.survived and not report.breaches
