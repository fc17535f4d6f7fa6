"""Generated torch programs with their ground truth, and an oracle that reads what we publish.

    python -m tests.programs [--programs 500] [--seed 0] [--workers 2] [--keep DIR]
    nox -s programs -- --programs 100            # a quick run
    python -m tests.programs --only 7 --keep /tmp/case   # program 7 again, kept

Each program (:mod:`.generator`) is composed of compile situations (:mod:`.grammar`): every
guard source, recompile limits with and without ``fullgraph``, ``error_on_recompile`` and
the ``fail_on_recompile`` stance, a backend that raises (raised, or run eagerly under
``suppress_errors``), errors of the program itself, graph breaks of several registry kinds,
declared, checked and unbacked dynamic sizes, ``torch._dynamo.reset()``.  It prints, per
call, what torch did from the program's side; the oracle (:mod:`.oracle`) runs it under
``TORCH_TRACE`` and compares that truth with ``summary --json``, the recompile table and
each frame page: a disagreement keeps the program and its trace as a regression case.
"""
