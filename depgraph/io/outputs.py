"""Every write depgraph makes: checked before any is made, committed together, never destructive.

A command's outputs form one :class:`Outputs` plan. Each target is checked when
it is declared, before the command does its work: its directory exists and is
writable, it is not a directory, not one of the command's inputs (same file by
device and inode: ``./a.json``, ``a.json`` and a hard link are one file), not a
block device or a socket. Writers (:func:`atomic_path`) then stage content in
temporary files; nothing reaches a target until every output is staged, and
then all temporary files are renamed into place together. A failure at any
point removes every temporary file and leaves every target as it was.

What each kind of target receives:

* a **regular file** (or a new path) is replaced by a rename, keeping the old
  file's permission bits (and owner and group where the user may set them); a
  new file gets ``0666 & ~umask``. A **symbolic link** stays a link: its target
  is written, with the temporary file beside the target;
* a **FIFO** or a **character device** (``/dev/null``, a terminal) is written
  through, never replaced: the staged content is copied into it once the
  command has succeeded;
* ``-`` is standard output, written the same way;
* a **columnar file** (:meth:`Outputs.tree`: a directory holding a ``manifest.json`` and the tables it lists) is
  staged as a whole temporary directory and renamed into place; an existing one is renamed aside first, then
  removed once every output is in place (put back if any rename fails). Only a directory depgraph wrote is
  replaced: its ``manifest.json`` names a depgraph format and it holds nothing but that manifest and the tables it
  lists (a folder of someone's project that happens to hold a ``manifest.json`` is refused, never deleted); nor is a
  regular file, a device or standard output;
* a **block device**, a **socket** or a directory is refused (``io``) as a file output.

Temporary files (and the temporary directories of columnar files) are named
``.{name}.depgraph-{host}-{pid}-{random}.tmp``. A process killed outright
(SIGKILL) cannot remove its own; the next depgraph write into the same
directory removes those whose process, on this host, is gone.

>>> import tempfile
>>> from pathlib import Path, PurePosixPath
>>> folder = Path(tempfile.mkdtemp())
>>> with Outputs() as plan:
...     plan.file(folder / "a.txt")
...     atomic_write_bytes(folder / "a.txt", b"first")
...     atomic_write_bytes(folder / "b.txt", b"second")
...     sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))  # nothing in place yet
[]
>>> sorted(p.name for p in folder.iterdir())
['a.txt', 'b.txt']
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextvars import ContextVar, Token
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import orjson

from depgraph.common.arguments import path as checked_path
from depgraph.errors import DepgraphError
from depgraph.formats import GRAPH_FORMAT, SPEC_FORMAT

#: The output path that means standard output.
STDOUT = "-"
#: The file that makes a directory a columnar file (a spec's or a graph's): only such a directory is replaced.
COLUMNAR_MANIFEST = "manifest.json"
#: The manifest's field that lists the tables (never part of the document itself, nor of a spec's digest).
TABLES = "tables"

PathLike = str | os.PathLike[str]

#: What a file suffix says a file holds. An output whose suffix says another kind than what is written is refused:
#: a spec named .csv, CSV named .parquet, plain text named .gz (depgraph writes no compressed file).
SUFFIX_KINDS = {".json": "JSON", ".csv": "CSV", ".tsv": "TSV", ".parquet": "Parquet", ".pq": "Parquet",
                ".html": "HTML", ".htm": "HTML", ".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "Zstandard",
                ".zip": "ZIP", ".npy": "NumPy", ".png": "PNG", ".svg": "SVG", ".toml": "TOML",
                ".dgspec": "a columnar split spec", ".dggraph": "a columnar study graph"}  # fmt: skip


def check_suffix(path: PathLike, writes: tuple[str, ...]) -> None:
    """Refuse ``path`` when its suffix says another kind of file than ``writes``; a FIFO or a device that exists is
    written through whatever its name, and ``-`` is standard output."""
    path = Path(path)
    said = SUFFIX_KINDS.get(path.suffix.lower())
    if said is None or said in writes or str(path) == STDOUT or (path.exists() and not path.is_file()):
        return
    raise DepgraphError(
        "invalid_argument",
        f"output {str(path)!r} is named {path.suffix} ({said}) but receives {' or '.join(writes)}: "
        "name it for what it holds",
        path=str(path),
    )


#: Temporary files carry the host (a short hash of its name) and the process id, so
#: that a later write can tell a dead process's leftovers from a live one's.
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
_TEMP_NAME = re.compile(r"\..*\.depgraph-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[0-9a-f]+\.tmp", re.DOTALL)
_NAME_KEPT = 80  # characters of the target's name kept in a temporary file's name (names are limited to 255)
_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)

_ACTIVE: ContextVar[Outputs | None] = ContextVar("depgraph_outputs", default=None)


@dataclass
class _Target:
    shown: str  # the path as the user wrote it: what messages name
    what: str  # "output", "plot directory"...: what messages call it
    kind: str  # "file" (renamed into place), "tree" (a columnar file's directory, renamed into place),
    # "stream" (FIFO, character device: written through), "stdout"
    real: Path  # file: the resolved path the rename goes to; stream: the path opened at commit
    staged: Path | None = None  # the temporary file holding the content, once written


class Outputs:
    """The outputs of one command: checked when declared, staged by writers, committed together.

    ``inputs`` are the command's input paths; an output that is one of them is
    refused. Used as a context manager: on a normal exit every staged file is
    put in place (renames first, all together, then the streams); on an
    exception every staged file is removed and no target is touched. A plan
    opened while another is active joins it, so a writer that makes several
    files (:func:`depgraph.audit.report.save_figures`) commits with its command.

    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "in.json").write_text("{}")
    2
    >>> Outputs([folder / "in.json"]).file(folder / "." / "in.json")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [io] output '...in.json' is also an input of this command: write to another path
    """

    def __init__(self, inputs: Iterable[PathLike | None] = ()) -> None:
        self._inputs: list[tuple[str, tuple[int, int]]] = []
        self._input_paths: list[Path] = []  # resolved, to refuse a columnar output that holds an input
        self._targets: dict[object, _Target] = {}
        self._create: list[Path] = []  # directories made at commit (parents exist)
        self._swept: set[Path] = set()
        self._declared: list[tuple[str, tuple[object, ...]]] = []
        self._outer: Outputs | None = None
        self._token: Token[Outputs | None] | None = None
        for path in inputs:
            if path is not None and str(path) != STDOUT:
                with contextlib.suppress(OSError):  # an input that cannot be read fails when it is read
                    st = os.stat(path)
                    self._inputs.append((str(path), (st.st_dev, st.st_ino)))
                    self._input_paths.append(Path(os.path.realpath(path)))

    # ----------------------------------------------------------------- declaring
    @property
    def writes_stdout(self) -> bool:
        """True when one output is standard output (``-``): messages then belong on stderr."""
        return any(t.kind == "stdout" for t in self._plan()._targets.values())

    def file(self, path: PathLike, what: str = "output", binary: bool = False) -> None:
        """Declare an output file (``-``: standard output); DepgraphError(io) when it cannot be one.

        ``binary`` outputs (Parquet) are refused on a standard output that is a terminal.
        """
        plan = self._plan()
        if plan is not self:
            plan.file(path, what, binary)
            return
        self._declared.append(("file", (path, what, binary)))
        self._target(path, what, binary)

    def directory(self, path: PathLike, what: str = "output directory", create: bool = False) -> None:
        """Declare a directory outputs go into; ``create``: made at commit when it does not exist yet."""
        plan = self._plan()
        if plan is not self:
            plan.directory(path, what, create)
            return
        self._declared.append(("directory", (path, what, create)))
        shown = str(path)
        if shown == STDOUT:
            raise DepgraphError("io", f"{what} cannot be standard output ('-'): name a directory", path=shown)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if not create:
                raise DepgraphError("io", f"{what} {shown!r} does not exist", path=shown) from None
            real = Path(os.path.realpath(path))
            self._check_directory(real.parent, Path(path).parent, "output directory")
            if real not in self._create:
                self._create.append(real)
            return
        except OSError as exc:
            raise _unusable(what, shown, exc) from exc
        if not stat.S_ISDIR(st.st_mode):
            raise DepgraphError("io", f"{what} {shown!r} exists and is not a directory", path=shown)
        if not os.access(path, os.W_OK | os.X_OK):
            raise DepgraphError("io", f"{what} {shown!r} is not writable", path=shown)

    def tree(self, path: PathLike, what: str = "output") -> None:
        """Declare a columnar file: a directory written whole (its ``manifest.json`` and tables), replacing an
        earlier columnar file at ``path``; DepgraphError(io) when it cannot be one."""
        plan = self._plan()
        if plan is not self:
            plan.tree(path, what)
            return
        self._declared.append(("tree", (path, what)))
        self._tree_target(path, what)

    def _plan(self) -> Outputs:
        return self._outer._plan() if self._outer is not None else self

    def _target(self, path: PathLike, what: str, binary: bool = False) -> _Target:
        """The checked target of ``path`` (checked once per plan)."""
        shown = str(checked_path(path, what))  # never an int: os.stat would take it for a file descriptor
        if shown == STDOUT:
            if binary and _is_terminal(sys.stdout):
                raise DepgraphError(
                    "io",
                    "standard output is a terminal: binary output (Parquet) is not written to it; redirect it"
                    " or name a file",
                )
            return self._targets.setdefault(("stdout",), _Target(shown, what, "stdout", Path(STDOUT)))
        try:
            st: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            st = None
        except OSError as exc:  # ENOTDIR (a file on the way), ELOOP, EACCES
            raise _unusable(what, shown, exc) from exc
        if st is None:
            real = Path(os.path.realpath(path))
            shown_parent = real.parent if os.path.islink(path) else Path(path).parent
            self._check_directory(real.parent, shown_parent, "output directory")
            return self._targets.setdefault(("new", str(real)), _Target(shown, what, "file", real))
        for input_shown, identity in self._inputs:
            if identity == (st.st_dev, st.st_ino):
                which = "also an input of this command" if input_shown == shown else f"the input {input_shown!r}"
                raise DepgraphError("io", f"{what} {shown!r} is {which}: write to another path", path=shown)
        key = (st.st_dev, st.st_ino)
        if key in self._targets:
            return self._targets[key]
        mode = st.st_mode
        if stat.S_ISREG(mode):
            real = Path(os.path.realpath(path))
            if not os.access(real, os.W_OK):
                raise DepgraphError("io", f"{what} {shown!r} is read-only: depgraph does not replace it", path=shown)
            self._check_directory(real.parent, real.parent, "output directory")
            target = _Target(shown, what, "file", real)
        elif stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
            if not os.access(path, os.W_OK):
                raise DepgraphError("io", f"{what} {shown!r} is not writable", path=shown)
            target = _Target(shown, what, "stream", Path(path))
        elif stat.S_ISDIR(mode):
            raise DepgraphError("io", f"{what} {shown!r} is a directory", path=shown)
        else:
            kind = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file"
            raise DepgraphError(
                "io",
                f"{what} {shown!r} is {kind}: depgraph writes to regular files, FIFOs and character devices only",
                path=shown,
            )
        self._targets[key] = target
        return target

    def _tree_target(self, path: PathLike, what: str) -> _Target:
        """The checked target of a columnar file at ``path`` (checked once per plan)."""
        shown = str(checked_path(path, what))
        if shown == STDOUT:
            raise DepgraphError(
                "io",
                f"a columnar {what} is a directory of files: it cannot be standard output ('-'); name a path (the "
                "samples table as one Parquet file: export --to samples-table)",
                path=shown,
            )  # fmt: skip
        real = Path(os.path.realpath(path))
        try:
            st: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise _unusable(what, shown, exc) from exc
        if st is None:
            self._check_directory(real.parent, real.parent if os.path.islink(path) else Path(path).parent,
                                  "output directory")  # fmt: skip
            return self._targets.setdefault(("new", str(real)), _Target(shown, what, "tree", real))
        for input_shown, identity in self._inputs:
            if identity == (st.st_dev, st.st_ino):
                which = "also an input of this command" if input_shown == shown else f"the input {input_shown!r}"
                raise DepgraphError("io", f"{what} {shown!r} is {which}: write to another path", path=shown)
        for input_real in self._input_paths:
            if input_real.is_relative_to(real):
                raise DepgraphError(
                    "io",
                    f"{what} {shown!r} holds {str(input_real)!r}, an input of this command: write to another path",
                    path=shown,
                )
        key = (st.st_dev, st.st_ino)
        if key in self._targets:
            return self._targets[key]
        if not stat.S_ISDIR(st.st_mode):
            raise DepgraphError(
                "io",
                f"{what} {shown!r} is {_kind_of(st.st_mode)}, not a directory: a columnar file is a directory of "
                "files, written whole; name a new path",
                path=shown,
            )
        if not (real / COLUMNAR_MANIFEST).is_file():
            raise DepgraphError(
                "io",
                f"{what} {shown!r} is a directory without a {COLUMNAR_MANIFEST}: depgraph replaces only a columnar "
                "file it wrote; name another path",
                path=shown,
            )
        problem = not_a_columnar_file(real)
        if problem is not None:
            raise DepgraphError(
                "io", f"{what} {shown!r} {problem}: depgraph replaces only a columnar file it wrote; name another path",
                path=shown,
            )  # fmt: skip
        if not os.access(real, os.W_OK | os.X_OK):
            raise DepgraphError("io", f"{what} {shown!r} is read-only: depgraph does not replace it", path=shown)
        self._check_directory(real.parent, real.parent, "output directory")
        target = self._targets[key] = _Target(shown, what, "tree", real)
        return target

    def _check_directory(self, real: Path, shown: Path, what: str) -> None:
        """The directory a new file goes into exists (or is made by this plan) and is writable."""
        if real in self._create:
            return
        text = str(shown) if str(shown) else "."
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise DepgraphError("io", f"{what} {text!r} does not exist", path=text) from None
        except OSError as exc:
            raise _unusable(what, text, exc) from exc
        if not stat.S_ISDIR(st.st_mode):
            raise DepgraphError("io", f"{what} {text!r} is a file, not a directory", path=text)
        if not os.access(real, os.W_OK | os.X_OK):
            raise DepgraphError("io", f"{what} {text!r} is not writable", path=text)

    # ----------------------------------------------------------------- staging
    @contextlib.contextmanager
    def stage(self, path: PathLike, what: str = "output") -> Iterator[Path]:
        """A temporary path to write the content of ``path`` into; put in place when the plan commits."""
        plan = self._plan()
        target = plan._target(path, what)
        if target.staged is not None:
            raise DepgraphError("io", f"{target.what} {target.shown!r} is written twice by one command")
        if target.kind == "file":
            directory = target.real.parent
            if directory in plan._create:  # a directory made at commit: stage beside it
                directory = directory.parent
        else:
            directory = Path(tempfile.gettempdir())
        if directory not in plan._swept:
            plan._swept.add(directory)
            remove_stale_temps(directory)
        try:
            tmp = _new_temp(directory, target.real.name if target.kind != "stdout" else "stdout", target)
        except OSError as exc:
            raise _unwritable(target, exc) from exc
        with _removed_on_failure(tmp, target):
            yield tmp
            if target.kind == "file":
                _fsync(tmp)
        target.staged = tmp

    @contextlib.contextmanager
    def stage_tree(self, path: PathLike, what: str = "output") -> Iterator[Path]:
        """A temporary directory to write the columnar file ``path`` into; put in place when the plan commits."""
        plan = self._plan()
        target = plan._tree_target(path, what)
        if target.staged is not None:
            raise DepgraphError("io", f"{target.what} {target.shown!r} is written twice by one command")
        directory = target.real.parent
        if directory not in plan._swept:
            plan._swept.add(directory)
            remove_stale_temps(directory)
        tmp = _new_temp_directory(directory, target.real.name, target)
        with _removed_on_failure(tmp, target):
            yield tmp
            for entry in tmp.rglob("*"):
                if entry.is_file():
                    _fsync(entry)
        target.staged = tmp

    def staged(self, path: PathLike) -> Path:
        """Where the content written for ``path`` in this plan waits for the commit (to read back what was
        written, as ``depgraph run`` reads a spec Spark wrote); ``io`` when nothing was written for it."""
        real = Path(os.path.realpath(path))
        for target in self._plan()._targets.values():
            if target.real == real and target.staged is not None:
                return target.staged
        raise DepgraphError("io", f"nothing was written for {str(path)!r} in this command")

    # ----------------------------------------------------------------- committing
    def __enter__(self) -> Outputs:
        outer = _ACTIVE.get()
        if outer is not None:  # join the command's plan: it commits everything together
            self._outer = outer
            for kind, args in self._declared:
                getattr(outer, kind)(*args)
            outer._inputs.extend(self._inputs)
            outer._input_paths.extend(self._input_paths)
            return self
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._outer is not None:
            return
        assert self._token is not None
        _ACTIVE.reset(self._token)
        if exc_type is None:
            self._commit()
        else:
            self._discard()

    def _discard(self) -> None:
        for target in self._targets.values():
            if target.staged is not None:
                _remove(target.staged)
                target.staged = None

    def _commit(self) -> None:
        """Renames first, all together and undone together on failure; then the streams."""
        files = [t for t in self._targets.values() if t.kind in ("file", "tree") and t.staged is not None]
        streams = [t for t in self._targets.values() if t.kind in ("stream", "stdout") and t.staged is not None]
        made: list[Path] = []
        done: list[tuple[_Target, Path | None, bool]] = []  # target, backup of the old file, existed before
        with _signals_held():  # SIGINT/SIGTERM wait until every rename is done (microseconds)
            try:
                for directory in self._create:
                    if not directory.is_dir():
                        try:
                            os.mkdir(directory)
                        except OSError as exc:
                            reason = exc.strerror or type(exc).__name__
                            raise DepgraphError(
                                "io", f"output directory {str(directory)!r} cannot be made: {reason}"
                            ) from exc
                        made.append(directory)
                for target in files:
                    assert target.staged is not None
                    existed = os.path.lexists(target.real)
                    backup = _place(target, existed, several=len(files) > 1)
                    target.staged = None
                    done.append((target, backup, existed))
            except BaseException:
                # put back what was replaced, remove what was new: the outputs stay as they were
                for target, backup, existed in reversed(done):
                    with contextlib.suppress(OSError):
                        if target.kind == "tree" and (backup is not None or not existed):
                            _remove(target.real)  # a directory is not replaced by a rename: cleared first
                        if backup is not None:
                            os.replace(backup, target.real)
                        elif not existed:
                            _remove(target.real)
                done.clear()
                for directory in reversed(made):
                    with contextlib.suppress(OSError):
                        os.rmdir(directory)
                self._discard()
                raise
            finally:
                for _, backup, _ in done:
                    if backup is not None:
                        _remove(backup)
        for directory in {t.real.parent for t in files}:
            _fsync_directory(directory)
        try:
            for target in streams:
                _pour(target)
        finally:
            self._discard()


# --------------------------------------------------------------------------- writers' entry points
@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s content into; put in place only on success.

    Within a command's :class:`Outputs` plan the content waits for the plan to
    commit; alone, it is put in place when the block ends. On any exception the
    temporary file is removed and ``path`` is untouched.
    """
    with Outputs() as plan, plan.stage(path) as tmp:
        yield tmp


