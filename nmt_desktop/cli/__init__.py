"""The command line, one module per command (translate.py, info.py, ... gui.py), shared helpers in
common.py, the root parser and dispatch in main.py: the `nmt-desktop` script is `nmt_desktop.cli.main:main`.
Nothing lives here, so a command module importing `nmt_desktop.cli.common` never runs anything else."""
