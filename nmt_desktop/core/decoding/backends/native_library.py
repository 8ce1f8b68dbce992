"""Build and load the compiled library of the compiled backend (backends/compiled.py): the decoding step
(native/decode_step.cpp with one_query.h and prepared_ops.h; run by compiled_step.py), the encoder over packed
sources (native/encode_sources.cpp; compiled_encoder.py) and the search kernels (native/search_ops.cpp: token
choice and cache reorder).

The library is compiled against the installed torch with the system's C++ compiler (`g++`, or
`$CXX`) by `python -m nmt_desktop.core.decoding.backends.native_library`, which `.ci/setup.sh` runs. Its file name
carries a hash of the sources and the torch version, so a changed source or another torch is never
loaded by mistake; it is written next to the source (editable installs, the packaged app) or, where
that folder is read-only, to the user's cache folder. Without a library, or with
`NMT_DESKTOP_NATIVE=0`, decoding uses the Python backend: the same float32 results, slower on
small models.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs
import torch

__all__ = ["build", "library_path", "load", "native_enabled"]

NATIVE = Path(__file__).with_name("native")
SOURCE = NATIVE / "decode_step.cpp"  # the decoding step; search_ops.cpp adds the searches' kernels
SOURCES = [SOURCE, NATIVE / "search_ops.cpp", NATIVE / "encode_sources.cpp"]
FILES = [*SOURCES, NATIVE / "one_query.h", NATIVE / "prepared_ops.h"]  # everything the library is built from: its hash
_loaded: bool | None = None


def native_enabled() -> bool:
    """False when `NMT_DESKTOP_NATIVE=0` asks for the Python fused step."""
    return os.environ.get("NMT_DESKTOP_NATIVE", "1").strip() not in ("0", "false", "no", "off")


def _library_name() -> str:
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in FILES)).hexdigest()[:12]
    return f"decode_step-{digest}-torch{torch.__version__}.so"


def _folders() -> list[Path]:
    return [SOURCE.parent, Path(platformdirs.user_cache_dir("nmt-desktop")) / "native"]


def library_path() -> Path | None:
    """The built library for this source and torch, or None."""
    if not all(path.is_file() for path in FILES):
        return None
    name = _library_name()
    return next((folder / name for folder in _folders() if (folder / name).is_file()), None)


def load() -> bool:
    """Load the library once per process; True when `torch.classes.nmt_desktop.DecodeStep` exists."""
    global _loaded
    if _loaded is None:
        path = library_path() if native_enabled() and sys.platform.startswith("linux") else None
        try:
            if path is not None:
                torch.ops.load_library(str(path))
            _loaded = path is not None
        except (OSError, RuntimeError) as exc:  # e.g. built against another libtorch, or a clashing copy
            print(f"nmt-desktop: not using the compiled decoding step {path}: {exc}", file=sys.stderr)
            _loaded = False
    return _loaded


def _compile_command(out: Path) -> list[str]:
    from torch.utils.cpp_extension import include_paths, library_paths

    compiler = os.environ.get("CXX") or "g++"
    abi = int(torch.compiled_with_cxx11_abi())
    lib = library_paths()[0]
    return [compiler, "-O3", "-fopenmp-simd", "-std=c++17", "-shared", "-fPIC",
            f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            *[f"-I{p}" for p in include_paths()], *map(str, SOURCES), "-o", str(out),
            f"-L{lib}", "-ltorch", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{lib}"]


def build(folder: Path | None = None, force: bool = False) -> Path:
    """Compile the library into `folder` (default: next to the source if writable, else the user cache).

    Returns its path; raises RuntimeError with one line (and the compiler's output) when it fails.
    """
    if not sys.platform.startswith("linux"):
        raise RuntimeError("the compiled decoding step is built on Linux only; the Python step is used elsewhere")
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        raise RuntimeError(f"no C++ compiler: {compiler!r} is not on PATH (Debian: apt-get install g++)")
    if folder is None:
        folder = next((f for f in _folders() if os.access(f if f.exists() else f.parent, os.W_OK)), _folders()[-1])
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / _library_name()
    if out.is_file() and not force:
        return out
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        partial = Path(tmp) / out.name
        result = subprocess.run(_compile_command(partial), capture_output=True, text=True)
        if result.returncode != 0:
            names = " and ".join(path.name for path in SOURCES)
            raise RuntimeError(f"compiling {names} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
        os.replace(partial, out)
    for old in folder.glob("decode_step-*.so"):  # libraries of earlier sources or torch versions
        if old != out:
            old.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nmt_desktop.core.decoding.backends.native_library",
                                     description="Build the compiled decoding step for the installed torch.")
    parser.add_argument("--out", type=Path, default=None, help="folder for the library (default: next to the source)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the library exists")
    args = parser.parse_args(argv)
    try:
        path = build(args.out, args.force)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
