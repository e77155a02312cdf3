"""The ``depgraph`` command.

Exit codes: 0 ok, 1 findings (validation errors), 2 bad input (one line on
stderr: ``depgraph: <code>: <what is wrong and where>``), 130 / 143 interrupted
by SIGINT / SIGTERM (one line, ``depgraph: interrupted``). Nothing is written
when a command fails or is interrupted: each command checks all its outputs
before its work and commits them together at the end (:mod:`depgraph.io.outputs`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import inspect
import math
import os
import re
import signal
import sys
import textwrap
import threading
import typing
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from depgraph.adapters.frames import TABLE_FORMATS, fold_table, samples_table, table_format, write_table
from depgraph.adapters.splitgraph import read_splitgraph, write_splitgraph_graph, write_splitgraph_spec
from depgraph.audit.duplicates import audit_duplicates
from depgraph.audit.evaluation import evaluate
from depgraph.audit.exposure import ExposureReport, exposure, straddling_groups
from depgraph.audit.report import figures, save_figures, write_report
from depgraph.common.identifiers import formula_like
from depgraph.derivation.groups import Partition, derive, selected_samples
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.folds.parameters import PARAMETERS, PARAMETERS_BY_NAME, Parameter
from depgraph.folds.schemes import SCHEMES, FoldScheme, assign_folds, canonical_scheme_name, schemes_taking
from depgraph.formats import GRAPH_FORMAT, SPEC_FORMAT
from depgraph.graph.files import graph_from_document, read_graph, write_graph
from depgraph.graph.model import StudyGraph
from depgraph.ingest.builders import add_duplicates, add_kinship, add_spatial
from depgraph.ingest.metadata import from_metadata, no_grouping_message
from depgraph.io.delimited import checked_encoding, not_utf8, to_utf8
from depgraph.io.files import describe_source, read_bytes, read_json, read_table
from depgraph.io.outputs import Outputs
from depgraph.io.schemas import json_kind
from depgraph.spec.diff import compare_specs
from depgraph.spec.files import read_spec, spec_from_document, write_spec
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import DEFAULT_KEY_ENV, key_from_env, pseudonymize
from depgraph.validation.rules import ValidationReport, validate
from depgraph.version import __version__
from depgraph.vocab import CANONICAL_COLUMNS, MODE

# Output shows ids and file names, which may look like rich markup ("P[/y]1"): markup is off, and the few styled
# words are styled by Text spans (see styled), never by markup in a string.
out = Console(highlight=False, soft_wrap=True, markup=False)
progress_console = Console(stderr=True)
#: Stages show a spinner with elapsed time once they have run this long (seconds), on terminals only.
PROGRESS_DELAY = 2.0


@contextlib.contextmanager
def stage(label: str) -> Iterator[None]:
    """A transient progress line for a stage that takes a while; silent when not on a terminal."""
    if not progress_console.is_terminal:
        yield
        return
    bar = Progress(SpinnerColumn(), TextColumn(label), TimeElapsedColumn(), console=progress_console, transient=True)
    bar.add_task(label, total=None)
    timer = threading.Timer(PROGRESS_DELAY, bar.start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        bar.stop()


MODE_NAMES = ", ".join(MODE)


# --------------------------------------------------------------------------- the command line as typed
#: Options naming a file a command writes: a trailing '/' names a directory, never the file.
FILE_OUTPUTS = frozenset({"output"})
#: Options naming a directory a command writes into.
DIRECTORY_OUTPUTS = frozenset({"output_dir", "plots_dir"})


#: Old spellings that still work for one minor version, with a warning naming the new one.
DEPRECATED = {"--ids-column": "--id-column", "--n-folds": "-k/--n-splits", "--folds": "-k/--n-splits"}
#: The release that drops the deprecated spellings: the next minor version.
DROPPED_IN = "{}.{}".format(*(lambda v: (v[0], int(v[1]) + 1))(__version__.split(".")))
#: What goes where an option takes a value, as the help shows it (never a Python type such as <str>).
METAVARS = {
    "output": "FILE", "kinship": "FILE", "coords": "FILE", "duplicates": "FILE", "samples": "FILE",
    "output_dir": "DIR", "plots_dir": "DIR", "graph_file": "GRAPH.json",
    "kinship_threshold": "X|DEGREE", "kinship_format": "FORMAT", "id_template": "TEMPLATE", "radius": "R",
    "column": "CANONICAL=COL", "unknown": "error|ignore", "outcome_scope": "sample|subject", "name": "TEXT",
    "n_splits": "K", "verify_key_env": "VAR", "key_env": "VAR", "sign_key_env": "VAR",
    "mode": "MODE", "strategy": "strict|rule-based", "via": "MODES", "priority": "MODES", "min_groups": "N",
    "attributes": "COLS|all", "to": "FORMAT", "source": "FORMAT", "splitgraph_version": "VERSION", "limit": "N",
    "scheme": "SCHEME", "id_column": "COL", "split_column": "COL", "threshold": "X",
    "method": "auto|exact|lsh", "metadata": "METADATA", "file": "FILE.json",
}  # fmt: skip


class Command(typer.core.TyperCommand):
    """A depgraph command. Before typer converts any value, the command line as typed is checked for what a parser
    resolves without a word (:func:`check_command_line`), and a deprecated spelling is told. Its help is plain text
    that fits the terminal: option names whole, metavars that say what goes there (:data:`METAVARS`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is None and param.name in METAVARS:
                param.metavar = METAVARS[param.name]

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if args:
            args = _old_import_form(self, ctx, list(args))
            check_command_line(self, ctx, args)
            _tell_deprecated(args)
        return super().parse_args(ctx, args)

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        params = [p for p in self.get_params(ctx) if not p.hidden]
        arguments = [p for p in params if p.param_type_name == "argument"]
        usage = ["[OPTIONS]", *(p.display_name_raw if p.required else f"[{p.display_name_raw}]" for p in arguments)]
        sections = {
            "Arguments": [(p.display_name_raw, p.help or "") for p in arguments],
            "Options": [_option_help(p) for p in params if p.param_type_name == "option"],
        }
        formatter.write(help_page(f"{ctx.command_path} {' '.join(usage)}", self.help, sections, formatter.width))

    def get_short_help_str(self, limit: int = 45) -> str:
        """The command's line in ``depgraph --help``: its first sentence, whole (the list wraps it)."""
        return (self.short_help or (self.help or "").split(". ")[0].split("\n\n")[0]).rstrip(".")


class Group(typer.core.TyperGroup):
    """``depgraph`` itself: its help as plain text that fits the terminal, like its commands' (:func:`help_page`)."""

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        options = [_option_help(p) for p in self.get_params(ctx) if not p.hidden]
        commands = [(name, self.commands[name].get_short_help_str()) for name in self.list_commands(ctx)]
        page = help_page(f"{ctx.command_path} [OPTIONS] COMMAND [ARGS]...", self.help, {"Options": options,
                         "Commands": commands}, formatter.width)  # fmt: skip
        formatter.write(page)


app = typer.Typer(
    name="depgraph",
    help="Declare what must never be split between training and evaluation data; derive leakage-free groups.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=Group,
)


def help_page(usage: str, text: str | None, sections: dict[str, list[tuple[str, str]]], width: int) -> str:
    """A help page ``width`` columns wide: names whole (a long one puts its description on the next line), text
    wrapped between words only (never inside ``--allow-unlinked`` or ``group-kfold``).

    >>> print(help_page("depgraph x [OPTIONS]", "Does x.", {"Options": [("--flag", "A flag.")]}, 40))
    Usage: depgraph x [OPTIONS]
    <BLANKLINE>
      Does x.
    <BLANKLINE>
    Options:
      --flag  A flag.
    <BLANKLINE>
    """
    lines = [*_wrap(f"Usage: {usage}", width, "", " " * 7), ""]
    for paragraph in inspect.cleandoc(text or "").split("\n\n"):
        if paragraph.strip():
            lines += [*_wrap(paragraph, width, "  "), ""]
    for title, rows in sections.items():
        if not rows:
            continue
        lines.append(f"{title}:")
        column = min(max(len(name) for name, _ in rows), 30)
        for name, description in rows:
            said = _wrap(description, width, " " * (column + 4)) or [""]
            if len(name) <= column:
                lines.append(f"  {name.ljust(column)}  {said[0].lstrip()}".rstrip())
                lines += said[1:]
            else:
                lines += [f"  {name}", *(said if description else [])]
        lines.append("")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int, indent: str, subsequent: str | None = None) -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()), width=width, initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent, break_on_hyphens=False,
        break_long_words=False,
    )  # fmt: skip


def _canonical(name: str, joiner: str) -> str:
    """A mode, strategy, scheme or format name as depgraph spells it: ``rule-based`` and ``rule_based`` are one
    name (``joiner`` is the one depgraph uses), in any case."""
    return name.strip().lower().replace("_" if joiner == "-" else "-", joiner)


def _shown(opts: list[str]) -> list[str]:
    return [o for o in opts if o not in DEPRECATED]


