"""``python -m focuscrawl``."""

from __future__ import annotations

import sys

from focuscrawl.cli import main

sys.exit(main())
