"""The server tests share one `nmt-desktop serve` process on the bundled en-de and en-fr models (a child
process on 127.0.0.1, killed at the end of the session); tests that need other flags start their own."""

from __future__ import annotations

from typing import Iterator

import pytest

from server_process import ServerProcess, start_server


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    process = start_server("--file-ttl", "2", "--max-list", "64")
    try:
        yield process
    finally:
        process.kill()


@pytest.fixture()
def client(server: ServerProcess):
    with server.client() as c:
        yield c
