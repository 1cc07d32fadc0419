"""A stable colour per method name (issue 24 item 1): a method keeps its colour in every figure,
whichever other methods the figure shows. The papers' methods take the fixed palette of
``conf/method_colours.yaml``; any other name (a plug-in synthesizer, a label added on the
command line) a colour derived from a hash of the name, the same in every process and run."""

from __future__ import annotations

import colorsys
import functools
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

PALETTE_FILE = "method_colours.yaml"
#: saturation and value ranges of the hashed colours: saturated, mid-dark colours that read on
#: white and stay apart from the palette's greys
_SATURATION = (0.55, 0.85)
_VALUE = (0.55, 0.85)


@functools.cache
def palette(conf_dir: str | None = None) -> dict[str, str]:
    """method name → colour of the fixed palette (empty when the file is absent)."""
    if conf_dir is None:
        from ..config import CONF_DIR

        conf_dir = str(CONF_DIR)
    path = Path(conf_dir) / PALETTE_FILE
    if not path.exists():
        return {}
    return {str(k): str(v) for k, v in (yaml.safe_load(path.read_text()) or {}).items()}


def hashed_colour(name: str) -> str:
    """A colour ``#rrggbb`` from a BLAKE2b hash of ``name``: hue, saturation and value taken
    from three of its bytes (Python's ``hash`` is salted per process; this is not)."""
    h = hashlib.blake2b(name.encode(), digest_size=8).digest()
    hue = int.from_bytes(h[:2], "big") / 65536
    sat = _SATURATION[0] + (_SATURATION[1] - _SATURATION[0]) * h[2] / 255
    val = _VALUE[0] + (_VALUE[1] - _VALUE[0]) * h[3] / 255
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return "#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in (r, g, b)))


def method_colour(name: str) -> str:
    """The colour of method ``name`` in every figure: the palette's, else the hashed one."""
    return palette().get(str(name)) or hashed_colour(str(name))


def methods_to_draw(present: Iterable[str], chosen: Sequence[str],
                    known: Iterable[str] = ()) -> list[str]:
    """The methods a figure draws: the ``chosen`` ones (the paper's, in the paper's order) that
    are ``present``, then every present method the figure does not know (neither ``chosen`` nor
    in ``known``, the paper methods it leaves out on purpose): a plug-in or a method added to the
    roster, in order of appearance."""
    present = list(dict.fromkeys(present))
    have = set(present)
    skip = set(chosen) | set(known)
    return [m for m in chosen if m in have] + [m for m in present if m not in skip]
