"""core/analysis/head_names.py: layers and heads written L3 H2, counted from 1; the old 0-based spelling refused."""

from __future__ import annotations

import pytest

from nmt_desktop.core.analysis.head_names import (HeadNameError, HeadRef, check_head_refs, expand_heads,
                                                  head_description, head_name, layer_name, names, parse_head_ref,
                                                  parse_head_refs)


def test_names_count_from_1() -> None:
    assert head_name(2, 1) == "L3 H2" and layer_name(2) == "L3"
    assert HeadRef(2, 1).name == str(HeadRef(2, 1)) == "L3 H2" and HeadRef(0).name == "L1"
    assert head_description(2, 1) == HeadRef(2, 1).description == "decoder layer 3, cross-attention head 2"
    assert HeadRef(4).description == "decoder layer 5"
    assert names([HeadRef(2, 1), HeadRef(0)]) == "L3H2,L1"


@pytest.mark.parametrize("text, refs", [
    ("L3H2", [HeadRef(2, 1)]),
    ("L3 H2", [HeadRef(2, 1)]),
    ("l3h2", [HeadRef(2, 1)]),
    (" L3 ", [HeadRef(2)]),
    ("L3H2,L1H1", [HeadRef(2, 1), HeadRef(0, 0)]),
    ("L3H2, l1, L12 H10", [HeadRef(2, 1), HeadRef(0), HeadRef(11, 9)]),
])
def test_good_spellings(text, refs) -> None:
    assert parse_head_refs(text, "--ablate") == refs
    assert parse_head_refs(names(refs), "--ablate") == refs  # names() reads back


@pytest.mark.parametrize("text, want, message", [
    ("2:1", "head", "--ablate 2:1: heads are now written like L3H2, counted from 1 "
                    "(2:1 in the old 0-based spelling is L3H2)"),
    ("0:1, 1:3", "any", "(0:1, 1:3 in the old 0-based spelling is L1H2,L2H4)"),
    ("2", "layer", "--ablate 2: layers are now written like L3, counted from 1 (2 in the old 0-based spelling is L3)"),
    ("-1", "layer", "--ablate -1: layers are now written like L3, counted from 1 (-1 in the old spelling counted "
                    "from the last layer)"),
    ("2", "head", "--ablate 2: heads are written like L3H2 (decoder layer 3, head 2), counted from 1"),
    ("L0H1", "any", "--ablate L0H1: layers and heads are counted from 1"),
    ("L2H0", "any", "--ablate L2H0: layers and heads are counted from 1"),
    ("L3H2", "layer", "--ablate L3H2: name a layer only, like L3 (its heads are averaged)"),
    ("L3", "head", "--ablate L3: name a head too, like L3H1"),
    ("H2", "any", "--ablate 'H2': expected heads written like L3H2 or whole layers like L3"),
    ("L3H2,", "any", "--ablate 'L3H2,': expected"),
    ("", "any", "--ablate '': expected"),
])
def test_bad_and_old_spellings_are_one_sentence(text, want, message) -> None:
    with pytest.raises(HeadNameError) as info:
        parse_head_refs(text, "--ablate", want)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text, message", [
    ("L7H1", "--ablate L7H1: the model has 6 decoder layers (L1..L6)"),
    ("L1H1,L6H9", "--ablate L6H9: the model has 8 heads per decoder layer (H1..H8)"),
    ("L7", "--ablate L7: the model has 6 decoder layers (L1..L6)"),
])
def test_out_of_range_names_the_model_size(text, message) -> None:
    with pytest.raises(HeadNameError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_head_refs(text, "--ablate", layers=6, heads=8)
    assert parse_head_refs("L6H8,L1", "--ablate", layers=6, heads=8) == [HeadRef(5, 7), HeadRef(0)]
    check_head_refs([HeadRef(5)], "--x", layers=6)  # a layer alone needs no head count


def test_one_ref_and_expansion() -> None:
    assert parse_head_ref("L2", "--focus") == HeadRef(1)
    with pytest.raises(HeadNameError, match="--focus L1,L2: name one head, not 2"):
        parse_head_ref("L1,L2", "--focus")
    assert expand_heads([HeadRef(1), HeadRef(0, 2), HeadRef(1, 0)], heads=2) == [(1, 0), (1, 1), (0, 2)]
