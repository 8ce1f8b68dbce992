"""Small bilingual files written by hand (XLIFF) and with polib (PO) for the bilingual tests."""

from __future__ import annotations

from pathlib import Path

import polib

XLIFF12 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app.html" source-language="en" datatype="html">
    <body>
      <trans-unit id="1" resname="greeting">
        <source>Click <g id="1">the <x id="2"/> big</g> button %d times <bpt id="3">&lt;b&gt;</bpt>now<ept id="3">&lt;/b&gt;</ept>.</source>
      </trans-unit>
      <trans-unit id="2" approved="yes">
        <source>Hello world</source>
        <target state="final">Hallo Welt</target>
      </trans-unit>
      <trans-unit id="3" translate="no"><source>Do not translate me</source></trans-unit>
      <group translate="no"><trans-unit id="3b"><source>Nor me</source></trans-unit></group>
      <trans-unit id="4">
        <source>The first sentence. The second one.</source>
        <seg-source><mrk mtype="seg" mid="a">The first sentence.</mrk> <mrk mtype="seg" mid="b">The second one.</mrk></seg-source>
        <note>a note</note>
      </trans-unit>
      <trans-unit id="5">
        <source>I have <ph id="1">&lt;br/&gt;</ph> a <it id="2" pos="open">&lt;i&gt;</it>cat <bx id="3"/>and<ex id="3"/> a dog.</source>
        <target state="translated">Ich habe einen Hund.</target>
      </trans-unit>
      <trans-unit id="6"><source>The <mrk mtype="protected">ACME</mrk> team thanks you.</source></trans-unit>
    </body>
  </file>
</xliff>
"""

XLIFF20 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">
  <file id="f1">
    <unit id="u1" name="save">
      <notes><note>On the toolbar</note></notes>
      <originalData><data id="d1">&lt;b&gt;</data><data id="d2">&lt;/b&gt;</data><data id="d3">&lt;br/&gt;</data></originalData>
      <segment id="s1"><source>Press <pc id="1" dataRefStart="d1" dataRefEnd="d2">Save</pc> now, <sc id="2"/>then<ec startRef="2"/> quit {0}.<ph id="3" dataRef="d3"/></source></segment>
      <ignorable><source> </source></ignorable>
      <segment id="s2" state="final"><source>Done.</source><target>Fertig.</target></segment>
    </unit>
    <unit id="u2" translate="no"><segment><source>Keep me as I am.</source></segment></unit>
    <unit id="u3"><segment state="reviewed"><source>The house is small.</source><target>Das Haus ist winzig.</target></segment></unit>
    <unit id="u5"><segment><source><sc id="1"/>Bold <sc id="2"/>bold and italic<ec startRef="1"/> italic<ec startRef="2"/> and %s.</source></segment></unit>
    <unit id="u6"><segment><source>See <sm id="m1" type="comment" value="a term"/>the small <pc id="1">print</pc><em startRef="m1"/> below.</source></segment></unit>
    <unit id="u4"><segment><source>The garden is <mrk id="m1" translate="no">Gartenzwerg</mrk> green.</source><target></target></segment></unit>
  </file>
</xliff>
"""


def write_xliff12(folder: Path, name: str = "sample.xlf") -> Path:
    path = folder / name
    path.write_text(XLIFF12, encoding="utf-8")
    return path


def write_xliff20(folder: Path, name: str = "sample2.xlf") -> Path:
    path = folder / name
    path.write_text(XLIFF20, encoding="utf-8")
    return path


def write_po(folder: Path, name: str = "messages.po", language: str = "") -> Path:
    """A PO file made with polib: c-format, msgctxt, a translated, a fuzzy, a plural, a multi-line and an
    obsolete entry."""
    po = polib.POFile()
    po.metadata = {"Project-Id-Version": "demo 1.0", "Language": language,
                   "Content-Type": "text/plain; charset=UTF-8", "Plural-Forms": "nplurals=2; plural=(n != 1);"}
    po.append(polib.POEntry(msgid="Found %d files in %s", msgstr="", occurrences=[("src/main.c", "10")],
                            flags=["c-format"]))
    po.append(polib.POEntry(msgctxt="menu", msgid="Open", msgstr="Öffnen", occurrences=[("src/menu.c", "12")]))
    po.append(polib.POEntry(msgid="Close the window", msgstr="Fenster", flags=["fuzzy"]))
    po.append(polib.POEntry(msgid="One file", msgid_plural="%(count)s files", msgstr_plural={0: "", 1: ""},
                            flags=["python-format"]))
    po.append(polib.POEntry(msgid="The first line\nThe second line {name}\n", msgstr=""))
    po.append(polib.POEntry(msgid="Old text", msgstr="Alter Text", obsolete=True))
    path = folder / name
    po.save(str(path))
    return path
