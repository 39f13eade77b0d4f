"""Text in the SVG figures: escaped, and every character XML can hold kept."""

import xml.etree.ElementTree as ET

import pytest
from bayescheck.reports.svg import escape


@pytest.mark.parametrize("label", ["<script>alert(1)</script>", "a & b", 'say "hi"',
                                   "café ünïcode", "ctl\x01x", "form\x0cfeed", "bad\udcff",
                                   "nul\x00"])
def test_any_label_gives_well_formed_xml_that_encodes(label):
    """A column name may hold anything: a control character or a lone surrogate made the
    whole figure unreadable (invalid XML) or crashed its encoding."""
    document = f"<svg><text>{escape(label)}</text></svg>"
    text = ET.fromstring(document.encode("utf-8")).find("text").text
    printable = "".join(c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else "\ufffd"
                        for c in label)
    assert text == printable


def test_tab_and_newline_are_kept():
    assert escape("a\tb\nc") == "a\tb\nc"
