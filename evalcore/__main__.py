"""``python -m evalcore``: the command line (:mod:`evalcore.cli`)."""

import sys

from evalcore.cli import main

sys.exit(main())
