"""Figure captions (attnbias.figures.caption): hostile titles and labels stay text."""

from __future__ import annotations

import pytest
from hostile_markdown import HOSTILE, md, rendered_text

from attnbias.figures import caption


@pytest.mark.parametrize("label", HOSTILE)
def test_a_caption_with_a_hostile_title_and_label_is_text(label):
    source = caption.compose(f"Title {label}", f"Optimizers: {label} (GD lr=1).")
    text, tags = rendered_text(source)
    assert tags == ["p", "strong", "p"], source
    assert text == f"Title {label}\nOptimizers: {label} (GD lr=1)."


def test_the_trial_captions_carry_no_link_and_no_remote_image():
    source = caption.compose("[x](javascript:alert(1))", "![i](http://host/x.png)")
    out = md.render(source)
    assert "<a " not in out and "<img" not in out and "javascript:" in out
