"""``python -m evalcore``: the command line (:mod:`evalcore.cli`)."""

from evalcore.cli import run

run()
