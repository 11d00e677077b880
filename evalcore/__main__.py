"""``python -m evalcore``: the command line (:mod:`evalcore.cli`)."""

import sys

from .cli import main

sys.exit(main())
