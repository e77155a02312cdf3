"""How strong a secret key is: pseudonymisation keys and spec signing keys follow one rule.

A key must carry at least :data:`MIN_KEY_BITS` estimated bits (:func:`key_bits`): a short, repetitive or
patterned key is refused, since anyone who guesses it can hash candidate ids and recognise them, or sign a
spec of their own. Keys are text or bytes; anything else is refused by name. On the command line a key is only
ever read from the environment (:func:`key_from_env`).

>>> check_key(b"0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff")[:4]
b'0f1e'
"""

from __future__ import annotations

import math
import os
import string
from collections import Counter

import numpy as np

from depgraph.errors import DepgraphError

#: Keys estimated below this many bits (:func:`key_bits`) are refused.
MIN_KEY_BITS = 128
#: The environment variable a pseudonymisation key is read from unless another is named (:func:`key_from_env`).
DEFAULT_KEY_ENV = "DEPGRAPH_PSEUDONYM_KEY"
_HEX = frozenset(string.hexdigits)
_BASE64 = frozenset(string.ascii_letters + string.digits + "+/-_")  # base64 and base64url
_PRINTABLE_ASCII = 95


def check_key(key: str | bytes, source: str = "the key") -> bytes:
    """``key`` as bytes, or ``DepgraphError(invalid_argument)`` when its estimated strength
    (:func:`key_bits`) is below :data:`MIN_KEY_BITS`. The message gives the estimate, never the key.

    >>> check_key("0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff")[:4]
    b'0f1e'
    >>> check_key("a" * 64)
    Traceback (most recent call last):
    depgraph.errors.DepgraphError: [invalid_argument] the key is too weak: about 0 estimated bits, fewer than 128 ...
    """
    if not isinstance(key, (str, bytes, bytearray)):  # bytes(5) would be five zero bytes
        raise DepgraphError("invalid_argument", f"{source} must be text or bytes, not {type(key).__name__}")
    bits = key_bits(key)
    if bits < MIN_KEY_BITS:
        raise DepgraphError(
            "invalid_argument",
            f"{source} is too weak: about {bits:.0f} estimated bits, fewer than "
            f"{MIN_KEY_BITS} (short, repeated or patterned); use a random key such as the output of "
            "python -c 'import secrets; print(secrets.token_hex(32))'",
            bits=round(bits, 1),
        )
    return key.encode() if isinstance(key, str) else bytes(key)


def key_bits(key: str | bytes) -> float:
    """An estimate, in bits, of how hard ``key`` is to guess: ``min(log2 |A|, H) × L``.

    * ``|A|``, the alphabet the key is written in: 16 when every character is a hexadecimal digit, 64 when
      every character is in the base64 / base64url alphabet (up to two trailing ``=`` of padding ignored),
      otherwise 95 (printable ASCII) plus the number of distinct other characters; bytes that are not UTF-8
      are read one character per byte, in an alphabet of 256.
    * ``H``, the Shannon entropy of the key's own character frequencies, in bits per character: a key drawing
      on few characters, or on some far more than others, scores low whatever its length.
    * ``L``, the effective length: the smaller of the key's shortest period (``"abab…"`` repeats a prefix of
      2) and one more than the number of runs of equal steps between consecutive code points (``"aaaa…"``,
      ``"abcd…"``, ``"02468…"`` are one run each).

    It is an upper bound meant to catch mistakes (a placeholder, a repeated character, a short or patterned
    key), not a proof of randomness: words and names are not recognised. 32 random bytes written in hex
    (64 characters) or base64url (43) score well above 128; a 16-character key never reaches it.

    >>> key_bits("a" * 64), key_bits("ab" * 32)
    (0.0, 2.0)
    >>> key_bits("0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff") >= 128
    True
    """
    if isinstance(key, str):
        text, alphabet = key, None
    else:
        try:
            text, alphabet = bytes(key).decode("utf-8"), None
        except UnicodeDecodeError:
            text, alphabet = bytes(key).decode("latin-1"), 256
    stripped = text.rstrip("=")
    unpadded = stripped if len(text) - len(stripped) <= 2 else text
    if alphabet is None:
        if unpadded and set(unpadded) <= _HEX:
            text, alphabet = unpadded, 16
        elif unpadded and set(unpadded) <= _BASE64:
            text, alphabet = unpadded, 64
        else:
            alphabet = _PRINTABLE_ASCII + len({c for c in text if not " " <= c <= "~"})
    n = len(text)
    if n == 0:
        return 0.0
    counts = np.array(list(Counter(text).values()), dtype=np.float64) / n
    entropy = max(0.0, float(-(counts * np.log2(counts)).sum()))
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    steps = np.diff(codes)
    step_runs = 1 + int(np.count_nonzero(steps[1:] != steps[:-1])) + (1 if len(steps) else 0)
    return min(math.log2(alphabet), entropy) * min(_period(text), step_runs, n)


def _period(text: str) -> int:
    """The shortest p with text[i] == text[i - p] for every i >= p (Knuth-Morris-Pratt border, linear time)."""
    border = [0] * len(text)
    k = 0
    for i in range(1, len(text)):
        while k and text[i] != text[k]:
            k = border[k - 1]
        if text[i] == text[k]:
            k += 1
        border[i] = k
    return len(text) - (border[-1] if text else 0)


def key_from_env(variable: str = DEFAULT_KEY_ENV, purpose: str = "pseudonymisation") -> bytes:
    """The pseudonymisation key (or, with ``purpose="signing"``, a spec signing key: the same rules) from an
    environment variable (never from the command line, where it would land in shell history and process lists),
    refused when unset, empty or weaker than :data:`MIN_KEY_BITS` (:func:`check_key`)."""
    value = os.environ.get(variable)
    if not value:
        raise DepgraphError(
            "invalid_argument",
            f"{purpose} needs a key in the environment variable {variable} (it is unset or empty)",
        )
    return check_key(value, f"the key in the environment variable {variable}")
