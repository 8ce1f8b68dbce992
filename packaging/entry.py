"""The frozen app's entry point: the same dispatch as the `nmt-desktop` script.

No subcommand opens the desktop app; `nmt-desktop train ...` (how the Train tab starts its child
process when frozen, see nmt_desktop.core.locations.cli_command), `translate`, `--self-test` etc.
work exactly as from source.
"""

import multiprocessing
import sys

from nmt_desktop.cli.main import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a frozen child started by multiprocessing runs its task, not the app
    sys.exit(main())
