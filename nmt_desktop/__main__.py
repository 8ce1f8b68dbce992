"""Entry point for ``python -m nmt_desktop``."""

if __name__ == "__main__":
    from nmt_desktop.cli.main import main

    raise SystemExit(main())