def _option_help(param: Any) -> tuple[str, str]:
    """``-o, --output FILE`` and its help with its default, as the help lists an option."""
    names = ", ".join(sorted(_shown(param.opts), key=len))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not param.is_flag:
        names += f" {param.metavar}"
    notes = []
    if not param.is_flag and param.default not in (None, "") and not param.multiple and param.show_default is not False:
        notes.append(f"default: {param.default}")
    if param.required:
        notes.append("required")
    return names, " ".join([param.help or "", f"[{'; '.join(notes)}]" if notes else ""]).strip()


def _old_import_form(command: typer.core.TyperCommand, ctx: typer.Context, args: list[str]) -> list[str]:
    """``import splitgraph FILE`` (deprecated) read as ``import --from splitgraph FILE``, with its warning."""
    if command.name != "import" or any(a == "--help" for a in args):
        return args
    opts, extra, _ = command.make_parser(ctx).parse_args(args=list(args))
    given = opts.get("file")
    if not extra or opts.get("source") is not None or not isinstance(given, str) or "." in given:
        return args  # the new form, or a mistake the parser names
    deprecated(f"import {given} FILE", f"import --from {given} FILE")
    rest = list(args)
    rest.remove(given)
    return ["--from", given, *rest]


def _tell_deprecated(args: list[str]) -> None:
    for typed in dict.fromkeys(a.split("=", 1)[0] for a in args if a.startswith("--")):
        if typed in DEPRECATED:
            deprecated(typed, DEPRECATED[typed])


def deprecated(old: str, new: str) -> None:
    """Tell (a ``deprecated`` warning, one line on stderr once the command is done) that ``old`` is now ``new``."""
    warnings.warn(
        DepgraphWarning("deprecated", f"{old} is now {new}; the old spelling goes in {DROPPED_IN}"), stacklevel=2
    )


def check_command_line(command: typer.core.TyperCommand, ctx: typer.Context, args: list[str]) -> None:
    """Refuse (``invalid_argument``, or ``io`` for an output path) what a parser would silently resolve:

    * an option given twice (``-k 2 -k 3``, ``--train-after --no-train-after``): the parser keeps the last one;
    * an empty value (``-o ""`` is the current directory to pathlib, ``--attributes ""`` carries nothing);
    * a value that is one of the command's options (``-o --allow-unlinked`` would write a file of that name and
      drop the flag);
    * an output path beginning with ``-`` other than ``-`` itself (write ``./-name`` for such a file);
    * an output file path ending with ``/`` (pathlib drops the slash: ``-o results/`` would write a file named
      ``results``).

    ``--help`` anywhere shows the help instead. Parsing errors (an unknown option) are the parser's own.
    """
    opts, _, order = command.make_parser(ctx).parse_args(args=list(args))  # the parser consumes the list it gets
    if any(p.name == "help" for p in order):
        return
    spellings = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if p.param_type_name == "option"}
    seen: dict[str, int] = {}
    for param in order:
        if param.param_type_name == "option" and not param.multiple and not getattr(param, "count", False):
            seen[param.name] = seen.get(param.name, 0) + 1
            if seen[param.name] == 2:
                raise DepgraphError(
                    "invalid_argument",
                    f"{_spelt(param)} is given more than once; give it once (the last would win without a word)",
                    option=_spelt(param),
                )
    for param in dict.fromkeys(order):
        if param.param_type_name == "option" and param.is_flag:
            continue
        given = opts.get(param.name)
        for value in given if isinstance(given, list) else [given]:
            if isinstance(value, str):
                _check_value(param, value, spellings)


def _spelt(param: Any) -> str:
    """How the user spells ``param``: ``--output/-o``, ``--train-after/--no-train-after``, ``SPEC.json``."""
    if param.param_type_name == "argument":
        return str(param.display_name_raw)
    return "/".join((*_shown(param.opts), *param.secondary_opts))


def _names_path(param: Any) -> bool:
    return getattr(param.type_descriptor, "annotation", None) in (Path, Path | None)


def _check_value(param: Any, value: str, spellings: set[str]) -> None:
    name = _spelt(param)
    # a value of spaces is refused where it names a file; elsewhere (a one-character separator, say) it may be meant
    if value == "" or (not value.strip() and _names_path(param)):
        raise DepgraphError("invalid_argument", f"{name} is given an empty value {value!r}", option=name)
    if param.param_type_name == "option" and value in spellings:
        raise DepgraphError(
            "invalid_argument",
            f"{name} takes a value, but is followed by the option {value}: give {name} its value first",
            option=name,
        )
    if param.name in FILE_OUTPUTS | DIRECTORY_OUTPUTS and value.startswith("-") and value != "-":
        raise DepgraphError(
            "invalid_argument",
            f"{name} {value!r} begins with '-' like an option; for a file of that name write ./{value}",
            option=name,
        )
    if param.name in FILE_OUTPUTS and value.endswith(("/", os.sep)):
        raise DepgraphError(
            "io",
            f"output {value!r} ends with '/', which names a directory; name the file to write (e.g. {value}out.json)",
            path=value,
        )


# --------------------------------------------------------------------------- helpers
#: What a file suffix says a file holds. An output whose suffix says another kind than what the command writes is
#: refused: a spec named .csv, CSV named .parquet, plain text named .gz (depgraph writes no compressed file).
SUFFIX_KINDS = {".json": "JSON", ".csv": "CSV", ".tsv": "TSV", ".parquet": "Parquet", ".pq": "Parquet",
                ".html": "HTML", ".htm": "HTML", ".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "Zstandard",
                ".zip": "ZIP", ".npy": "NumPy", ".png": "PNG", ".svg": "SVG"}  # fmt: skip


def _outputs(
    *files: Path | None, writes: tuple[str, ...] | None, inputs: tuple[Path | None, ...] = (), binary: bool = False
) -> Outputs:
    """The command's outputs plan, every file checked now, before any work; ``-`` is standard output,
    and then what depgraph says to the user goes to stderr so that stdout carries the data only. ``writes``: the
    kinds (:data:`SUFFIX_KINDS` values) the files receive; a suffix naming another kind is refused (``None``: the
    command checks the suffixes itself, later)."""
    plan = Outputs(inputs)
    for path in files:
        if path is not None:
            plan.file(path, binary=binary)  # what the path is (an input, a device, a directory) comes first
            if writes is not None:
                _check_suffix(path, writes)
    if plan.writes_stdout:
        out.stderr = True  # reset by main()
    return plan


def _check_suffix(path: Path, writes: tuple[str, ...]) -> None:
    """Refuse ``path`` when its suffix says another kind of file than ``writes``; a FIFO or a device that exists is
    written through whatever its name, and ``-`` is standard output."""
    said = SUFFIX_KINDS.get(path.suffix.lower())
    if said is None or said in writes or str(path) == "-" or (path.exists() and not path.is_file()):
        return
    raise DepgraphError(
        "invalid_argument",
        f"output {str(path)!r} is named {path.suffix} ({said}) but receives {' or '.join(writes)}: "
        "name it for what it holds",
        path=str(path),
    )


def _column_map(pairs: list[str] | None) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in pairs or []:
        canonical, sep, user = item.partition("=")
        if not sep or not canonical.strip() or not user.strip():
            raise DepgraphError("invalid_argument", f"--column takes canonical=user_column, got {item!r}")
        if canonical.strip() not in CANONICAL_COLUMNS:
            raise DepgraphError(
                "invalid_argument",
                f"--column {item!r}: {canonical.strip()!r} is not a canonical column "
                f"({describe_ids(CANONICAL_COLUMNS, 20)})",
            )
        if canonical.strip() in mapping:
            raise DepgraphError(
                "invalid_argument",
                f"--column maps {canonical.strip()} twice ({mapping[canonical.strip()]!r}, {user.strip()!r}); "
                "map each canonical column once",
            )
        mapping[canonical.strip()] = user.strip()
    return mapping


def _name_list(text: str | None, option: str) -> list[str] | None:
    """``a,b`` as ``["a", "b"]`` (the callee checks the names); a list with no name, or naming one twice, is
    refused: ``--via subject,subject`` or ``--balance ,`` say something else than the user meant."""
    if text is None:
        return None
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise DepgraphError("invalid_argument", f"{option} {text!r} lists no name", option=option)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DepgraphError(
            "invalid_argument", f"{option} names {describe_ids(repeated)} more than once", option=option
        )
    return names


def _number_list(text: str, option: str) -> list[float]:
    """``1.5,2`` as ``[1.5, 2.0]``: finite decimal numbers, at least one; anything else is refused naming it."""
    items = [m.strip() for m in text.split(",")]
    for item in items:
        try:
            if math.isfinite(float(item)):
                continue
        except ValueError:
            pass
        raise DepgraphError("invalid_argument", f"{option} takes finite numbers, comma-separated: not {item!r}")
    return [float(item) for item in items]


def _environment(variable: str | None, option: str) -> None:
    """Refuse an environment variable (named by ``option``) whose value is not UTF-8 text: keys and salts are
    UTF-8 bytes, and such a value cannot be one (Python holds its bytes as lone surrogates)."""
    value = None if variable is None else os.environ.get(variable)
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise DepgraphError(
            "invalid_argument",
            f"the environment variable {variable} ({option}) is not UTF-8 text; set it to UTF-8 text",
            option=option,
        ) from None


