"""Write THIRD_PARTY_NOTICES.txt for a built one-folder app, from what the folder actually holds.

    python packaging/notices.py dist/nmt-desktop            # writes dist/nmt-desktop/THIRD_PARTY_NOTICES.txt

Run with the build venv's Python (packaging/build.sh does, after PyInstaller): the Python distributions are
those of this interpreter's site-packages (importlib.metadata) whose files are in the bundle, either as files
under _internal/ or as modules in the executable's PYZ archive, so a trimmed or added dependency changes the
notices without anyone editing a list. Shared libraries no distribution claims (PyInstaller copies them from
the system: libpython's helpers, libssl, libffi, ...) are mapped to their Debian package with `dpkg -S` and
its /usr/share/doc/<package>/copyright is included. Model folders bring their data licence from card.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import subprocess
import sys
import sysconfig
import textwrap
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
NOTICES_NAME = "THIRD_PARTY_NOTICES.txt"
SEE_BELOW = "see the licence text below"
# licences that allow a pointer instead of their text (CC BY: "a copy of, or the URI for, this licence")
LICENSE_URLS = {"CC-BY 2.0 FR": "https://creativecommons.org/licenses/by/2.0/fr/",
                "CC-BY 4.0": "https://creativecommons.org/licenses/by/4.0/"}
_LICENSE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|COPYRIGHT|AUTHORS)", re.IGNORECASE)
_SO = re.compile(r"\.so(\.\d+)*$")
OPUS_MT_NOTE = ("Models downloaded with `nmt-desktop pull` or Models > Get models... are not part of this app: "
                "the OPUS-MT models on the Hugging Face Hub (Helsinki-NLP/opus-mt-*) are published by the "
                "Language Technology Research Group at the University of Helsinki (Helsinki-NLP) under the "
                "Creative Commons Attribution 4.0 International licence (CC-BY 4.0, "
                "https://creativecommons.org/licenses/by/4.0/); each model's card on the Hub names its training data.")


@dataclass
class Component:
    """One thing with its own licence inside the bundle: a Python distribution, a system library, a model."""

    name: str
    version: str
    license: str
    paths: list[str]  # bundle-relative files or folders (for the notices and DEP-5's Files:)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (title, full text)
    note: str = ""  # a pointer or an attribution where no text is included


def internal_dir(bundle: Path) -> Path:
    """The bundle's data folder (PyInstaller 6's _internal/, or the folder itself for older layouts)."""
    return bundle / "_internal" if (bundle / "_internal").is_dir() else bundle


def bundle_paths(bundle: Path) -> set[str]:
    """Every file under _internal (relative, POSIX) plus the PYZ archive's modules as candidate source paths."""
    internal = internal_dir(bundle)
    paths = {p.relative_to(internal).as_posix() for p in internal.rglob("*") if p.is_file() and not p.is_symlink()}
    for exe in (bundle / "nmt-desktop", bundle / "nmt-desktop.exe"):
        if exe.is_file():
            paths |= {f"{name.replace('.', '/')}{tail}" for name in _pyz_modules(exe)
                      for tail in (".py", "/__init__.py")}
    return paths


def _pyz_modules(exe: Path) -> list[str]:
    """Module names in the executable's embedded PYZ (pure-Python code is there, not under _internal)."""
    try:
        from PyInstaller.archive.readers import pkg_archive_contents
    except ImportError:  # notices of a bundle built elsewhere: files only
        return []
    try:
        return pkg_archive_contents(str(exe))
    except Exception:  # noqa: BLE001 - not a PyInstaller executable (a test's fake bundle)
        return []


def _license_of(dist: md.Distribution) -> str:
    meta = dist.metadata
    expr = meta.get("License-Expression")
    if expr:
        return expr
    lic = (meta.get("License") or "").strip()
    if lic and "\n" not in lic and len(lic) < 80 and lic.upper() != "UNKNOWN":
        return lic
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return " / ".join(classifiers) or SEE_BELOW


def _license_texts(dist: md.Distribution) -> list[tuple[str, str]]:
    texts = []
    for f in dist.files or []:
        parts = PurePosixPath(str(f)).parts
        if parts and parts[0].endswith(".dist-info") and _LICENSE_FILE.match(parts[-1]):
            try:
                text = Path(str(dist.locate_file(f))).read_text("utf-8", "replace")
                texts.append((str(PurePosixPath(*parts[1:])), text))
            except OSError:
                continue
    return sorted(texts)


