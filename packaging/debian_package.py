"""Stage the Debian package's tree from the PyInstaller folder (packaging/build-deb.sh runs this).

    python packaging/debian_package.py dist/nmt-desktop STAGE_DIR      # then: dpkg-deb --build STAGE_DIR

Lays out /opt/nmt-desktop (the bundle), /usr/bin/nmt-desktop (a symlink), the desktop entry, hicolor icons
rendered from resources/icons/nmt-desktop.svg, the AppStream metainfo, /usr/share/doc/nmt-desktop (DEP-5
copyright, changelog.gz, THIRD_PARTY_NOTICES.txt), the man page, lintian overrides and DEBIAN/control
with the Depends computed from the bundle's ELF files. Every file comes from here: no maintainer scripts, so
`apt remove` leaves nothing behind. The version is nmt_desktop.__version__ everywhere; dates come from
SOURCE_DATE_EPOCH, and gzip runs without names or timestamps, so two runs give the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import io
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import notices  # noqa: E402 - packaging/ is not a package

PACKAGE = "nmt-desktop"
APP_ID = "io.github.nmt_desktop.NmtDesktop"  # reverse DNS of the project's home (AppStream id, desktop file name)
HOMEPAGE = "https://github.com/nmt-desktop/nmt-desktop"
SCREENSHOT_BASE = "https://raw.githubusercontent.com/nmt-desktop/nmt-desktop/v{version}/resources/screenshots/"
MAINTAINER = "nmt-desktop maintainers <nmt-desktop@users.noreply.github.com>"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
PREFIX = f"opt/{PACKAGE}"
DOC = f"usr/share/doc/{PACKAGE}"
SCREENSHOTS = (("translate.png", "Translating a sentence, with the decoder's cross-attention of every head"),
               ("analysis.png", "The Analysis tab: what the model attends to and how sure it is"),
               ("train.png", "Training a model from a parallel corpus, with its loss and BLEU curves"),
               ("get-models.png", "Getting OPUS-MT models from the Hugging Face Hub"))
# /usr/share/common-licenses/<name> on every Debian system: DEP-5 points there instead of repeating the text
COMMON_LICENSES = {"Apache-2.0": "Apache-2.0", "GPL-2.0": "GPL-2", "GPL-3.0": "GPL-3", "LGPL-2.1": "LGPL-2.1",
                   "LGPL-3.0": "LGPL-3", "MPL-2.0": "MPL-2.0", "CC0-1.0": "CC0-1.0"}
# classifier and free-text licence names seen in wheels' metadata -> SPDX
_SPDX = {"mit license": "MIT", "mit": "MIT", "bsd license": "BSD-3-Clause", "bsd": "BSD-3-Clause",
         "apache software license": "Apache-2.0", "apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0",
         "python software foundation license": "PSF-2.0", "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0",
         "gnu lesser general public license v3 (lgplv3)": "LGPL-3.0-only", "cc-by 2.0 fr": "CC-BY-2.0-FR",
         "isc license (iscl)": "ISC", "the unlicense (unlicense)": "Unlicense"}


def version() -> str:
    from nmt_desktop import __version__

    return __version__


def epoch() -> int:
    """SOURCE_DATE_EPOCH (build-deb.sh sets it from the last commit), else now."""
    return int(os.environ.get("SOURCE_DATE_EPOCH") or dt.datetime.now(dt.timezone.utc).timestamp())


def _day(ts: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc)


def gzip_n(data: bytes) -> bytes:
    """gzip -n -9: no file name, mtime 0 (reproducible; lintian wants -9 for changelogs and man pages)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


# --- texts -----------------------------------------------------------------------------------------

