"""The OASIS XLIFF schemas (tests/real_documents/bilingual/schemas/, SOURCES.tsv) loaded offline: every
schemaLocation (http://www.w3.org/2001/xml.xsd, informativeCopiesOf3rdPartySchemas/w3c/xml.xsd, ...) is
answered from that folder by file name, so validation never reaches the network."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lxml import etree

SCHEMAS = Path(__file__).resolve().parents[2] / "real_documents" / "bilingual" / "schemas"


class _Local(etree.Resolver):
    def resolve(self, url, public_id, context):
        return self.resolve_filename(str(SCHEMAS / url.rsplit("/", 1)[-1]), context)


def _schema(text: str) -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_Local())
    return etree.XMLSchema(etree.fromstring(text.encode(), parser, base_url=str(SCHEMAS) + "/"))


@lru_cache(maxsize=None)
def xliff12() -> etree.XMLSchema:
    """XLIFF 1.2 strict."""
    return _schema('<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
                   '<xs:import namespace="urn:oasis:names:tc:xliff:document:1.2" '
                   'schemaLocation="xliff-core-1.2-strict.xsd"/></xs:schema>')


@lru_cache(maxsize=None)
def xliff20() -> etree.XMLSchema:
    """XLIFF 2.0 core with the Translation Candidates (mtc) and Metadata modules."""
    return _schema('<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
                   '<xs:import namespace="urn:oasis:names:tc:xliff:document:2.0" schemaLocation="xliff_core_2.0.xsd"/>'
                   '<xs:import namespace="urn:oasis:names:tc:xliff:matches:2.0" schemaLocation="matches.xsd"/>'
                   '</xs:schema>')


def errors(schema: etree.XMLSchema, path: Path) -> list[str]:
    """The schema's complaints about the file (none when valid)."""
    document = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True))
    schema.validate(document)
    return [f"line {e.line}: {e.message}" for e in schema.error_log]
