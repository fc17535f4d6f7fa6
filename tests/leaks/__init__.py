"""Planted secrets through ``check``, ``redact``, ``bundle`` and a default build: none may survive.

    python -m tests.leaks [--canaries 50000] [--seed 0] [--kinds trace,text-log] [--workers 2]
    nox -s leaks -- --canaries 5000                  # a quick run
    python -m tests.leaks --only 7 --keep /tmp/case   # input 7 again, with its outputs

Beside the crash campaign (``benchmarks/generate_campaign.py``, inputs that must not break a
build), this one writes inputs that must not leak.  Each input is a real trace (a bundled
log of ``tests/data``, so it stays a log torch wrote and the reader reads) with canaries
planted in it: a canary is one secret of a known shape (:data:`SHAPES`: the token of each
major host, an AWS key id and a secret holding ``/`` and ``+``, a JSON Web Token, a PEM
private key, a URL's password, a value an environment guard compares, that value quoted
again, a random string, the user's name under every home root of Linux, macOS and Windows)
put in one place a log, a text log, a debug folder, a runtime profile or a capture can hold
text (:data:`PLACES`: envelope fields, payload lines, JSON strings, right after a JSON
escape or spelled with escapes, interned strings, file names, gzip members and headers,
a line longer than the reader's chunks with a canary across every cut).  Every canary
carries its own random secret, so a byte search finds it wherever it survives; the search
also looks through gzip and zip members, HTML tags and entities, JSON ``\\u`` escapes and
letter case.  The public part of a token (``ghp_``, ``hf_``, ``eyJ``), a PEM block's
markers and a URL's user name are not secret: :mod:`sphinx_torchtrace.trace.secrets`
keeps them.

The oracle, per input: ``check`` lists every canary at its line (what it finds in the
input minus what it finds in a *control* input, the same input with every canary made
harmless); ``redact`` leaves no canary in its output or console, its output reads as the
input did, ``check`` finds nothing more in it than in the control's, and redacting it again
changes no byte; ``bundle`` leaves none in the zip (member names, README, report, logs) or
console; ``sphinx-torchtrace build`` (the default build; a Sphinx project with
``torchtrace-capture`` for a capture) leaves none in any byte it writes or prints.  The
report counts canaries by shape, place and input kind, and survivors by output, with the
first canary of each class written out (text, file, line, where it survived): exit status
1 when anything survived.
"""