def distributions(bundle: Path, search_path: list[str] | None = None) -> list[Component]:
    """The installed distributions (of `search_path`, default sys.path) with at least one file in the bundle."""
    present = bundle_paths(bundle)
    found: dict[str, Component] = {}
    for dist in md.distributions(path=search_path if search_path is not None else sys.path):
        name = dist.metadata["Name"]
        if not name or name.lower() in found:
            continue
        hits = sorted({str(f) for f in dist.files or [] if not str(f).startswith("..") and ".dist-info/" not in str(f)
                       and "__pycache__" not in str(f) and str(f) in present})
        if not hits:
            continue
        tops = sorted({h.split("/")[0] for h in hits})
        found[name.lower()] = Component(name, dist.version, _license_of(dist), tops, _license_texts(dist))
    return sorted(found.values(), key=lambda c: c.name.lower())


def _claimed(components: list[Component]) -> set[str]:
    return {p for c in components for p in c.paths}


def _python_component(internal: Path) -> Component | None:
    """CPython itself: libpython, base_library.zip, lib-dynload (PSF-2.0, its own LICENSE.txt)."""
    parts = sorted(p.name for p in internal.iterdir()
                   if p.name.startswith(("libpython", "base_library.zip", "lib-dynload", "python3")))
    if not parts:
        return None
    lic = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    texts = [("LICENSE.txt", lic.read_text("utf-8", "replace"))] if lic.is_file() else []
    return Component("Python", sys.version.split()[0], "PSF-2.0", parts, texts,
                     "" if texts else "https://docs.python.org/3/license.html")


def _find_system_library(name: str) -> Path | None:
    """Where the build machine's loader finds `name` (the file PyInstaller copied into the bundle)."""
    try:
        out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(name + " ") and "=>" in line:
            return Path(line.split("=>")[-1].strip())
    return None


def debian_package_of(path: Path) -> str | None:
    """The Debian package owning `path` (dpkg -S), trying the /usr-merged twin too (Debian 12 lists /lib/...)."""
    candidates = [str(path), str(path.resolve())]
    for c in list(candidates):
        candidates.append(c[4:] if c.startswith("/usr/") else "/usr" + c)
    for c in dict.fromkeys(candidates):
        try:
            proc = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        except OSError:
            return None
        if proc.returncode == 0 and ":" in proc.stdout:
            return proc.stdout.split(":")[0].strip().split(",")[0].strip()
    return None


def system_libraries(internal: Path, claimed: set[str]) -> list[Component]:
    """Shared libraries in the bundle that no distribution's RECORD lists: copied from the build system."""
    libs = sorted(p for p in internal.rglob("*") if p.is_file() and not p.is_symlink() and _SO.search(p.name)
                  and p.relative_to(internal).parts[0] not in claimed and not p.name.startswith("libpython")
                  and "lib-dynload" not in p.parts)
    by_package: dict[str, Component] = {}
    for lib in libs:
        rel = lib.relative_to(internal).as_posix()
        source = _find_system_library(lib.name)
        package = debian_package_of(source) if source else None
        key = package or lib.name
        if key not in by_package:
            copyright_file = Path("/usr/share/doc") / package / "copyright" if package else None
            texts = [(str(copyright_file), copyright_file.read_text("utf-8", "replace"))] \
                if copyright_file and copyright_file.is_file() else []
            version = _dpkg_version(package) if package else "unknown"
            note = "" if texts else f"no package owns {source or lib.name}: check its licence"
            by_package[key] = Component(key, version, SEE_BELOW if texts else "unknown", [], texts, note)
        by_package[key].paths.append(rel)
    return sorted(by_package.values(), key=lambda c: c.name.lower())


def _dpkg_version(package: str) -> str:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def models(internal: Path) -> list[Component]:
    """The bundled models' data licences, from each folder's card.json (the app writes one on export)."""
    import json

    out = []
    for card_path in sorted((internal / "models").glob("*/card.json")):
        card = json.loads(card_path.read_text("utf-8"))
        folder = card_path.parent
        lic = card.get("license", "see the card")
        url = LICENSE_URLS.get(lic)
        note = f"Training data: {card.get('attribution', 'see the card')}; licence: {lic}"
        note += f" ({url})." if url else "."
        readme = folder / "README.md"
        texts = [("README.md", readme.read_text("utf-8"))] if readme.is_file() else []
        out.append(Component(f"model {folder.name}", str(card.get("version", "bundled")), lic,
                             [f"models/{folder.name}"], texts, note))
    return out


