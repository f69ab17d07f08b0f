"""`python -m tinyattn ...` is the same as the `tinyattn` command."""

import sys

from tinyattn.cli import main

sys.exit(main())
