r"""Ids that look alike: Unicode's confusable skeletons (UTS #39, section 4).

``Pat`` written with a Cyrillic ``а`` (U+0430), or ``P1`` with a fullwidth ``１``, prints as ``Pat`` and ``P1`` but is
another id: beside the plain spelling, one person becomes two subjects, split between training and test without a
word. Two ids are *confusable* when their skeletons are equal; the skeleton of an id is its compatibility form (NFKC,
which folds fullwidth and other compatibility letters), decomposed (NFD), with every character replaced by the
prototype Unicode's ``confusables.txt`` gives it, decomposed again. The table ships beside this module
(``confusables.txt``: Unicode 13.0.0, its data lines; see the file's header for where it comes from).

Only pairs with at least one id that is not plain ASCII are reported: among ASCII ids the table's few mappings
(``0`` and ``O``, ``1``, ``I`` and ``l``, ``m`` and ``rn``) are ordinary spellings (``S10`` and ``SIO`` are two
samples in any study), not look-alikes someone could not tell apart.

>>> skeleton("P\u0430t") == skeleton("Pat"), skeleton("P\uff11") == skeleton("P1"), skeleton("Pat") == skeleton("Pet")
(True, True, False)
>>> [[ascii(key) for key in group] for group in confusable_groups(pa.array(["Pat", "P\u0430t", "Z9", "Q\uff11", "Q1"]))]
[["'Pat'", "'P\\u0430t'"], ["'Q1'", "'Q\\uff11'"]]
"""

from __future__ import annotations

import unicodedata
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import text_buffers

TABLE = Path(__file__).with_name("confusables.txt")


@cache
def prototypes() -> dict[int, str]:
    """Each confusable character's prototype (``str.translate`` table), read once from :data:`TABLE`."""
    table: dict[int, str] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        source, prototype, _ = (field.strip() for field in line.split(";"))
        table[int(source, 16)] = "".join(chr(int(code, 16)) for code in prototype.split())
    return table


def skeleton(text: str) -> str:
    """The confusable skeleton of ``text`` (of its NFKC form): equal skeletons, look-alike ids."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    return unicodedata.normalize("NFD", decomposed.translate(prototypes()))


def confusable_groups(keys: pa.Array) -> list[list[str]]:
    """The sets of distinct ``keys`` (nulls ignored) whose skeletons are equal, each holding an id that is not
    plain ASCII; each set sorted, the sets by their first id. ASCII-only keys cost one pass; otherwise the
    distinct non-ASCII keys get a skeleton each (one ``str.translate``), and the ASCII keys one vectorised pass
    per ASCII character the table maps."""
    ascii_only = pc.fill_null(pc.string_is_ascii(keys), True)
    if pc.all(ascii_only).as_py():
        return []
    present = keys.drop_null()
    plain = pc.string_is_ascii(present)
    others = pc.unique(present.filter(pc.invert(plain)))
    skeletons = unicode_skeletons(others)
    ascii_keys = present.filter(plain)  # not made distinct first: the few matches are
    ascii_forms = ascii_skeletons(ascii_keys)
    matched = pc.is_in(ascii_forms, value_set=skeletons)
    look_alike = pc.unique(ascii_keys.filter(matched))
    ids = pa.concat_arrays([others, look_alike])
    forms = pa.concat_arrays([skeletons, ascii_skeletons(look_alike)])
    repeated = pc.is_in(forms, value_set=_repeats(forms))
    groups: dict[str, list[str]] = {}
    for key, form in zip(ids.filter(repeated).to_pylist(), forms.filter(repeated).to_pylist(), strict=True):
        groups.setdefault(form, []).append(key)
    return sorted(sorted(group) for group in groups.values())


def unicode_skeletons(keys: pa.Array) -> pa.Array:
    """:func:`skeleton` of each of ``keys`` (no nulls, no control characters), in a few whole-column passes: the
    keys are normalised in Arrow, and when some hold a character the table maps, joined by NUL into one text that
    is translated and decomposed at once (NFD never reorders across a NUL) and cut apart again."""
    decomposed = pc.utf8_normalize(pc.utf8_normalize(keys, form="NFKC"), form="NFD")
    if not len(keys) or not pc.any(pc.match_substring_regex(decomposed, _mapped_characters())).as_py():
        return decomposed
    whole = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(keys)], pa.int32()), decomposed), "\x00")
    skeletons = unicodedata.normalize("NFD", whole[0].as_py().translate(prototypes()))
    return pc.split_pattern(pa.array([skeletons]), "\x00").flatten()


def _repeats(values: pa.Array) -> pa.Array:
    counts = pc.value_counts(values)
    return counts.field("values").filter(pc.greater(counts.field("counts"), 1))


@cache
def _mapped_characters() -> str:
    """A regular expression (RE2) matching any character the table maps."""
    return "[" + "".join(f"\\x{{{code:X}}}" for code in sorted(prototypes())) + "]"


def ascii_skeletons(keys: pa.Array) -> pa.Array:
    """The skeletons of ASCII ``keys`` (no nulls), those :func:`unicode_skeletons` gives them, in Arrow: the table
    maps a handful of ASCII characters; those mapped to one character are translated in one pass over the bytes,
    the others replaced where they occur."""
    offsets, data = text_buffers(keys)
    body = data[offsets[0] : offsets[-1]].tobytes()
    one, longer = _ascii_prototypes()
    out = pa.StringArray.from_buffers(
        len(keys), pa.py_buffer((offsets - offsets[0]).astype(np.int32)), pa.py_buffer(body.translate(one))
    )
    for character, prototype in longer:
        if character.encode() in body:
            out = pc.replace_substring(out, character, prototype)
    return out


@cache
def _ascii_prototypes() -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """The ASCII characters the table maps: a ``bytes.translate`` table of those mapped to one ASCII character,
    and the others with their (decomposed) prototypes."""
    ascii_mapped = {code: unicodedata.normalize("NFD", p) for code, p in prototypes().items() if code < 0x80}
    one = bytes(range(256)).translate(None)  # identity
    table = bytearray(one)
    longer = []
    for code, prototype in sorted(ascii_mapped.items()):
        if len(prototype) == 1 and ord(prototype) < 0x80:
            table[code] = ord(prototype)
        else:
            longer.append((chr(code), prototype))
    return bytes(table), tuple(longer)