def qt_note(internal: Path, pyside_version: str) -> str:
    """LGPL-3.0 section 4(d)(1): how a user replaces the Qt libraries the app is linked against."""
    qt_lib = internal / "PySide6" / "Qt" / "lib"
    libs = sorted(p.name for p in qt_lib.glob("libQt6*.so*")) if qt_lib.is_dir() else []
    return (
        f"Qt {pyside_version} and PySide6/Shiboken6 {pyside_version} are used under the GNU Lesser General Public "
        "License version 3 (LGPL-3.0-only; the GPL-3.0 text it builds on applies too). The Qt libraries are shared "
        f"libraries, not linked into the app: _internal/PySide6/Qt/lib/ holds {', '.join(libs) or 'them'}. You may "
        f"replace them with your own (modified) build of Qt {pyside_version} built with a compatible configuration: "
        "copy your libQt6*.so.6 files over the ones in _internal/PySide6/Qt/lib/ (in the Debian package: "
        "/opt/nmt-desktop/_internal/PySide6/Qt/lib/) and run the app; PySide6's modules load them by soname through "
        "their RUNPATH ($ORIGIN/Qt/lib). Qt's source: https://download.qt.io/official_releases/qt/ (the "
        f"{pyside_version} release); PySide6's: https://download.qt.io/official_releases/QtForPython/ . "
        "The licence texts: https://www.gnu.org/licenses/lgpl-3.0.txt and https://www.gnu.org/licenses/gpl-3.0.txt "
        "(on Debian: /usr/share/common-licenses/LGPL-3 and GPL-3).")


def collect(bundle: Path, search_path: list[str] | None = None) -> list[Component]:
    """Everything in the bundle with a licence: this app, Python, the distributions, system libraries, models."""
    internal = internal_dir(bundle)
    own_license = (ROOT / "LICENSE").read_text("utf-8")
    dists = distributions(bundle, search_path)
    own = [c for c in dists if c.name.lower() == "nmt-desktop"]
    dists = [c for c in dists if c.name.lower() != "nmt-desktop"]
    from nmt_desktop import __version__

    app = Component("nmt-desktop", own[0].version if own else __version__, "MIT",
                    ["nmt-desktop", "nmt_desktop"], [("LICENSE", own_license)])
    python = _python_component(internal)
    claimed = _claimed(dists) | {"nmt_desktop", "models"}
    return [app, *([python] if python else []), *dists, *system_libraries(internal, claimed), *models(internal)]


def render(components: list[Component], internal: Path = Path()) -> str:
    """The notices file: a summary table, the Qt relinking note (naming the libraries under `internal`), the
    model/OPUS-MT notes, then every licence text."""
    pyside = next((c.version for c in components if c.name.lower().startswith("pyside6")), "6")
    width = max(len(c.name) for c in components)
    lines = ["THIRD-PARTY NOTICES for nmt-desktop", "=" * 36, "",
             "Generated by packaging/notices.py from the files of this build. nmt-desktop itself is MIT-licensed",
             "(Copyright (c) 2026 the nmt-desktop authors); it bundles the components below, each under its own",
             "licence.", "", "Components:", ""]
    lines += [f"  {c.name:<{width}}  {c.version:<14} {c.license}" for c in components]
    lines += ["", "Qt and PySide6 (LGPL-3.0): replacing the Qt libraries", "-" * 53, "",
              textwrap.fill(qt_note(internal, pyside), 100, break_on_hyphens=False), "", "Models", "-" * 6, ""]
    lines += [textwrap.fill(f"{c.name}: {c.note}", 100, break_on_hyphens=False)
              for c in components if c.name.startswith("model ")]
    lines += ["", textwrap.fill(OPUS_MT_NOTE, 100, break_on_hyphens=False), ""]
    for c in components:
        title = f"{c.name} {c.version} ({c.license})"
        lines += ["", "=" * 79, title, "=" * 79, f"Files: {', '.join(c.paths)}"]
        if c.note:
            lines.append(c.note)
        for name, text in c.texts:
            lines += ["", f"--- {name} ---", "", text.rstrip()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the one-folder app (dist/nmt-desktop)")
    parser.add_argument("--out", type=Path, help=f"default: BUNDLE/{NOTICES_NAME}")
    args = parser.parse_args(argv)
    components = collect(args.bundle)
    text = render(components, internal_dir(args.bundle))
    out = args.out or args.bundle / NOTICES_NAME
    out.write_text(text, encoding="utf-8")
    print(f"[notices] {len(components)} components, {len(text) >> 10} KiB -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
