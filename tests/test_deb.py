"""The Debian package (packaging/build-deb.sh) and the notices: its pieces fast, the real .deb slow.

The fast tests need no bundle: the Depends computation on small fake folders, the man page from the CLI's
argparse help, the DEP-5 copyright, the metainfo and desktop entry (validated by appstreamcli and
desktop-file-validate when installed), the notices of a fake bundle. The slow test builds the .deb from the
session's PyInstaller folder (conftest.py's `frozen_bundle`, shared with test_packaging.py), checks it with
lintian, desktop-file-validate and appstreamcli, installs it into a throwaway dpkg root, runs the installed
app's --self-test and a headless screenshot, purges it and checks nothing is left.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bundle_build import BUNDLE_GROUP

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "packaging"))

import deb_depends  # noqa: E402 - packaging/ is not a package
import debian_package  # noqa: E402
import manpage  # noqa: E402
import notices  # noqa: E402


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {' '.join(missing)} (.ci/setup.sh installs them)")


# --- Depends ---------------------------------------------------------------------------------------

def test_depends_of_a_folder_without_elf_files(tmp_path):
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "lib.so").write_bytes(b"not an ELF file")
    assert deb_depends.compute(tmp_path) == ("", [])


def test_depends_maps_needed_libraries_to_packages(tmp_path):
    _need("objdump", "dpkg")
    true = Path(shutil.which("true")).resolve()
    shutil.copy(true, tmp_path / "tool")  # NEEDs libc.so.6 only
    depends, missing = deb_depends.compute(tmp_path)
    assert missing == []
    assert depends.startswith("libc6 (>= 2.") and "," not in depends


def test_depends_skips_what_the_bundle_ships(tmp_path):
    _need("objdump", "dpkg")
    shutil.copy(Path(shutil.which("true")).resolve(), tmp_path / "tool")
    (tmp_path / "libc.so.6").write_bytes(b"")  # a library of that soname inside the folder satisfies it
    assert deb_depends.compute(tmp_path) == ("", [])


# --- man page --------------------------------------------------------------------------------------

def test_man_page_has_every_command_and_the_version():
    from nmt_desktop import __version__
    from nmt_desktop.cli.main import build_parser

    page = manpage.render("2026-01-02")
    assert page.startswith('.TH NMT\\-DESKTOP 1 "2026-01-02" "nmt-desktop ' + __version__)
    for name in manpage._subparsers(build_parser()):
        assert f'.SS "nmt-desktop {name}"' in page
    assert '.SS "nmt-desktop models search"' in page  # nested actions too
    assert "\\-\\-self\\-test" in page
    assert not any(line.startswith(("'", ". ")) for line in page.splitlines())


def test_man_page_renders_without_warnings(tmp_path):
    _need("man")
    (tmp_path / "nmt-desktop.1").write_text(manpage.render("2026-01-02"))
    proc = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", str(tmp_path / "nmt-desktop.1")],
                          capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


# --- copyright, metainfo, desktop entry, notices ---------------------------------------------------

def _fake_bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "nmt-desktop"
    internal = bundle / "_internal"
    (internal / "models" / "en-de").mkdir(parents=True)
    card = {"license": "CC-BY 2.0 FR", "attribution": "Tatoeba Project (tatoeba.org) via manythings.org/anki"}
    (internal / "models" / "en-de" / "card.json").write_text(json.dumps(card))
    (internal / "PySide6" / "Qt" / "lib").mkdir(parents=True)
    (internal / "PySide6" / "Qt" / "lib" / "libQt6Core.so.6").write_bytes(b"")
    return bundle


def test_notices_of_a_fake_bundle(tmp_path):
    bundle = _fake_bundle(tmp_path)
    components = notices.collect(bundle, search_path=[])
    names = [c.name for c in components]
    assert names[0] == "nmt-desktop" and "model en-de" in names
    text = notices.render(components, bundle / "_internal")
    assert "Copyright (c) 2026 the nmt-desktop authors" in text
    assert "Tatoeba Project (tatoeba.org) via manythings.org/anki" in text and "CC-BY 2.0 FR" in text
    assert "CC-BY 4.0" in text and "Helsinki-NLP" in text  # the OPUS-MT catalogue note
    assert "LGPL-3.0" in text and "libQt6Core.so.6" in text  # how to replace Qt


def test_dep5_copyright_parses(tmp_path):
    bundle = _fake_bundle(tmp_path)
    components = notices.collect(bundle, search_path=[]) + [
        notices.Component("torch", "2.13.0", "Apache-2.0 AND BSD-3-Clause", ["torch"]),
        notices.Component("pillow", "13.0.0", "MIT-CMU", ["PIL"]),
        notices.Component("safetensors", "0.8", "Apache Software License", ["safetensors"])]
    paragraphs = debian_package.parse_paragraphs(debian_package.dep5(components, bundle / "_internal"))
    assert paragraphs[0]["Format"].startswith("https://www.debian.org/doc/packaging-manuals/copyright-format/1.0")
    files = [p for p in paragraphs if "Files" in p]
    assert files[0]["Files"] == "*" and files[0]["License"] == "MIT"
    standalone = {p["License"].split("\n")[0] for p in paragraphs if "Files" not in p and "License" in p}
    for p in files:
        assert p["Copyright"]
        for atom in debian_package._atoms(p["License"]):
            assert " " not in atom and atom in standalone, atom
    assert {"Apache-2.0", "BSD-3-Clause", "MIT-CMU", "CC-BY-2.0-FR"} <= standalone
    assert any(p["Files"] == "opt/nmt-desktop/_internal/models/en-de/*" for p in files)


def test_metainfo_validates(tmp_path):
    _need("appstreamcli")
    path = tmp_path / f"{debian_package.APP_ID}.metainfo.xml"
    path.write_text(debian_package.metainfo("1.2.3", 1_780_000_000))
    assert '<release version="1.2.3"' in path.read_text()
    proc = subprocess.run(["appstreamcli", "validate", "--no-net", "--pedantic", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_desktop_entry_validates(tmp_path):
    _need("desktop-file-validate")
    path = tmp_path / f"{debian_package.APP_ID}.desktop"
    shutil.copy(REPO / "packaging" / "nmt-desktop.desktop", path)
    proc = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


def test_changelog_and_gzip_are_reproducible():
    log = debian_package.changelog("1.2.3", 1_780_000_000)
    assert log.startswith("nmt-desktop (1.2.3) unstable; urgency=medium")
    assert debian_package.gzip_n(log.encode()) == debian_package.gzip_n(log.encode())


# --- the real package (slow) -----------------------------------------------------------------------

def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tar_digest(deb: Path) -> str:
    """The uncompressed data.tar of a .deb: what a second build must reproduce byte for byte."""
    proc = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True)
    return hashlib.sha256(proc.stdout).hexdigest()


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.xdist_group(BUNDLE_GROUP)
def test_deb_package(frozen_bundle, tmp_path):
    _need("dpkg-deb", "dpkg", "objdump", "lintian", "desktop-file-validate", "appstreamcli")
    # xz at preset 1, not the release's 6: the same format, lintian and dpkg read it alike, minutes sooner
    env = dict(os.environ, PYTHON=sys.executable, SOURCE_DATE_EPOCH="1780000000", NMT_DEB_LEVEL="1")
    out = tmp_path / "out"
    build = subprocess.run(["bash", str(REPO / "packaging" / "build-deb.sh"), str(frozen_bundle.parent), str(out)],
                           capture_output=True, text=True, env=env, timeout=1800)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    print(build.stdout.strip().splitlines()[-1])
    (deb,) = out.glob("nmt-desktop_*_amd64.deb")
    assert deb.stat().st_size < 250 * 2**20, f"{deb.stat().st_size >> 20} MiB"
    assert "THIRD_PARTY_NOTICES.txt" in {p.name for p in frozen_bundle.iterdir()}

    # the same folder packed again (uncompressed, to save minutes): the same files, bytes, modes and times
    again = subprocess.run(["bash", str(REPO / "packaging" / "build-deb.sh"), str(frozen_bundle.parent),
                            str(tmp_path / "again")], capture_output=True, text=True,
                           env=dict(env, NMT_DEB_COMPRESSION="none"), timeout=1800)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _tar_digest(deb) == _tar_digest(next((tmp_path / "again").glob("*.deb")))

    lintian = subprocess.run(["lintian", "--fail-on", "error", "--no-tag-display-limit", str(deb)], capture_output=True,
                             text=True, timeout=1800)
    print(lintian.stdout)
    assert lintian.returncode == 0 and not [line for line in lintian.stdout.splitlines() if line.startswith("E:")], \
        lintian.stdout[-5000:] + lintian.stderr[-2000:]

    root = tmp_path / "root"
    for sub in ("info", "updates", "triggers"):
        (root / "var/lib/dpkg" / sub).mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("")
    dpkg = ["dpkg", f"--root={root}", "--force-not-root", "--force-depends", "--force-script-chrootless",
            "--log=/dev/null"]
    install = subprocess.run([*dpkg, "-i", str(deb)], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout + install.stderr

    app_id = debian_package.APP_ID
    for cmd in (["desktop-file-validate", str(root / f"usr/share/applications/{app_id}.desktop")],
                ["appstreamcli", "validate", "--no-net", str(root / f"usr/share/metainfo/{app_id}.metainfo.xml")]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    for size in debian_package.ICON_SIZES:
        assert (root / f"usr/share/icons/hicolor/{size}x{size}/apps/nmt-desktop.png").is_file()
    assert os.readlink(root / "usr/bin/nmt-desktop") == "/opt/nmt-desktop/nmt-desktop"
    assert (root / "usr/share/doc/nmt-desktop/changelog.gz").is_file()  # a native package's name for it
    copyright_paras = debian_package.parse_paragraphs((root / "usr/share/doc/nmt-desktop/copyright").read_text())
    assert copyright_paras[0]["Format"].startswith("https://www.debian.org/doc/packaging-manuals/copyright-format/")

    run_env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NMT_DESKTOP_CONFIG_DIR=str(tmp_path / "config"),
                   NMT_DESKTOP_LOG_DIR=str(tmp_path / "log"), NMT_DESKTOP_DATA_DIR=str(tmp_path / "data"))
    binary = root / "opt/nmt-desktop/nmt-desktop"
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, env=run_env, timeout=300)
    assert version.stdout.strip() == f"nmt-desktop {debian_package.version()}"
    self_test = subprocess.run([str(binary), "--self-test"], capture_output=True, text=True, env=run_env, timeout=600)
    report = json.loads([line for line in self_test.stdout.splitlines() if line.strip()][-1])
    assert self_test.returncode == 0 and report["ok"] is True, report.get("error") or self_test.stderr[-3000:]
    # the GUI itself (the Qt plugins left after trimming): a headless screenshot of a translation
    shot = tmp_path / "shot.png"
    gui = subprocess.run([str(binary), "gui", "--text", "How are you?", "--screenshot", str(shot)], capture_output=True,
                         text=True, env=run_env, timeout=600)
    assert gui.returncode == 0 and shot.stat().st_size > 10_000, gui.stdout[-2000:] + gui.stderr[-3000:]

    purge = subprocess.run([*dpkg, "--purge", "nmt-desktop"], capture_output=True, text=True, timeout=900)
    assert purge.returncode == 0, purge.stdout + purge.stderr
    left = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if not p.relative_to(root).as_posix().startswith("var/lib/dpkg")
                  and p.relative_to(root).as_posix() not in ("var", "var/lib"))
    assert left == [], left


def test_notices_path_beside_the_frozen_binary(monkeypatch, tmp_path):
    from nmt_desktop.core import locations

    monkeypatch.delattr(sys, "frozen", raising=False)
    assert locations.third_party_notices_path() is None
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nmt-desktop"))
    assert locations.third_party_notices_path() is None  # a build without notices.py's file
    (tmp_path / "THIRD_PARTY_NOTICES.txt").write_text("notices")
    assert locations.third_party_notices_path() == tmp_path / "THIRD_PARTY_NOTICES.txt"
