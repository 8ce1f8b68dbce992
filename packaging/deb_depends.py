"""The .deb's Depends, computed from the bundle's ELF files (what dpkg-shlibdeps does for a normal package).

    python packaging/deb_depends.py dist/nmt-desktop        # prints e.g. "libc6 (>= 2.28), libgl1, ..."

For every ELF file in the folder, `objdump -p` gives its NEEDED sonames and the symbol versions it wants
from each. A soname that a file of the bundle provides is satisfied inside it; every other one is looked up
with `ldconfig -p` and mapped to its Debian package with `dpkg -S`. glibc's packages get a minimum version
from the highest GLIBC_x.y the bundle asks for, so the package refuses a too-old system instead of failing
at start. Nothing is guessed: a soname found nowhere is an error (or listed with --allow-missing).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notices import debian_package_of  # noqa: E402 - packaging/ is not a package

_GLIBC = re.compile(r"\bGLIBC_(\d+(?:\.\d+)+)\b")
GLIBC_SONAMES = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
                 "libutil.so.1", "libresolv.so.2")


@dataclass
class ElfInfo:
    needed: list[str] = field(default_factory=list)
    versions: dict[str, set[str]] = field(default_factory=dict)  # soname -> symbol versions required from it


def is_elf(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def elf_info(path: Path) -> ElfInfo:
    """NEEDED entries and version references of one ELF file (objdump -p's dynamic section)."""
    out = subprocess.run(["objdump", "-p", str(path)], capture_output=True, text=True, check=True).stdout
    info, current = ElfInfo(), None
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "NEEDED":
            info.needed.append(words[1])
        elif line.strip().startswith("required from "):
            current = line.strip()[len("required from "):].rstrip(":")
            info.versions.setdefault(current, set())
        elif current and len(words) == 4 and words[0].startswith("0x"):
            info.versions[current].add(words[3])
        elif not line.startswith(" "):
            current = None
    return info


def ldconfig_paths() -> dict[str, Path]:
    """soname -> path for this machine's 64-bit libraries (the first of ldconfig's cache wins)."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    found: dict[str, Path] = {}
    for line in out.splitlines()[1:]:
        name, _, rest = line.strip().partition(" ")
        if "=>" in rest and ("x86-64" in rest or "64bit" in rest or "AArch64" in rest):
            found.setdefault(name, Path(rest.split("=>")[-1].strip()))
    return found


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def compute(folder: Path, allow_missing: bool = False) -> tuple[str, list[str]]:
    """(Depends field, sonames found nowhere) for all ELF files under `folder`."""
    files = [p for p in sorted(folder.rglob("*")) if is_elf(p)]
    inside = {p.name for p in folder.rglob("*")}
    wanted: set[str] = set()
    glibc_versions: set[str] = set()
    for path in files:
        info = elf_info(path)
        wanted |= {n for n in info.needed if n not in inside}
        for soname, versions in info.versions.items():
            if soname in GLIBC_SONAMES:
                glibc_versions |= {m.group(1) for v in versions if (m := _GLIBC.fullmatch(v))}
    system = ldconfig_paths() if wanted else {}
    packages: set[str] = set()
    missing = []
    for soname in sorted(wanted):
        package = debian_package_of(system[soname]) if soname in system else None
        if package is None:
            missing.append(soname)
        else:
            packages.add(package.split(":")[0])  # libfoo:amd64 -> libfoo
    if missing and not allow_missing:
        raise SystemExit(f"[deb_depends] no Debian package provides {', '.join(missing)} on this machine: install "
                         "it, or drop the bundle's file that needs it (packaging/nmt-desktop.spec)")
    fields = []
    for package in sorted(packages):
        if package == "libc6" and glibc_versions:
            package += f" (>= {max(glibc_versions, key=_version_key)})"
        fields.append(package)
    return ", ".join(fields), missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--allow-missing", action="store_true", help="list unresolved sonames on stderr, go on")
    args = parser.parse_args(argv)
    depends, missing = compute(args.folder, args.allow_missing)
    if missing:
        print(f"[deb_depends] unresolved: {' '.join(missing)}", file=sys.stderr)
    print(depends)
    return 0


if __name__ == "__main__":
    sys.exit(main())