def hidden(name: str) -> bool:
    """Files a reader of a columnar file passes over (and a writer replaces with it): hidden ones (a desktop's
    ``.DS_Store``), Hadoop's markers (``_SUCCESS``) and checksums (``.crc``)."""
    return name.startswith((".", "_")) or name.endswith(".crc")


def not_a_columnar_file(directory: Path) -> str | None:
    """Why ``directory``, which holds a ``manifest.json``, is not a columnar file depgraph wrote (None when it is):
    the manifest names no depgraph format, or lists no tables, or the directory holds something the manifest does
    not list, files a reader passes over (:func:`hidden`) aside (checked before an output replaces it: what is not
    depgraph's is never deleted)."""
    try:
        manifest = orjson.loads((directory / COLUMNAR_MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") not in (GRAPH_FORMAT, SPEC_FORMAT):
        return f"holds a {COLUMNAR_MANIFEST} that is not a depgraph graph's or spec's"
    tables = manifest.get(TABLES)
    if not isinstance(tables, dict) or not all(isinstance(t, str) for t in tables):
        return f"holds a {COLUMNAR_MANIFEST} that lists no tables"
    listed = {PurePosixPath(t) for t in tables}
    folders = {parent for t in listed for parent in t.parents}  # nodes/, edges/ (and the top itself)
    for entry in sorted(directory.rglob("*")):
        name = PurePosixPath(entry.relative_to(directory).as_posix())
        if name == PurePosixPath(COLUMNAR_MANIFEST) or name in listed or name in folders or hidden(name.name):
            continue
        if any(table in name.parents for table in listed):  # a part of a table written as a directory of parts
            continue
        return f"holds {str(name)!r}, which is not one of the tables its {COLUMNAR_MANIFEST} lists"
    return None


@contextlib.contextmanager
def atomic_tree(path: PathLike) -> Iterator[Path]:
    """Yield a temporary directory to write the columnar file ``path`` into; put in place only on success (within
    a command's plan, when it commits), replacing an earlier columnar file there."""
    with Outputs() as plan, plan.stage_tree(path) as tmp:
        yield tmp


def atomic_write_bytes(path: PathLike, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or pieces written one after another, never
    joined in memory) to ``path`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        if isinstance(data, (bytes, bytearray, memoryview)):
            handle.write(data)
        else:
            handle.writelines(data)


def remove_stale_temps(directory: PathLike) -> list[Path]:
    """Remove the temporary files left in ``directory`` by depgraph processes of this host that are gone.

    A process killed with SIGKILL cannot clean up after itself; its temporary
    files name its process id, so the next write into the directory removes
    them. Files of live processes, and of other hosts, are left alone.
    """
    if os.name != "posix":
        return []
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        found = _TEMP_NAME.fullmatch(entry.name)
        if found is None or found["host"] != _HOST or _alive(int(found["pid"])):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):  # a columnar file's staging directory, or a renamed-aside one
                shutil.rmtree(entry.path)
                removed.append(Path(entry.path))
    return removed


# --------------------------------------------------------------------------- helpers
def _new_temp(directory: Path, name: str, target: _Target) -> Path:
    """A new temporary file in ``directory``, with the permission bits the target will have."""
    existing = os.stat(target.real) if target.kind == "file" and target.real.exists() else None
    prefix = f".{name[:_NAME_KEPT]}.depgraph-{_HOST}-{os.getpid()}-"
    while True:
        tmp = directory / f"{prefix}{secrets.token_hex(4)}.tmp"
        try:
            # a new file: 0666 minus the umask (and any default ACL), as the kernel makes it; a replacement
            # starts private and takes the old file's bits before any byte is written
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666 if existing is None else 0o600)
        except FileExistsError:
            continue
        break
    try:
        if existing is not None:
            if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only where the user may set them
                    os.fchown(fd, existing.st_uid, existing.st_gid)
            os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _backup(target: _Target) -> Path | None:
    """A hard link to the file about to be replaced, so a failed commit can put it back (None: cannot link)."""
    prefix = f".{target.real.name[:_NAME_KEPT]}.depgraph-{_HOST}-{os.getpid()}-"
    backup = target.real.parent / f"{prefix}{secrets.token_hex(4)}.tmp"
    try:
        os.link(target.real, backup)
    except OSError:
        return None
    return backup


@contextlib.contextmanager
def _removed_on_failure(tmp: Path, target: _Target) -> Iterator[None]:
    """The block writes the staged ``tmp`` (a file or a directory); if it fails, ``tmp`` is removed, and an
    OSError is told as ``target`` that cannot be written."""
    try:
        yield
    except OSError as exc:
        _remove(tmp)
        raise _unwritable(target, exc) from exc
    except BaseException:
        _remove(tmp)
        raise


def _kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISBLK, "a block device"), (stat.S_ISCHR,
                       "a character device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return kind
    return "not a directory"


def _place(target: _Target, existed: bool, several: bool) -> Path | None:
    """Rename ``target``'s staged content into place; return the backup of what it replaced (None: nothing kept).

    A file replaces the old one in one rename (a hard link keeps the old for a rollback when several outputs
    commit together); a columnar file's directory cannot replace a directory in one rename, so the old one is
    renamed aside first, and back if the new one cannot be put in place."""
    assert target.staged is not None
    if target.kind == "tree":
        if existed and not stat.S_ISDIR(os.lstat(target.real).st_mode):  # changed since it was checked
            raise DepgraphError("io", f"{target.what} {target.shown!r} is no longer a directory", path=target.shown)
        backup = _new_temp_name(target.real.parent, target.real.name) if existed else None
        try:
            if backup is not None:
                os.rename(target.real, backup)
            os.rename(target.staged, target.real)
        except OSError as exc:
            if backup is not None and not os.path.lexists(target.real):
                with contextlib.suppress(OSError):
                    os.rename(backup, target.real)
            raise _unwritable(target, exc) from exc
        return backup
    if existed and not stat.S_ISREG(os.lstat(target.real).st_mode):  # changed since it was checked
        raise DepgraphError("io", f"{target.what} {target.shown!r} is no longer a regular file", path=target.shown)
    backup = _backup(target) if existed and several else None
    try:
        os.replace(target.staged, target.real)
    except OSError as exc:
        if backup is not None:
            _unlink(backup)
        raise _unwritable(target, exc) from exc
    return backup


def _new_temp_name(directory: Path, name: str) -> Path:
    """A path for a temporary file or directory in ``directory`` that nothing holds yet."""
    prefix = f".{name[:_NAME_KEPT]}.depgraph-{_HOST}-{os.getpid()}-"
    while True:
        candidate = directory / f"{prefix}{secrets.token_hex(4)}.tmp"
        if not os.path.lexists(candidate):
            return candidate


def _new_temp_directory(directory: Path, name: str, target: _Target) -> Path:
    """A new temporary directory in ``directory`` for a columnar file, with the permission bits the one it
    replaces has (a new one: ``0777 & ~umask``)."""
    existing = os.stat(target.real) if target.real.is_dir() else None
    while True:
        tmp = _new_temp_name(directory, name)
        try:
            os.mkdir(tmp, 0o777 if existing is None else 0o700)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _unwritable(target, exc) from exc
        break
    if existing is not None:
        with contextlib.suppress(OSError):
            os.chmod(tmp, stat.S_IMODE(existing.st_mode))
    return tmp


def _remove(path: Path) -> None:
    """Remove a temporary file or directory (a directory with what it holds)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        _unlink(path)


def _pour(target: _Target) -> None:
    """Copy the staged content into a stream (standard output, a FIFO, a character device)."""
    assert target.staged is not None
    try:
        with open(target.staged, "rb") as source:
            if target.kind == "stdout":
                sink = getattr(sys.stdout, "buffer", None)
                if sink is None:
                    raise DepgraphError("io", "standard output does not take bytes here: name a file with -o")
                sys.stdout.flush()
                shutil.copyfileobj(source, sink)
                sink.flush()
                return
            # no O_CREAT: a device that vanished is an error, never a new regular file
            fd = os.open(target.real, os.O_WRONLY | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
            with open(fd, "wb") as sink:
                mode = os.fstat(sink.fileno()).st_mode
                if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
                    raise DepgraphError(
                        "io", f"{target.what} {target.shown!r} is no longer a FIFO or a character device"
                    )
                shutil.copyfileobj(source, sink)
    except OSError as exc:
        raise _unwritable(target, exc) from exc


def _unwritable(target: _Target, exc: OSError) -> DepgraphError:
    if exc.errno == errno.EPIPE:
        reason = "it was closed before everything was written"
    else:
        reason = exc.strerror or type(exc).__name__
    name = "standard output" if target.kind == "stdout" else f"{target.what} {target.shown!r}"
    return DepgraphError("io", f"{name} cannot be written: {reason}", path=target.shown)


def _unusable(what: str, shown: str, exc: OSError) -> DepgraphError:
    if exc.errno == errno.ENOTDIR:
        reason = "a part of its directory is a file, not a directory"
    elif exc.errno == errno.ELOOP:
        reason = "its symbolic links loop"
    else:
        reason = exc.strerror or type(exc).__name__
    return DepgraphError("io", f"{what} {shown!r} cannot be used: {reason}", path=shown)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists here (when unsure: yes, so its files are kept)."""
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):  # EPERM: alive, someone else's
        return True
    return True


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait for the end of the block (then act as usual)."""
    if not hasattr(signal, "pthread_sigmask") or not _SIGNALS:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Make the renames durable; some file systems cannot sync a directory, which is no error."""
    with contextlib.suppress(OSError):
        _fsync(directory)


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
