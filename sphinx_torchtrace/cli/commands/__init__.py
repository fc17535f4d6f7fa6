"""The commands of ``sphinx-torchtrace``, one module each.

A module holds its one-line ``HELP``, its ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args)`` (the exit status); what commands share is in :mod:`..common`,
:mod:`..loading` and :mod:`..sharing`, since no command imports another.
"""