def _typed(ctx: typer.Context, parameter: str) -> bool:
    """Whether the option ``parameter`` (its Python name) was given on the command line rather than left at its
    default. Options that do not apply are refused when given, whatever their value."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _option_name(ctx: typer.Context, parameter: str) -> str:
    """How the user spells the option ``parameter``: ``--seed``, ``-k/--folds``."""
    found = next(p for p in ctx.command.params if p.name == parameter)
    return "/".join(found.opts)  # with a deprecated spelling, which the user may have typed


def _refuse_given(ctx: typer.Context, where: str, *parameters: str) -> None:
    """Refuse the first of ``parameters`` given on the command line: it does not apply ``where``."""
    for parameter in parameters:
        if _typed(ctx, parameter):
            option = _option_name(ctx, parameter)
            raise DepgraphError("invalid_argument", f"{option} does not apply {where}", option=option)


def _encoding_option(what: str) -> Any:
    """The ``--encoding CODEC`` option of a command reading ``what`` (one spelling and help for every command)."""
    return typer.Option(metavar="CODEC", help=f"Text encoding of {what} when not UTF-8, e.g. latin-1 or cp1252.")


def read_sample_list(path: Path, encoding: str | None = None) -> list[str]:
    """Sample ids from a CSV/TSV/Parquet table (its ``sample_id`` column, or its
    only column) or a text file with one id per line (``#`` starts a comment),
    read as UTF-8 (with or without a byte-order mark) unless ``encoding`` names
    another text encoding."""
    codec = checked_encoding(encoding)
    if path.suffix.lower() in (".csv", ".tsv", ".parquet", ".pq"):
        table = read_table(path, "samples file", encoding=codec)
        if "sample_id" in table.columns:
            column = table["sample_id"]
        elif len(table.columns) == 1:
            column = table.iloc[:, 0]
        else:
            raise DepgraphError(
                "schema",
                f"samples file {str(path)!r} needs a sample_id column (columns: {describe_ids(table.columns)})",
            )
        ids = [str(v).strip() for v in column.dropna().tolist() if str(v).strip()]
    else:
        raw = read_bytes(path, "samples file")
        label = describe_source(path, "samples file")
        if codec is not None:
            raw = to_utf8(raw, codec, path, label)
        try:  # strict: a byte that is not UTF-8 would otherwise become U+FFFD and name another sample
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise not_utf8(raw, path, label) from None
        ids = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        ids = [i for i in ids if i]
    if not ids:
        raise DepgraphError("empty_input", f"samples file {str(path)!r} lists no sample ids")
    return ids


def _signing_key(variable: str | None) -> bytes | None:
    """The key of ``--sign-key-env`` (the pseudonymisation key rules), read before any work."""
    _environment(variable, "--sign-key-env")
    return None if variable is None else key_from_env(variable, purpose="signing")


def _write_spec(spec: SplitSpec, output: Path, key: bytes | None) -> SplitSpec:
    """Write the spec, signed with ``key`` when one is given; return what was written."""
    if key is not None:
        spec = spec.signed(key)
    write_spec(spec, output)
    return spec


def _signed_note(spec: SplitSpec) -> str:
    return "" if spec.signature is None else f" (signed, key fingerprint {spec.signature.key_fingerprint})"


SIGN_HELP = "Sign the spec: HMAC-SHA256 of its digest under the key in this environment variable."


def _print_graph(graph: StudyGraph, title: str) -> None:
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("nodes")
    table.add_column("n", justify="right")
    table.add_column("edges")
    table.add_column("n", justify="right")
    types = list(graph.type_counts().items())
    rels = list(graph.relation_counts().items())
    for i in range(max(len(types), len(rels))):
        t = types[i] if i < len(types) else ("", "")
        r = rels[i] if i < len(rels) else ("", "")
        table.add_row(t[0], str(t[1]), r[0], str(r[1]))
    out.print(table)


def styled(*parts: str | tuple[str, str]) -> Text:
    """One line of output from plain text and ``(text, style)`` pieces: only the pieces' styles apply, so ids and
    paths in the text are shown as they are."""
    return Text.assemble(*parts)


#: The colour of each finding severity.
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "advisory": "cyan"}


def _print_report(report: ValidationReport) -> None:
    verdict = ("valid", "green") if report.valid else ("INVALID", "red")
    m = report.metrics
    out.print(
        styled(
            "validation: ",
            verdict,
            f" — {m['n_errors']} error(s), {m['n_warnings']} warning(s), "
            f"{m['n_advisories']} advisory(ies) over {m['n_samples']} samples",
        )
    )
    for issue in report.issues:
        out.print(
            styled(
                "  ",
                (f"{issue.severity:<8}", SEVERITY_STYLE[issue.severity]),
                f" {issue.code} ({issue.level}, {issue.count}): {issue.message}",
            )
        )


def _print_spec(spec: SplitSpec, digest: str | None = None, signed: bool = False) -> None:
    """One line on the spec; ``digest`` is the one verified in the file (default: the spec's own)."""
    c = spec.constraint
    how = f"{c.mode}/{c.strategy}" if c.strategy else c.mode
    s = spec.summary
    folds = f"; {len(spec.folds.splits)} splits ({spec.folds.scheme})" if spec.folds is not None else ""
    privacy = "; ids pseudonymised" if spec.pseudonymization is not None else ""
    signature = "; signature verified" if signed else ""
    out.print(
        f"split spec {spec.format_version} ({how}): {s.n_samples} samples in {s.n_groups} groups{folds}{privacy}; "
        f"digest {digest or spec.digest} verified{signature}"
    )
    for w in spec.warnings:
        out.print(styled("  ", (w.severity, SEVERITY_STYLE[w.severity]), f" {w.code}: {w.message}"))
    risky = _formula_like_cells(spec)
    if risky:
        out.print(styled("  ", ("advisory", SEVERITY_STYLE["advisory"]), f" formula_like_ids: {risky}"))


def _formula_like_cells(spec: SplitSpec) -> str:
    """The spec's text cells a spreadsheet would run as formulas, per column ('' when none)."""
    found = []
    for column in spec.samples.columns:
        hits = np.flatnonzero(formula_like(spec.samples[column]))
        if len(hits):
            shown = [repr(v) for v in spec.samples[column].iloc[hits[:3]].tolist()]
            found.append(f"{column} {describe_ids(shown, 3, total=len(hits))}")
    if not found:
        return ""
    return (
        f"cells begin with =, +, -, @, a tab or a carriage return, which a spreadsheet reads as a formula: "
        f"{'; '.join(found)}; exports keep them exact (export --excel-safe writes a CSV meant for spreadsheets)"
    )


def _print_folds(spec: SplitSpec) -> None:
    plan = spec.folds
    train, test, excluded = ([getattr(s, f"n_{side}") for s in plan.splits] for side in ("train", "test", "excluded"))
    # a time split leaves out what its gap, embargo or later levels withhold: its excluded sizes are always shown
    shown = plan.scheme == "time" or any(excluded)
    out.print(
        f"{plan.scheme}: {len(plan.splits)} split(s); train sizes {train}, test sizes {test}"
        + (f", excluded {excluded}" if shown else "")
    )
    for column, metrics in plan.balance.get("columns", {}).items():
        out.print(
            f"  {column}: worst test-share deviation {metrics['worst_proportion_deviation']}, "
            f"worst scaled difference {metrics['worst_scaled_difference']}"
        )
    if plan.parameters.get("thresholds") is not None:  # for other sites to apply: --thresholds
        out.print(f"  thresholds {','.join(map(repr, plan.parameters['thresholds']))}")
    association = plan.balance.get("association")
    if isinstance(association, dict) and association.get("cramers_v") is not None:
        out.print(f"  folds vs {association['outcome']}: Cramér's V {association['cramers_v']}")


def _counted(n: int, noun: str) -> str:
    """``1 sample``, ``2 samples``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _print_partition(partition: Partition) -> None:
    s = partition.summary()
    how = f"{partition.mode}/{partition.strategy}" if partition.strategy else partition.mode
    out.print(
        styled(
            "derived ",
            (how, "bold"),
            f": {_counted(s['n_samples'], 'sample')} in {_counted(s['n_groups'], 'group')}; largest "
            f"{s['largest_group']} ({_counted(s['largest_group_size'], 'sample')}), "
            f"{_counted(s['singletons'], 'singleton')}",
        )
    )
    for w in partition.warnings:
        out.print(styled("  ", (w.severity, SEVERITY_STYLE[w.severity]), f" {w.code}: {w.message}"))


# --------------------------------------------------------------------------- commands
def _print_version(asked: bool) -> None:
    if asked:
        out.print(f"depgraph {__version__}")
        raise typer.Exit()


@app.callback()
def depgraph_command(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Declare what must never be split between training and evaluation data; derive leakage-free groups."""


@app.command(cls=Command)
def build(
    ctx: typer.Context,
    metadata: Annotated[
        Path, typer.Argument(help="One row per sample: CSV, TSV, Parquet or Excel (.xlsx).", readable=False)
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the graph JSON.", readable=False)],
    kinship: Annotated[
        Path | None,
        typer.Option(
            help="Kinship: pairs CSV (id1,id2,kinship), KING .kin/.kin0, plink2, PLINK .genome or a GCTA GRM.",
            readable=False,
        ),
    ] = None,
    kinship_threshold: Annotated[
        str | None,
        typer.Option(help="Inclusive kinship threshold, a number or a KING degree: duplicate, first, second, third."),
    ] = None,
    kinship_format: Annotated[
        str,
        typer.Option(help="auto, pairs (id1,id2,kinship), king (.kin/.kin0), plink2-king, plink-genome, gcta-grm."),
    ] = "auto",
    id_template: Annotated[
        str, typer.Option(help="Subject id from a tool's FID and IID columns, e.g. '{IID}' or '{FID}_{IID}'.")
    ] = "{IID}",
    coords: Annotated[
        Path | None, typer.Option(help="Coordinates: CSV with sample_id,x,y[,z].", readable=False)
    ] = None,
    radius: Annotated[float | None, typer.Option(help="Samples at most this far apart are adjacent.")] = None,
    duplicates: Annotated[
        Path | None, typer.Option(help="Duplicate pairs: CSV with id1,id2 (sample ids).", readable=False)
    ] = None,
    column: Annotated[
        list[str] | None, typer.Option("--column", help="Map a canonical column to yours: canonical=user_col.")
    ] = None,
    unknown: Annotated[
        str, typer.Option(help="Pairs naming ids not in the metadata: 'error' or 'ignore' (drop, and report).")
    ] = "error",
    allow_multi_subject_samples: Annotated[
        bool, typer.Option(help="Accept samples listed with several subjects.")
    ] = False,
    outcome_scope: Annotated[str, typer.Option(help="Link outcome_id to 'sample' or 'subject'.")] = "sample",
    name: Annotated[str | None, typer.Option(help="A name for the graph, shown in reports.")] = None,
    encoding: Annotated[str | None, _encoding_option("the input tables")] = None,
    sheet: Annotated[
        str | None,
        typer.Option(metavar="NAME|N", help="The metadata workbook's sheet (.xlsx): its name, or its number from 1."),
    ] = None,
) -> None:
    """Build a study graph from metadata (+ kinship, coordinates, duplicates)."""
    _refuse_build_options(ctx, unknown, outcome_scope, (kinship, kinship_threshold), (coords, radius), duplicates)
    plan = _outputs(output, writes=("JSON",), inputs=(metadata, kinship, coords, duplicates))
    with stage(f"reading {metadata.name} and building the graph"):
        graph = from_metadata(
            metadata,
            _column_map(column),
            name=name or metadata.stem,
            outcome_scope=outcome_scope,  # type: ignore[arg-type]
            allow_multi_subject_samples=allow_multi_subject_samples,
            encoding=encoding,
            sheet=sheet,
        )
    _refuse_unused_metadata_options(ctx, graph)
    for step in graph.history:
        warning = no_grouping_message(step)
        if warning:  # a graph of singletons is legal, but never a silent one
            typer.echo(f"depgraph: warning: no_grouping_column: {warning}", err=True)
    kinship_source = None if kinship is None else KinshipSource(kinship, kinship_threshold, kinship_format, id_template)
    graph = _with_pair_files(graph, kinship_source, (coords, radius), duplicates, unknown=unknown, encoding=encoding)
    with stage(f"writing {output.name}"), plan:
        write_graph(graph, output)
    _print_graph(graph, f"wrote {output}")


class KinshipSource(NamedTuple):
    """``build``'s kinship options: the file, its threshold, its format (or ``auto``) and the id template."""

    path: Path
    threshold: Any
    format: str
    id_template: str


def _with_pair_files(
    graph: StudyGraph,
    kinship: KinshipSource | None,
    spatial: tuple[Path | None, float | None],
    duplicates: Path | None,
    *,
    unknown: str,
    encoding: str | None,
) -> StudyGraph:
    """The graph with the relations of the pair files ``build`` was given."""
    if kinship is not None:
        fmt = None if kinship.format == "auto" else _canonical(kinship.format, "-")
        with stage(f"reading kinship from {kinship.path.name}"):
            graph = add_kinship(
                graph,
                kinship.path,
                kinship.threshold,
                unknown=unknown,
                format=fmt,
                id_template=kinship.id_template,
                encoding=encoding,
            )
    coords, radius = spatial
    if coords is not None:
        with stage("finding neighbours within the radius"):
            graph = add_spatial(graph, coords, radius, unknown=unknown, encoding=encoding)  # type: ignore[arg-type]
    if duplicates is not None:
        graph = add_duplicates(graph, duplicates, unknown=unknown, encoding=encoding)
    return graph


def _refuse_build_options(
    ctx: typer.Context,
    unknown: str,
    outcome_scope: str,
    kinship: tuple[Path | None, str | None],
    spatial: tuple[Path | None, float | None],
    duplicates: Path | None,
) -> None:
    """``build``'s options that contradict each other, refused before anything is read."""
    (kinship_file, threshold), (coords, radius) = kinship, spatial
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"--unknown takes 'error' or 'ignore', not {unknown!r}")
    if outcome_scope not in ("sample", "subject"):
        raise DepgraphError("invalid_argument", f"--outcome-scope takes 'sample' or 'subject', not {outcome_scope!r}")
    if kinship_file is not None and threshold is None:
        raise DepgraphError("invalid_argument", "--kinship needs --kinship-threshold (a number or a KING degree name)")
    if kinship_file is None and threshold is not None:
        raise DepgraphError("invalid_argument", "--kinship-threshold is given without --kinship")
    if (coords is None) != (radius is None):
        raise DepgraphError("invalid_argument", "--coords and --radius go together")
    if kinship_file is None:
        _refuse_given(ctx, "without --kinship", "kinship_format", "id_template")
    if kinship_file is None and coords is None and duplicates is None:
        _refuse_given(ctx, "without --kinship, --coords or --duplicates (the pairs it filters)", "unknown")


def _refuse_unused_metadata_options(ctx: typer.Context, graph: StudyGraph) -> None:
    """Options about outcomes or subjects, given for metadata that declares none."""
    if not (graph.has_relation("sample_has_outcome") or graph.has_relation("subject_has_outcome")):
        _refuse_given(ctx, "when the metadata declares no outcome (no outcome_id values)", "outcome_scope")
    if not graph.has_relation("sample_belongs_to_subject"):
        _refuse_given(
            ctx, "when the metadata declares no subject (no subject_id values)", "allow_multi_subject_samples"
        )


@app.command("validate", cls=Command, short_help="Validate a study graph, or check a split spec.")
def validate_command(
    ctx: typer.Context,
    document: Annotated[
        Path, typer.Argument(metavar="GRAPH.json|SPEC.json", help="A study graph or a split spec.", readable=False)
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    n_splits: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--n-splits",
            "--folds",
            "--n-folds",
            help="Graphs: also flag modes that leave fewer groups than K folds.",
        ),
    ] = None,
    verify_key_env: Annotated[
        str | None,
        typer.Option(help="Specs: refuse the spec unless it is signed with the key in this environment variable."),
    ] = None,
) -> None:
    """Validate a study graph (exit 1 when it has errors), or check a split spec
    (schema, every column element, digest, what the spec says of itself, and with
    --verify-key-env its signature; exit 2 when it is damaged or contradicts itself)."""
    _environment(verify_key_env, "--verify-key-env")
    key = None if verify_key_env is None else key_from_env(verify_key_env, purpose="signature verification")
    doc = read_json(document, "file")
    if not isinstance(doc, dict):
        raise DepgraphError(
            "schema",
            f"{str(document)!r}: the document is {json_kind(doc)}; a study graph or a split spec is a JSON object",
        )
    if doc.get("format") == SPEC_FORMAT:
        _refuse_given(ctx, "to a split spec (it flags the modes of a graph)", "n_splits")
        spec = spec_from_document(doc, f"spec file {str(document)!r}", verify_key=key)
        if as_json:
            sys.stdout.write(orjson.dumps({"valid": True, **spec.model_dump(mode="json")}).decode() + "\n")
        else:
            _print_spec(spec, digest=doc.get("digest"), signed=key is not None)
        return
    if doc.get("format") != GRAPH_FORMAT:
        raise DepgraphError(
            "schema",
            f"{str(document)!r}: 'format' is {doc.get('format')!r}; expected {GRAPH_FORMAT!r} or {SPEC_FORMAT!r}"
            + (" (a splitGraph file: use 'depgraph import splitgraph')" if "splitGraph_object" in doc else ""),
        )
    if key is not None:
        raise DepgraphError("invalid_argument", "--verify-key-env checks split specs; this is a study graph")
    with stage("validating"):
        report = validate(graph_from_document(doc, f"graph file {str(document)!r}"), n_splits=n_splits)
    if as_json:
        sys.stdout.write(report.to_json_bytes().decode() + "\n")
    else:
        _print_report(report)
    if not report.valid:
        raise typer.Exit(1)


@app.command("derive", cls=Command)
def derive_command(
    ctx: typer.Context,
    graph_file: Annotated[
        Path, typer.Argument(metavar="GRAPH.json", help="A graph written by 'depgraph build'.", readable=False)
    ],
    mode: Annotated[str, typer.Option(help=f"Derivation mode: {MODE_NAMES}.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the split spec JSON.", readable=False)],
    strategy: Annotated[str | None, typer.Option(help="Composite strategy: strict or rule-based.")] = None,
    via: Annotated[str | None, typer.Option(help="Composite: modes to combine, comma-separated.")] = None,
    priority: Annotated[str | None, typer.Option(help="Rule-based: modes in priority order, comma-separated.")] = None,
    samples: Annotated[
        Path | None, typer.Option(help="Derive for these samples only (one id per line, or a table).", readable=False)
    ] = None,
    min_groups: Annotated[int | None, typer.Option(help="Fail when fewer groups than this remain.")] = None,
    pseudonymize_ids: Annotated[
        bool, typer.Option("--pseudonymize-ids", help="Replace sample and group ids by keyed hashes (HMAC-SHA256).")
    ] = False,
    key_env: Annotated[
        str, typer.Option(help="With --pseudonymize-ids: the environment variable holding the key.")
    ] = DEFAULT_KEY_ENV,
    attributes: Annotated[
        str | None,
        typer.Option(help="Sample attributes to carry into the spec (comma-separated, or 'all'), e.g. for folds."),
    ] = None,
    allow_unlinked: Annotated[
        bool,
        typer.Option(
            "--allow-unlinked", help="Accept a mode that links none of the samples (every sample its own group)."
        ),
    ] = False,
    allow_single_group: Annotated[
        bool,
        typer.Option(
            "--allow-single-group", help="Composite without --via/--priority: accept every sample in one group."
        ),
    ] = False,
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
    encoding: Annotated[str | None, _encoding_option("the --samples file")] = None,
) -> None:
    """Derive one group per sample and write a split spec. A mode that links none of the samples, or a composite
    over every declared mode that leaves one group, is refused unless --allow-unlinked / --allow-single-group."""
    if not pseudonymize_ids:
        _refuse_given(ctx, "without --pseudonymize-ids", "key_env")
    if samples is None:
        _refuse_given(ctx, "without --samples (the one table derive reads)", "encoding")
    if pseudonymize_ids:
        _environment(key_env, "--key-env")
    key = key_from_env(key_env) if pseudonymize_ids else None  # fail before any work
    signing = _signing_key(sign_key_env)
    if key is not None and attributes is not None and attributes.strip().lower() == "all":
        raise DepgraphError(
            "invalid_argument",
            "--attributes all with --pseudonymize-ids would carry every metadata column beside the hashed ids; "
            "name the attributes to carry (e.g. --attributes sex,age_band)",
        )
    plan = _outputs(output, writes=("JSON",), inputs=(graph_file, samples))
    with stage(f"reading {graph_file.name}"):
        graph = read_graph(graph_file)
    subset = read_sample_list(samples, encoding) if samples is not None else None
    if samples is not None:  # its unknown ids named with the file they came from, once
        selected_samples(graph, subset, what=f"samples file {str(samples)!r}")
    with stage(f"deriving {mode} groups"):
        partition = derive(
            graph,
            _canonical(mode, "_"),
            strategy=None if strategy is None else _canonical(strategy, "_"),
            via=_name_list(via, "--via"),
            priority=_name_list(priority, "--priority"),
            samples=subset,
            min_groups=min_groups,
            allow_unlinked=allow_unlinked,
            allow_single_group=allow_single_group,
        )
    with stage(f"writing {output.name}"):
        carried = attributes if attributes is None else _attribute_names(attributes)
        spec = SplitSpec.from_partition(partition, graph, attributes=carried)
        if key is not None:
            spec = pseudonymize(spec, key)
        with plan:
            spec = _write_spec(spec, output, signing)
    _print_partition(partition)
    out.print(f"wrote {output}" + (" (ids pseudonymised)" if key is not None else "") + _signed_note(spec))


def _attribute_names(text: str) -> str | list[str]:
    """``--attributes``: ``all`` (in any case, as the pseudonymisation check reads it) or a list of names."""
    return "all" if text.strip().lower() == "all" else _name_list(text, "--attributes") or []


@app.command("import", cls=Command, short_help="Read a splitGraph split_spec or dependency_graph.")
def import_command(
    file: Annotated[
        Path, typer.Argument(metavar="FILE.json", help="A splitGraph split_spec or dependency_graph.", readable=False)
    ],
    source: Annotated[str, typer.Option("--from", help="Where the file comes from: splitgraph.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the depgraph spec or graph.", readable=False)
    ],
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP + " Specs only.")] = None,
) -> None:
    """Read another tool's file: a splitGraph split_spec becomes a depgraph spec,
    a splitGraph dependency_graph a depgraph graph (the symmetric of export --to splitgraph)."""
    if _canonical(source, "-") != "splitgraph":
        raise DepgraphError("invalid_argument", f"import --from reads splitgraph files, not {source!r}")
    signing = _signing_key(sign_key_env)
    plan = _outputs(output, writes=("JSON",), inputs=(file,))
    imported = read_splitgraph(file)
    if signing is not None and not isinstance(imported, SplitSpec):
        raise DepgraphError(
            "invalid_argument", f"--sign-key-env signs split specs; {str(file)!r} is a splitGraph dependency_graph"
        )
    with plan:
        if isinstance(imported, SplitSpec):
            imported = _write_spec(imported, output, signing)
        else:
            write_graph(imported, output)
    if isinstance(imported, SplitSpec):
        _print_spec(imported)
    else:
        _print_graph(imported, "imported study graph")
    out.print(f"wrote {output}" + (_signed_note(imported) if isinstance(imported, SplitSpec) else ""))