def control(ver: str, arch: str, depends: str, installed_kib: int) -> str:
    return (f"Package: {PACKAGE}\nVersion: {ver}\nArchitecture: {arch}\nMaintainer: {MAINTAINER}\n"
            f"Installed-Size: {installed_kib}\nDepends: {depends}\nSection: science\nPriority: optional\n"
            f"Homepage: {HOMEPAGE}\nDescription: neural machine translation desktop app with attention views\n"
            " NMT Desktop trains and runs encoder-decoder Transformer models for machine\n"
            " translation and shows what they do: cross-attention of every head, alignments,\n"
            " token attributions, beam search trees and quality estimates. It translates\n"
            " text and documents (.docx, .pptx, .xlsx, .odt, .html, .md, .srt, .vtt) and\n"
            " downloads OPUS-MT models from the Hugging Face Hub.\n"
            " .\n"
            " English-German and English-French models are included. This package is a\n"
            " self-contained build (Python, PyTorch for CPUs and Qt inside /opt/nmt-desktop).\n")


def changelog(ver: str, ts: int) -> str:
    date = _day(ts).strftime("%a, %d %b %Y %H:%M:%S +0000")
    return (f"{PACKAGE} ({ver}) unstable; urgency=medium\n\n  * Release {ver}: a Debian package of the "
            f"one-folder PyInstaller build.\n\n -- {MAINTAINER}  {date}\n")


def metainfo(ver: str, ts: int) -> str:
    default = ' type="default"'
    shots = "\n".join(
        f'    <screenshot{default if i == 0 else ""}>\n      <caption>{escape(caption)}</caption>\n'
        f'      <image>{SCREENSHOT_BASE.format(version=ver)}{name}</image>\n    </screenshot>'
        for i, (name, caption) in enumerate(SCREENSHOTS))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by packaging/debian_package.py -->
<component type="desktop-application">
  <id>{APP_ID}</id>
  <metadata_license>MIT</metadata_license>
  <project_license>MIT</project_license>
  <name>NMT Desktop</name>
  <summary>Translate with a Transformer and watch its attention</summary>
  <description>
    <p>NMT Desktop trains and runs encoder-decoder Transformer models for neural machine translation, and shows
      what they do while they translate.</p>
    <ul>
      <li>Translate text and documents, keeping their formatting</li>
      <li>See the cross-attention of every head, word alignments and token attributions</li>
      <li>Explore beam search, forced decoding and head ablation in the Analysis tab</li>
      <li>Train your own model from a parallel corpus, or get OPUS-MT models from the Hugging Face Hub</li>
    </ul>
    <p>English-German and English-French models trained on Tatoeba are included.</p>
  </description>
  <launchable type="desktop-id">{APP_ID}.desktop</launchable>
  <url type="homepage">{HOMEPAGE}</url>
  <url type="bugtracker">{HOMEPAGE}/issues</url>
  <developer_name>the nmt-desktop authors</developer_name>
  <screenshots>
{shots}
  </screenshots>
  <provides>
    <binary>{PACKAGE}</binary>
  </provides>
  <content_rating type="oars-1.1"/>
  <releases>
    <release version="{ver}" date="{_day(ts).strftime('%Y-%m-%d')}"/>
  </releases>
</component>
"""


def spdx(name: str) -> str:
    """A DEP-5 licence short name (no spaces) for a wheel's licence string."""
    name = name.strip()
    if name.lower() in _SPDX:
        return _SPDX[name.lower()]
    if re.fullmatch(r"[A-Za-z0-9.+-]+(\s+(OR|AND|WITH|or|and)\s+[A-Za-z0-9.+-]+)*", name):
        return re.sub(r"\s+(OR|AND|WITH)\s+", lambda m: f" {m.group(1).lower()} ", name)
    return "X-" + re.sub(r"[^A-Za-z0-9.+-]+", "-", name).strip("-")


def _atoms(expr: str) -> list[str]:
    return [a for a in re.split(r"\s+(?:or|and|with)\s+", expr.replace("(", " ").replace(")", " ").strip()) if a]


