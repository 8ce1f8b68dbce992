"""The local translation server (`nmt-desktop serve`, issue 43): the project's models behind LibreTranslate's
and OPUS-CAT MT Engine's HTTP APIs, so that Weblate, Subtitle Edit, OmegaT, Trados, memoQ and browsers use
them as they are. Starlette routes on uvicorn; one decode thread per model batches segments from every
client (batcher.py). It imports the core, never the GUI or the CLI (pyproject.toml's import contracts)."""
