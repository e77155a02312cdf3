"""What a spec records of what it was made from: the study file, its declaration as written, and the size and
SHA-256 of every input file, hashed on a second thread while the run reads and derives (the bytes are in the page
cache by then, or soon), so recording them costs the run almost nothing.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "metadata.csv").write_bytes(b"sample_id,S1")
>>> hashing = hash_inputs([("metadata.path", "metadata.csv", folder / "metadata.csv")])
>>> [(f.path, f.size, f.sha256 == hashlib.sha256(b"sample_id,S1").hexdigest()) for f in hashing.result()]
[('metadata.csv', 12, True)]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from depgraph.errors import DepgraphError
from depgraph.spec.model import InputFile, Provenance
from depgraph.study.files import Declaration

#: Bytes read at a time: large enough that hashlib releases the GIL and hashes while the run parses on the other core.
CHUNK = 1 << 20
_HASHING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="depgraph-hash")


def file_digest(path: Path) -> tuple[int, str]:
    """The size and SHA-256 (hex) of a file, read in chunks (``io`` naming it when it cannot be read)."""
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("rb") as f:
            while chunk := f.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise DepgraphError("io", f"input {str(path)!r} cannot be read: {exc.strerror}", path=str(path)) from None
    return size, digest.hexdigest()


def _records(inputs: Iterable[tuple[str, str, Path]]) -> list[InputFile]:
    out = []
    for key, written, path in inputs:
        size, sha256 = file_digest(path)
        out.append(InputFile(key=key, path=written, size=size, sha256=sha256))
    return out


def hash_inputs(inputs: Iterable[tuple[str, str, Path]]) -> Future[list[InputFile]]:
    """The records of ``inputs`` (``(key, path as written, path)``), hashed on a thread of their own."""
    return _HASHING.submit(_records, list(inputs))


#: Keys of a study file that say where it runs, not what it splits: a spec records the declaration without them, so
#: the same declaration run on one machine and on Spark records the same one, and makes the same spec and digest.
ENGINE_KEYS = ("engine", "spark")


def provenance(declaration: Declaration, inputs: list[InputFile]) -> Provenance:
    """What a spec made from ``declaration`` records: the study file, its keys (but :data:`ENGINE_KEYS`), and the
    size and SHA-256 of every input."""
    recorded = {key: value for key, value in declaration.document.items() if key not in ENGINE_KEYS}
    return Provenance(study_file=declaration.study_file, declaration=recorded, inputs=inputs)