def _license_body(short: str) -> str:
    if short.startswith("X-Debian-"):
        package = short[len("X-Debian-"):]
        return (f" Copied from Debian's {package} package: its /usr/share/doc/{package}/copyright is\n"
                f" included in /{DOC}/THIRD_PARTY_NOTICES.txt.")
    if short == "CC-BY-2.0-FR":  # the bundled models' training data (Tatoeba)
        return (" Creative Commons Attribution 2.0 France: https://creativecommons.org/licenses/by/2.0/fr/\n"
                " Attribution: Tatoeba Project (tatoeba.org) via manythings.org/anki.")
    base = re.sub(r"-(only|or-later)$", "", short)
    if base in COMMON_LICENSES:
        return (" On Debian systems, the full text of this licence is in\n"
                f" /usr/share/common-licenses/{COMMON_LICENSES[base]}.")
    return f" The full text is in /{DOC}/THIRD_PARTY_NOTICES.txt, in the section of the component that uses it."


def dep5(components: list[notices.Component], internal: Path) -> str:
    """debian/copyright in the machine-readable format: one Files paragraph per component of the bundle whose
    _internal folder is `internal` (to tell folders, given as `folder/*`, from files)."""
    paras = [f"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: {PACKAGE}\n"
             f"Upstream-Contact: {MAINTAINER}\nSource: {HOMEPAGE}\n"
             f"Comment: The package installs a PyInstaller build: nmt-desktop with the Python runtime,\n"
             f" libraries and models it needs. Each is listed below; their licence texts are in\n"
             f" /{DOC}/THIRD_PARTY_NOTICES.txt."]
    mit = (ROOT / "LICENSE").read_text("utf-8").split("\n\n", 2)[2]  # the text after the title and copyright line
    used: dict[str, None] = {}
    for c in components:
        if c.name == PACKAGE:
            files, short, holder = "*", "MIT", "2026 the nmt-desktop authors"
        else:
            on_disk = [p for p in c.paths if (internal / p).exists()]
            # pure-Python distributions live only in the executable's module archive (PYZ)
            files = " ".join(f"{PREFIX}/_internal/{p}{'/*' if (internal / p).is_dir() else ''}" for p in on_disk) \
                or f"{PREFIX}/{PACKAGE}"
            short = spdx(c.license) if c.license not in ("unknown", notices.SEE_BELOW) else f"X-Debian-{c.name}"
            holder = f"the {c.name} authors (see THIRD_PARTY_NOTICES.txt)"
        used.update(dict.fromkeys(_atoms(short)))
        paras.append(f"Files: {files}\nCopyright: {holder}\nLicense: {short}")
    for short in used:
        body = ("\n".join(" " + (line if line.strip() else ".") for line in mit.strip().splitlines())
                if short == "MIT" else _license_body(short))
        paras.append(f"License: {short}\n{body}")
    return "\n\n".join(paras) + "\n"


def parse_paragraphs(text: str) -> list[dict[str, str]]:
    """RFC 822-style paragraphs (control files, DEP-5): field -> value, continuation lines joined by newlines."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        para: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                para[key] += "\n" + line[1:]
            else:
                key, _, value = line.partition(":")
                para[key] = value.strip()
        out.append(para)
    return out


# --- the tree ------------------------------------------------------------------------------------

def render_icons(svg: Path, hicolor: Path, sizes: tuple[int, ...] = ICON_SIZES) -> None:
    """PNG icons at the freedesktop sizes, rendered by Qt from the SVG (the same renderer as the app's)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - QPainter needs it
    renderer = QSvgRenderer(str(svg))
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = hicolor / f"{size}x{size}" / "apps" / f"{PACKAGE}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        assert image.save(str(out), "PNG"), out
    (hicolor / "scalable" / "apps").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, hicolor / "scalable" / "apps" / f"{PACKAGE}.svg")