@app.command("export", cls=Command, short_help="Write a spec for other tools, or as a table.")
def export_command(
    ctx: typer.Context,
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="A split spec (or, for splitgraph, a graph).", readable=False)
    ],
    to: Annotated[str, typer.Option("--to", help="splitgraph, csv, parquet or fold-table.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write.", readable=False)],
    splitgraph_version: Annotated[
        str, typer.Option(help="Graphs: the splitGraph release to write for (0.2.0 or 0.4.0).")
    ] = "0.4.0",
    excel_safe: Annotated[
        bool,
        typer.Option(
            "--excel-safe",
            help="CSV/TSV for spreadsheets: prefix with ' every cell a spreadsheet would run as a formula "
            "(first character = + - @ tab CR). The file is then not id-exact.",
        ),
    ] = False,
) -> None:
    """Write a spec for other tools: splitGraph JSON, the samples table (CSV / Parquet),
    or the long fold table (sample_id, repeat, fold, role) as CSV or Parquet by the file suffix."""
    target = _canonical(to, "-")
    if target not in ("splitgraph", "csv", "parquet", "fold-table"):
        raise DepgraphError("invalid_argument", f"--to takes splitgraph, csv, parquet or fold-table, not {to!r}")
    # the samples table as CSV, or TSV when the file is named .tsv; the fold table by its suffix (told after the
    # output is checked: an output that is the input is refused as such first)
    kind = {"csv": _text_table(output), "parquet": "parquet", "splitgraph": "json"}.get(target)
    kind = kind or TABLE_FORMATS.get(output.suffix.lower()) or ("csv" if str(output) == "-" else None)
    if target != "splitgraph":
        _refuse_given(ctx, f"to --to {target} (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    plan = _outputs(
        output, writes=None if kind is None else (TABLE_KINDS.get(kind, "JSON"),), inputs=(document,),
        binary=kind == "parquet",
    )  # fmt: skip
    kind = kind or table_format(output)  # refused: cannot tell
    if excel_safe and kind not in ("csv", "tsv"):  # refused before anything is read: it is for text tables only
        raise DepgraphError(
            "invalid_argument",
            f"--excel-safe writes CSV/TSV meant for spreadsheets; it does not apply to --to {target}"
            + (f" written as {kind}" if target == "fold-table" else "")
            + " (that file keeps ids exact and is not opened as formulas)",
        )
    doc = read_json(document, "file")
    if isinstance(doc, dict) and doc.get("format") == GRAPH_FORMAT:
        if target != "splitgraph":
            raise DepgraphError("invalid_argument", f"a study graph exports only to splitgraph, not {target}")
        with plan:  # what splitGraph cannot hold is told as a splitgraph_export_drops warning
            write_splitgraph_graph(graph_from_document(doc), output, splitgraph_version)
        out.print(f"wrote {output}")
        return
    _refuse_given(ctx, "to a split spec (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    spec = spec_from_document(doc, f"spec file {str(document)!r}")
    with plan:
        if target == "splitgraph":
            write_splitgraph_spec(spec, output)
        elif target == "fold-table":
            write_table(fold_table(spec), output, excel_safe=excel_safe)
        else:
            write_table(samples_table(spec), output, kind, excel_safe=excel_safe)
    out.print(
        f"wrote {output}" + (" (cells a spreadsheet would run as formulas prefixed with ')" if excel_safe else "")
    )


#: A table format and the kind of file it makes (:data:`SUFFIX_KINDS`).
TABLE_KINDS = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet"}


def _text_table(output: Path) -> str:
    """``tsv`` for an output named ``.tsv``, else ``csv``."""
    return "tsv" if output.suffix.lower() == ".tsv" else "csv"


@app.command("diff", cls=Command)
def diff_command(
    first: Annotated[Path, typer.Argument(metavar="A.json", help="A split spec.", readable=False)],
    second: Annotated[Path, typer.Argument(metavar="B.json", help="Another split spec.", readable=False)],
    limit: Annotated[int, typer.Option(help="Show at most this many changed samples.")] = 20,
) -> None:
    """Which samples changed group between two specs. Exit 1 when the grouping (or folds) differ."""
    if limit < 0:
        raise DepgraphError("invalid_argument", f"--limit takes 0 or more changed samples to show, not {limit}")
    a, b = read_spec(first), read_spec(second)
    d = compare_specs(a, b)
    if d.same_digest:
        out.print(f"identical: both specs carry digest {a.digest}")
        return
    if d.only_in_first:
        out.print(f"{len(d.only_in_first)} sample(s) only in {first}: {describe_ids(d.only_in_first)}")
    if d.only_in_second:
        out.print(f"{len(d.only_in_second)} sample(s) only in {second}: {describe_ids(d.only_in_second)}")
    if len(d.changed):
        out.print(f"{len(d.changed)} sample(s) changed group:")
        for row in d.changed.head(limit).itertuples(index=False):
            out.print(f"  {row.sample_id}: {row.group_first} -> {row.group_second}")
        if len(d.changed) > limit:
            out.print(f"  … and {len(d.changed) - limit} more")
    if d.folds_differ:
        out.print("the folds differ")
    if not d.differs:
        note = " (group labels differ)" if d.relabelled else ""
        out.print(f"same grouping{note}; the specs differ only in metadata")
        return
    raise typer.Exit(1)


# --------------------------------------------------------------------------- folds: options from the schemes
def fold_option(parameter: Parameter) -> inspect.Parameter:
    """The ``folds`` command's option for a scheme parameter, built from its declaration (help, spellings, what goes
    there, and the default: the command's own, else the one default of every scheme taking it)."""
    kind = {"names": str, "numbers": str, "spec": Path, "environment": str}.get(parameter.reads)
    defaults = {f.default for s in _taking(parameter) for f in dataclasses.fields(s) if f.name == parameter.name}
    if kind is None:
        kind = typing.get_type_hints(_taking(parameter)[0])[parameter.name]
    default = parameter.command_default
    if default is None and len(defaults) == 1 and parameter.reads in ("value", "names"):
        (default,) = defaults
        default = ",".join(default) if parameter.reads == "names" else default
    option = typer.Option(
        *parameter.flags,
        help=parameter.help,
        metavar=parameter.metavar,
        **({"readable": False} if kind is Path else {}),
    )
    return inspect.Parameter(
        parameter.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
        annotation=Annotated[kind if default is not None else kind | None, option],
    )  # fmt: skip


def _taking(parameter: Parameter) -> list[type[FoldScheme]]:
    return [SCHEMES[name] for name in schemes_taking(parameter.name)]


def _fold_parameters(ctx: typer.Context, scheme: type[FoldScheme], given: dict[str, Any]) -> dict[str, Any]:
    """The options given, by parameter: an option the scheme does not declare is refused, naming the schemes it
    applies to; a parameter with a command default takes it when not given; each declared check runs."""
    declared = scheme.parameters_declared()
    params: dict[str, Any] = {}
    for parameter in PARAMETERS:
        typed = _typed(ctx, parameter.name)
        if parameter.name not in declared:
            if typed:
                spelt = _option_name(ctx, parameter.name)
                raise DepgraphError(
                    "invalid_argument",
                    f"{spelt} does not apply to --scheme {scheme.name} (it applies to "
                    f"{', '.join(schemes_taking(parameter.name))})",
                    option=spelt,
                )
        elif typed or parameter.command_default is not None:
            params[parameter.name] = given[parameter.name]
            if parameter.check is not None:
                parameter.check(params[parameter.name], _option_name(ctx, parameter.name))
        elif parameter.required:
            raise DepgraphError(
                "invalid_argument",
                f"{scheme.name} folds need {parameter.flags[0]} {parameter.metavar} (the {parameter.name} is never a "
                "command-line value)",
            )
    return params


def _fold_values(ctx: typer.Context, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the scheme takes them: names split, values read from the environment, specs read."""
    out = {}
    for name, value in params.items():
        parameter, option = PARAMETERS_BY_NAME[name], _option_name(ctx, name)
        if parameter.reads == "names":
            value = tuple(_name_list(value, option) or ())
        elif parameter.reads == "numbers":
            value = tuple(_number_list(value, option))
        elif parameter.reads == "environment":
            _environment(value, option)
            value = os.environ.get(value)
            if not value:
                raise DepgraphError(
                    "invalid_argument", f"the environment variable {params[name]} holding the {name} is unset or empty"
                )
        out[name] = value
    return out


def folds_command(
    ctx: typer.Context,
    document: Annotated[Path, typer.Argument(metavar="SPEC.json", help="A split spec.", readable=False)],
    scheme: Annotated[str, typer.Option(help=f"Fold scheme: {', '.join(SCHEMES)}.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the spec with its folds.", readable=False)
    ],
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
    **given: Any,
) -> None:
    """Assign folds to a spec's groups and write the spec carrying them. An option the scheme does not take is
    refused."""
    signing = _signing_key(sign_key_env)
    name = canonical_scheme_name(scheme)
    if name not in SCHEMES:
        raise DepgraphError("invalid_argument", f"--scheme takes {', '.join(SCHEMES)}, not {scheme!r}")
    params = _fold_parameters(ctx, SCHEMES[name], given)  # before reading anything: a wrong option fails fast
    documents = {k: v for k, v in params.items() if PARAMETERS_BY_NAME[k].reads == "spec"}
    plan = _outputs(output, writes=("JSON",), inputs=(document, *documents.values()))
    params = _fold_values(ctx, params)
    spec = read_spec(document)
    params.update({k: read_spec(v) for k, v in documents.items() if v is not None})
    with stage(f"assigning {name} folds"), plan:
        planned = _write_spec(assign_folds(spec, name, **params), output, signing)
    _print_folds(planned)
    out.print(f"wrote {output}" + _signed_note(planned))


def _with_fold_options(command: Any) -> Any:
    """``command`` taking, before its last parameter, one option per scheme parameter (:func:`fold_option`)."""
    fixed = list(inspect.signature(command, eval_str=True).parameters.values())
    generated = [fold_option(p) for p in PARAMETERS]
    command.__signature__ = inspect.Signature([*fixed[:-2], *generated, fixed[-2]])
    return command


app.command("folds", cls=Command)(_with_fold_options(folds_command))


@app.command("check", cls=Command)
def check_command(
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="The split spec to check against.", readable=False)
    ],
    assignment: Annotated[
        Path,
        typer.Argument(
            metavar="ASSIGNMENT.csv", help="A fold or train/test value per sample (CSV/TSV/Parquet).", readable=False
        ),
    ],
    id_column: Annotated[str, typer.Option(help="The sample id column.")] = "sample_id",
    split_column: Annotated[
        str | None, typer.Option(help="The fold / train-test column (default: fold, split, role, set or partition).")
    ] = None,
    graph_file: Annotated[
        Path | None,
        typer.Option(
            "--graph",
            help="The study graph: also show, per declared relation, what crosses this split.",
            readable=False,
        ),
    ] = None,
    encoding: Annotated[str | None, _encoding_option("the assignment table")] = None,
) -> None:
    """Verify a split made elsewhere: list every spec group that straddles it. Exit 1 when one does, or (with
    --graph) when a declared dependency crosses the split."""
    spec = read_spec(document)
    report = straddling_groups(spec, assignment, id_column, split_column, encoding=encoding)  # names the file
    if report.clean:
        out.print(
            f"no group straddles: {report.n_checked} samples checked by {report.split_column!r}"
            + (f" ({report.n_unused} unused rows skipped)" if report.n_unused else "")
        )
    else:
        out.print(styled((f"{len(report.groups)} group(s) straddle the split", "red"), f" ({report.split_column!r}):"))
        for row in report.groups.head(20).itertuples(index=False):
            out.print(f"  {row.group_id}: {row.n_samples} samples in {row.values}")
        if len(report.groups) > 20:
            out.print(f"  … and {len(report.groups) - 20} more")
    crossing = None
    if graph_file is not None:
        crossing = exposure(
            read_graph(graph_file), spec, assignment, id_column=id_column, split_column=report.split_column,
            encoding=encoding,
        )  # fmt: skip
        _print_exposure(crossing)
    if not report.clean or (crossing is not None and not crossing.nothing_crosses):
        raise typer.Exit(1)


def _print_exposure(report: ExposureReport) -> None:
    # one plain line per relation: readable in a log and at any terminal width; the words are the table's columns
    out.print(
        "dependencies per declared relation (followed: the grouping follows the relation) — kept whole: all their "
        "samples in one group, a split of whole groups cannot cut them; spread over groups: in two or more groups, "
        "a split may cut them; crossing a split: a sample on the train side and one on the test side:"
    )
    for row in report.table.itertuples(index=False):
        crossing = "" if row.crossing is None or pd.isna(row.crossing) else f", {int(row.crossing)} crossing a split"
        out.print(
            f"  {row.relation} ({'followed' if row.followed else 'not followed'}): {row.linked} {row.unit} link "
            f"samples: {row.kept_whole} kept whole, {row.spread_over_groups} spread over groups{crossing}"
            + (f" — e.g. {row.examples}" if row.examples else "")
        )
    for row in report.blocks.itertuples(index=False):
        out.print(
            f"{row.relation}: {row.blocks} blocks over {row.splits} test sets, χ² = {row.chi2:.1f} "
            f"(dof {row.dof}, p = {row.p_value:.3g}), Cramér's V = {row.cramers_v:.3f}"
        )
    colour = "green" if report.nothing_crosses else "red"
    out.print(styled((report.verdict(), colour)))


@app.command("audit", cls=Command, short_help="Find near-identical samples; optionally declare them.")
def audit_command(
    ctx: typer.Context,
    graph_file: Annotated[
        Path, typer.Argument(metavar="GRAPH.json", help="The study graph the samples belong to.", readable=False)
    ],
    features: Annotated[
        Path,
        typer.Argument(
            metavar="FEATURES", help="CSV, TSV, Parquet (an id column + numeric columns) or .npy.", readable=False
        ),
    ],
    id_column: Annotated[
        str, typer.Option("--id-column", "--ids-column", help="The sample id column of a feature table.")
    ] = "sample_id",
    threshold: Annotated[float, typer.Option(help="Inclusive cosine similarity that marks a duplicate.")] = 0.995,
    method: Annotated[str, typer.Option(help="auto, exact or lsh (see docs/exposure-audit-report.md).")] = "auto",
    write_back: Annotated[
        bool, typer.Option("--write-back", help="Add the pairs to the graph as sample_duplicate_of edges.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="With --write-back: the graph to write; otherwise a CSV of the pairs.",
            readable=False,
        ),
    ] = None,
    encoding: Annotated[str | None, _encoding_option("the feature table")] = None,
) -> None:
    """Find near-identical samples (cosine similarity of L2-normalised feature rows) and optionally declare them."""
    if write_back and output is None:
        raise DepgraphError("invalid_argument", "--write-back needs -o GRAPH.json for the updated graph")
    npy = features.suffix.lower() == ".npy"
    if npy:
        _refuse_given(
            ctx, "to a .npy matrix (its rows are the graph's samples in sample order)", "id_column", "encoding"
        )
    # the pairs table as CSV, or TSV / Parquet when the file is named so
    kind = "JSON" if write_back else TABLE_KINDS[_pairs_format(output)]
    plan = _outputs(output, writes=(kind,), inputs=(graph_file, features), binary=kind == "Parquet")
    graph = read_graph(graph_file)
    ids = graph.sample_ids if npy else None  # .npy rows follow the graph's samples
    source: Path | pd.DataFrame = features if npy else _feature_table(features, id_column, graph, encoding)
    with stage(f"auditing {features.name}"):
        pairs = audit_duplicates(source, ids, threshold, method=method, id_column=id_column)
    out.print(f"{len(pairs)} pair(s) of samples with cosine similarity ≥ {threshold}")
    for row in pairs.head(20).itertuples(index=False):
        out.print(f"  {row.id1} ~ {row.id2}  {row.similarity:.6f}")
    if len(pairs) > 20:
        out.print(f"  … and {len(pairs) - 20} more")
    if write_back:
        updated = (
            add_duplicates(graph, pairs, similarity_column="similarity", provenance="audit") if len(pairs) else graph
        )
        with plan:
            write_graph(updated, output)
        out.print(f"wrote {output} with {len(pairs)} audited duplicate pair(s) declared")
    elif output is not None:
        with plan:
            write_table(pairs, output, _pairs_format(output))
        out.print(f"wrote {output}")


def _pairs_format(output: Path | None) -> str:
    """The format of ``audit -o`` (without --write-back): by the suffix, CSV unless it says TSV or Parquet."""
    return (
        "csv"
        if output is None
        else {".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}.get(output.suffix.lower(), "csv")
    )


def _feature_table(path: Path, id_column: str, graph: StudyGraph, encoding: str | None) -> pd.DataFrame:
    """The feature table at ``path``; ids the graph does not hold are refused: the audit is of the graph's samples,
    and pairs it cannot declare would be written as if they were."""
    table = read_table(path, "features", encoding=encoding)
    if id_column in table.columns:
        ids = table[id_column].dropna().astype(str)
        unknown = ids[~ids.isin(graph.sample_ids)].unique().tolist()
        if unknown:
            raise DepgraphError(
                "reference",
                f"features {str(path)!r} name {len(unknown)} sample(s) not in the graph: {describe_ids(unknown)}",
                ids=unknown,
            )
    return table


@app.command("report", cls=Command, short_help="Write a self-contained HTML report.")
def report_command(
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="A split spec (with or without folds).", readable=False)
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML report.", readable=False)],
    graph_file: Annotated[
        Path | None,
        typer.Option("--graph", help="The study graph: adds the exposure tables and the drawing.", readable=False),
    ] = None,
    plots_dir: Annotated[
        Path | None, typer.Option(help="Also write every figure as PNG and SVG here.", readable=False)
    ] = None,
) -> None:
    """Write a self-contained HTML report (figures embedded) a reviewer can open offline."""
    plan = _outputs(output, writes=None, inputs=(document, graph_file))
    if plots_dir is not None:
        plan.directory(plots_dir, "plot directory")
    spec = read_spec(document)
    graph = read_graph(graph_file) if graph_file is not None else None
    with stage(f"drawing {output.name}"), plan:  # the report and the figures are put in place together
        write_report(spec, output, graph)
        if plots_dir is not None:
            save_figures(figures(spec, graph), plots_dir)
        _check_suffix(output, ("HTML",))  # after the plan has seen the figures: a report written over one is `io`
    out.print(f"wrote {output}" + (f" and the figures in {plots_dir}" if plots_dir is not None else ""))


@app.command("evaluate", cls=Command, short_help="AUC and metrics at a training threshold, per split and block.")
def evaluate_command(
    document: Annotated[Path, typer.Argument(metavar="SPEC.json", help="A split spec carrying folds.", readable=False)],
    predictions: Annotated[
        Path,
        typer.Argument(
            metavar="PREDICTIONS",
            help="CSV/TSV/Parquet: sample_id, split (or repeat and fold), role (train/test), score and label.",
            readable=False,
        ),
    ],
    threshold: Annotated[
        str,
        typer.Option(
            metavar="youden|X|sensitivity=X|specificity=X",
            help="How each split's threshold is chosen from its training predictions.",
        ),
    ] = "youden",
    by: Annotated[
        str | None,
        typer.Option(
            metavar="COLUMN", help="A spec column (site, study, batch...): also evaluate each held-out block."
        ),
    ] = None,
    label: Annotated[
        str | None, typer.Option(metavar="COL", help="The label column (default: label, else the spec's outcome).")
    ] = None,
    positive: Annotated[
        str | None, typer.Option(metavar="CLASS", help="The positive class (default: 1 of 0/1, true of false/true).")
    ] = None,
    boot: Annotated[int, typer.Option("--boot", metavar="N", help="Bootstrap resamples of groups (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the bootstrap.")] = 0,
    confidence: Annotated[float, typer.Option(metavar="LEVEL", help="Interval confidence level.")] = 0.95,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Also write the full table: .csv, .tsv, .parquet or .json.", readable=False
        ),
    ] = None,
    encoding: Annotated[str | None, _encoding_option("the predictions table")] = None,
    report_file: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="FILE.html",
            help="Also write the spec's HTML report with the evaluation and the test scores per block.",
            readable=False,
        ),
    ] = None,
) -> None:
    """Evaluate predictions made on the spec's splits: per split (and per held-out block with --by), AUC and, at a
    threshold chosen on that split's training predictions only, sensitivity, specificity, balanced accuracy, PPV and
    NPV, with intervals from a bootstrap over the spec's groups. A block whose AUC is high while its balanced
    accuracy is low is flagged as a score shift (see docs/evaluation.md)."""
    kind = None if output is None else {".json": "json", **TABLE_FORMATS}.get(output.suffix.lower())
    if output is not None and kind is None and str(output) != "-":
        raise DepgraphError(
            "invalid_argument", f"-o {str(output)!r}: the evaluation is written as .csv, .tsv, .parquet or .json"
        )
    kind = kind or ("csv" if output is not None else None)
    plan = _outputs(
        output, writes=None if kind is None else (TABLE_KINDS.get(kind, "JSON"),), inputs=(document, predictions),
        binary=kind == "parquet",
    )  # fmt: skip
    if report_file is not None:
        plan.file(report_file)
        _check_suffix(report_file, ("HTML",))
    spec = read_spec(document)
    with stage(f"evaluating {predictions.name}"):
        report = evaluate(
            spec, predictions, threshold=threshold, by=by, label=label, positive=positive, n_boot=boot, seed=seed,
            confidence=confidence, encoding=encoding,
        )  # fmt: skip
    out.print(str(report))
    with plan:  # the table and the report are put in place together
        if output is not None and kind == "json":
            report.write_json(output)
        elif output is not None:
            write_table(report.table, output, kind)
        if report_file is not None:
            write_report(spec, report_file, evaluation=report)
    for written in (output, report_file):
        if written is not None:
            out.print(f"wrote {written}")


def _print_honest_estimates(out: Console, honest_estimates: Callable[[], pd.DataFrame]) -> None:
    """The demo's last step: each design's CV AUC beside the external AUC (needs scikit-learn)."""
    out.print(
        styled(
            "\n",
            ("6. honest estimates", "bold"),
            ": on a simulated study with an outcome (40 families, 24 re-deposits), each design's CV AUC of a logistic "
            "regression beside its AUC on 400 new families",
        )
    )
    if importlib.util.find_spec("sklearn") is None:
        out.print("  skipped: scikit-learn is not installed (pip install 'depgraph[sklearn]')")
        return
    for row in honest_estimates().itertuples(index=False):
        out.print(
            f"  {row.design}: CV {row.cv_auc:.2f} vs external {row.external_auc:.2f} (optimism {row.optimism:+.2f})"
        )
    out.print(
        "Only the last design's estimate is near the external one: docs/honest-estimates.md has the study over 30 "
        "replicates and two models."
    )


@app.command(cls=Command, short_help="The bundled family cohort, end to end, with its report.")
def demo(
    output_dir: Annotated[
        Path,
        typer.Option("--output-dir", "-o", help="Where to write the cohort, graph, spec and report.", readable=False),
    ] = Path("depgraph-demo"),
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
) -> None:
    """The bundled family cohort, end to end: subject grouping → relatedness → duplicate audit →
    write back → composite/strict, each with folds and exposure; writes the tables, graph, spec and report."""
    from depgraph.cli.demo import AUDIT_THRESHOLD, honest_estimates, run_story

    signing = _signing_key(sign_key_env)
    plan = Outputs()
    plan.directory(output_dir, create=True)  # made, with its files, only when everything is written
    story = run_story()
    meta = story.cohort.metadata
    out.rule(styled(("depgraph demo: a family cohort", "bold")))
    out.print(
        f"{meta['family'].nunique()} families × 2 siblings × 3 visits, {meta['batch_id'].nunique()} batches, and "
        f"{len(story.cohort.duplicates)} specimens re-deposited under new sample and subject ids that nobody "
        f"declared — {len(meta)} samples with {story.cohort.features.shape[1] - 1} features each.\n"
    )
    out.print(
        styled(("1. build", "bold"), " the graph from the metadata and the kinship table (first degree, ≥ 0.177)")
    )
    _print_graph(story.graph, "study graph")
    out.print(styled("\n", ("2. validate", "bold"), " the declaration"))
    _print_report(story.validation)
    out.print(
        styled(
            "\n",
            ("3. audit", "bold"),
            f" the features for undeclared duplicates (cosine ≥ {AUDIT_THRESHOLD}): "
            f"{len(story.audited)} pair(s) found, written back as sample_duplicate_of",
        )
    )
    for row in story.audited.itertuples(index=False):
        out.print(f"  {row.id1} ~ {row.id2}  similarity {row.similarity:.5f}")
    out.print(styled("\n", ("4. derive", "bold"), " groups and 5 stratified folds, and check what crosses the folds"))
    for number, chapter in enumerate(story.chapters, start=1):
        table = chapter.exposure.table.set_index("relation")
        crossing = {r: int(table.loc[r, "crossing"]) for r in ("subject_related_to", "sample_duplicate_of")}
        out.print(
            f"  {number}) {chapter.title}: {chapter.partition.n_groups} groups — related subject pairs crossing a "
            f"fold: {crossing['subject_related_to']}, duplicate pairs crossing: {crossing['sample_duplicate_of']}"
        )
    last = story.chapters[-1]
    colour = "green" if last.exposure.nothing_crosses else "red"
    out.print(styled("\n", ("5. verdict", "bold"), f" for {last.title}: ", (last.exposure.verdict(), colour)))
    if last.exposure.nothing_crosses:
        out.print(
            "With relatedness and the audited duplicates declared, every family, with its re-deposits, stays on one "
            "side of every fold (batches and sites still mix, as blocks should)."
        )
    else:
        out.print(styled(("A declared dependency still crosses a fold: the plan is wrong.", "red")))
    _print_honest_estimates(out, honest_estimates)
    with plan:
        for table_name, frame in (
            ("metadata", meta),
            ("kinship", story.cohort.kinship),
            ("features", story.cohort.features),
            ("audited_duplicates", story.audited),
        ):
            write_table(frame, output_dir / f"{table_name}.csv")
        write_graph(story.graph_after, output_dir / "graph.json")
        _write_spec(last.spec, output_dir / "spec.json", signing)
        write_report(last.spec, output_dir / "report.html", story.graph_after, title="depgraph demo: family cohort")
    out.print(
        f"\nwrote metadata.csv, kinship.csv, features.csv, audited_duplicates.csv, graph.json, spec.json and "
        f"report.html to {output_dir}"
    )


# --------------------------------------------------------------------------- entry point
class Interrupted(BaseException):
    """SIGINT or SIGTERM: unwinds the command like KeyboardInterrupt, so every
    temporary file is removed on the way out (and click prints nothing)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the block (signals already ignored stay ignored)."""
    if threading.current_thread() is not threading.main_thread():  # handlers belong to the main thread
        yield
        return
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _raise_interrupted)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 1 findings, 2 bad input, 130/143 interrupted)."""
    command = typer.main.get_command(app)
    heard: list[warnings.WarningMessage] = []
    try:
        with _interruptible(), warnings.catch_warnings(record=True) as heard:  # warnings told once done (_tell)
            warnings.simplefilter("always", DepgraphWarning)
            result: Any = command.main(args=argv, prog_name="depgraph", standalone_mode=False)
    except Interrupted as exc:
        print("depgraph: interrupted", file=sys.stderr)
        return 128 + exc.signum
    except DepgraphError as exc:
        print(f"depgraph: {exc.code}: {for_the_command_line(exc.message)}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        _tell(heard)
        return int(exc.exit_code)
    except typer.Abort:
        print("depgraph: aborted", file=sys.stderr)
        return 130
    except typer.TyperException as exc:  # usage errors: unknown option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":
            print(exc.format_message())  # type: ignore[attr-defined]
            return 0
        message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
        print(f"depgraph: invalid_argument: {message}", file=sys.stderr)
        return 2
    finally:
        out.stderr = False  # a command writing to stdout sent its messages to stderr
    _tell(heard)
    return result if isinstance(result, int) else 0


#: The library's messages address Python callers by keyword argument (``columns={'sample_id': ...}``,
#: ``samples=``); the CLI shows its own options instead. Applied in order, to each error and warning it prints.
CLI_SPELLINGS = [(re.compile(pattern), spelling) for pattern, spelling in [
    (r"columns=\{'(\w+)': '(\w+)'\}", r"--column \1=\2"),
    (r"(?<![-\w])columns= maps", "--column maps"),
    (r"(?<![-\w])id_template uses", "--id-template uses"),
    (r"(?<![-\w])id_template='([^']*)'", r"--id-template '\1'"),
    (r"unknown='ignore', or --unknown ignore on the command line", "--unknown ignore"),
    (r"(?<![-\w])unknown='ignore'", "--unknown ignore"),
    (r"(?<![-\w])samples=", "--samples"),
    (r"(?<![-\w])strategy, via and priority apply", "--strategy, --via and --priority apply"),
    (r"(?<![-\w])strategy must be", "--strategy must be"),
    (r"(?<![-\w])via/priority take", "--via/--priority take"),
    (r"(?<![-\w])min_groups must be", "--min-groups must be"),
    (r"(?<![-\w])n_splits must be", "-k/--n-splits must be"),
    (r"(?<![-\w])allow_single_group \(--allow-single-group\)", "--allow-single-group"),
    (r" / allow_(unlinked|single_group)=True", ""),
    (r"(?<![-\w])via=(\S+)", r"--via \1"),
    (r"id_column / --id-column", "--id-column"),
    (r"(?<![-\w])stratify column", "--stratify column"),
    (r"(--encoding \S+) on the command line, encoding='[^']*' in Python", r"\1"),
]]  # fmt: skip


def for_the_command_line(message: str) -> str:
    """``message`` with the Python keyword arguments it names spelt as the CLI's options.

    >>> for_the_command_line("metadata 'm.csv' has no sample_id column; map yours with columns={'sample_id': 'x'}")
    "metadata 'm.csv' has no sample_id column; map yours with --column sample_id=x"
    """
    for pattern, spelling in CLI_SPELLINGS:
        message = pattern.sub(spelling, message)
    return message


def _tell(heard: list[warnings.WarningMessage]) -> None:
    """Print each DepgraphWarning a command raised, one line each on stderr:
    only when it did not fail, whose stderr is its one error line."""
    for w in heard:
        if isinstance(w.message, DepgraphWarning):
            print(f"depgraph: warning: {w.message.code}: {for_the_command_line(w.message.message)}", file=sys.stderr)


def run() -> None:  # pragma: no cover - console-script shim
    sys.exit(main())