def _normalise_modes(root: Path) -> None:
    """0755 for folders and executables, 0644 for the rest (shared libraries too, as Debian policy wants)."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        else:
            executable = path.stat().st_mode & stat.S_IXUSR and not re.search(r"\.so(\.\d+)*$", path.name)
            path.chmod(0o755 if executable else 0o644)


def md5sums(root: Path) -> str:
    """DEBIAN/md5sums: every regular file outside DEBIAN/, sorted."""
    import hashlib

    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                       and not p.is_relative_to(root / "DEBIAN")):
        digest = hashlib.md5()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        lines.append(f"{digest.hexdigest()}  {path.relative_to(root).as_posix()}\n")
    return "".join(lines)


def installed_size_kib(root: Path) -> int:
    """dpkg-gencontrol's estimate: each file's size in KiB rounded up, one KiB per other entry."""
    total = 0
    for path in root.rglob("*"):
        if path.is_relative_to(root / "DEBIAN"):
            continue
        total += -(-path.lstat().st_size // 1024) if path.is_file() and not path.is_symlink() else 1
    return total


def stage(appdir: Path, root: Path, arch: str = "amd64") -> Path:
    """Write the package tree under `root` (emptied first); returns the DEBIAN/control path."""
    from deb_depends import compute

    ver, ts = version(), epoch()
    if root.exists():
        shutil.rmtree(root)
    opt = root / PREFIX
    shutil.copytree(appdir, opt, symlinks=True)
    if not (opt / notices.NOTICES_NAME).is_file():  # a bundle from an older build.sh
        (opt / notices.NOTICES_NAME).write_text(notices.render(notices.collect(appdir), notices.internal_dir(appdir)))
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin" / PACKAGE).symlink_to(f"/{PREFIX}/{PACKAGE}")  # absolute across top-level folders (policy 10.5)
    share = root / "usr/share"
    desktop = (HERE / f"{PACKAGE}.desktop").read_text("utf-8")
    (share / "applications").mkdir(parents=True)
    (share / "applications" / f"{APP_ID}.desktop").write_text(desktop, "utf-8")
    render_icons(ROOT / "resources/icons/nmt-desktop.svg", share / "icons/hicolor")
    (share / "metainfo").mkdir()
    (share / "metainfo" / f"{APP_ID}.metainfo.xml").write_text(metainfo(ver, ts), "utf-8")
    doc = root / DOC
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(dep5(notices.collect(appdir), notices.internal_dir(appdir)), "utf-8")
    # a native package (the version is nmt_desktop.__version__, no Debian revision): its changelog is changelog.gz
    (doc / "changelog.gz").write_bytes(gzip_n(changelog(ver, ts).encode()))
    shutil.copyfile(opt / notices.NOTICES_NAME, doc / notices.NOTICES_NAME)
    (share / "man/man1").mkdir(parents=True)
    from manpage import render as render_man

    (share / "man/man1" / f"{PACKAGE}.1.gz").write_bytes(gzip_n(render_man(_day(ts).strftime("%Y-%m-%d")).encode()))
    (share / "lintian/overrides").mkdir(parents=True)
    shutil.copyfile(HERE / "lintian-overrides", share / "lintian/overrides" / PACKAGE)
    _normalise_modes(root)
    # NMT_DEB_ALLOW_MISSING=1: build anyway when a library the bundle needs is not installed here (it is then
    # missing from Depends; for measuring only)
    depends, missing = compute(opt, allow_missing=os.environ.get("NMT_DEB_ALLOW_MISSING") == "1")
    if missing:
        print(f"[deb] WARNING: not in Depends (not installed on this machine): {' '.join(missing)}", file=sys.stderr)
    (root / "DEBIAN").mkdir()
    out = root / "DEBIAN" / "control"
    out.write_text(control(ver, arch, depends, installed_size_kib(root)), "utf-8")
    (root / "DEBIAN" / "md5sums").write_text(md5sums(root), "utf-8")  # for `dpkg --verify` / debsums
    for path in (root / "DEBIAN").iterdir():
        path.chmod(0o644)
    (root / "DEBIAN").chmod(0o755)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("appdir", type=Path, nargs="?", help="the PyInstaller folder (dist/nmt-desktop)")
    parser.add_argument("root", type=Path, nargs="?", help="the staging folder to (re)create")
    parser.add_argument("--arch", default="amd64")
    parser.add_argument("--print-version", action="store_true", help="print the package version and exit")
    args = parser.parse_args(argv)
    if args.print_version:
        print(version())
        return 0
    if args.appdir is None or args.root is None:
        parser.error("APPDIR and ROOT are needed")
    print(stage(args.appdir, args.root, args.arch).read_text("utf-8"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
