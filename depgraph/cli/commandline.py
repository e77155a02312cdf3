"""What every depgraph command shares: the :class:`Command` class (the command line as typed checked before any
value is converted, plain-text help), the options' checks, the outputs plan, signing, progress and printing.

Each command lives in its own module (``depgraph.cli.build``, ``depgraph.cli.folds``…), loaded by
:mod:`depgraph.cli.main` when that command runs; they all build on this one.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import textwrap
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from depgraph.cli.helptext import DEPRECATED, help_page, option_help, shown_spellings
from depgraph.cli.main import for_the_command_line
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.io.columnar import plan_document
from depgraph.io.outputs import Outputs, check_suffix
from depgraph.version import __version__
from depgraph.vocab import CANONICAL_COLUMNS

if TYPE_CHECKING:  # pragma: no cover - types only: a command loads what it uses
    from depgraph.graph.model import StudyGraph
    from depgraph.validation.rules import ValidationReport


class Output(Console):
    """The commands' standard output. In a terminal, a line of text wider than the terminal wraps at a space, its
    continuation indented under it, and a table (:meth:`print_table`) is cut at a gap between its columns, a last
    line saying how many columns it hides; within :meth:`widened` (a command's ``--wide``) nothing is wrapped or cut.
    Piped or redirected, every line is printed whole: what a script reads does not depend on a terminal's width."""

    wide = False

    def print(self, *objects: Any, **options: Any) -> None:
        if self._fitted() and len(objects) == 1 and isinstance(objects[0], str):
            objects = ("\n".join(wrapped(line, self.width) for line in objects[0].split("\n")),)
        super().print(*objects, **options)

    def print_table(self, text: str) -> None:
        """``text``, an aligned table (a header line, then rows), cut to the terminal's width when it is wider."""
        if not self._fitted():
            super().print(text)
            return
        lines = text.split("\n")
        cut = table_cut(lines, self.width)
        if cut is None:
            super().print(text)
            return
        hidden = sum(1 for token in re.finditer(r"\S+", lines[0]) if token.start() >= cut)
        super().print("\n".join(line[:cut].rstrip() for line in lines))
        self.print(f"… {hidden} more column{'s' if hidden != 1 else ''} past the terminal's {self.width}: "
                   "--wide shows the whole table")  # fmt: skip

    @contextlib.contextmanager
    def widened(self, wide: bool) -> Iterator[None]:
        """Within the block, with ``wide``, lines and tables are printed whole in a terminal too."""
        before, self.wide = self.wide, wide
        try:
            yield
        finally:
            self.wide = before

    def _fitted(self) -> bool:
        return self.is_terminal and not self.wide


def wrapped(line: str, width: int) -> str:
    """``line`` wrapped at spaces to ``width``, each continuation indented two more than the line (a word longer
    than the width, an id, stays whole)."""
    if len(line) <= width:
        return line
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.fill(line, width, subsequent_indent=indent + "  ", break_long_words=False,
                         break_on_hyphens=False)  # fmt: skip


def table_cut(lines: list[str], width: int) -> int | None:
    """The widest position before ``width`` at which every line has a space (a gap between two columns); None when
    the table fits, or has no such gap."""
    if max(map(len, lines), default=0) <= width:
        return None
    for cut in range(width, 0, -1):  # the text before position cut is shown: at most width characters
        if all(cut >= len(line) or line[cut] == " " for line in lines) and any(cut < len(line) for line in lines):
            return cut
    return None


#: ``--wide`` of a command printing a table: the whole table in a terminal too.
WIDE = typer.Option("--wide", help="Print the whole table however wide (a terminal's own width cuts it).")

# Output shows ids and file names, which may look like rich markup ("P[/y]1"): markup is off, and the few styled
# words are styled by Text spans (see styled), never by markup in a string.
out = Output(highlight=False, soft_wrap=True, markup=False)
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


# --------------------------------------------------------------------------- the command line as typed
#: Options naming a file a command writes: a trailing '/' names a directory, never the file.
FILE_OUTPUTS = frozenset({"output"})
#: Options naming a directory a command writes into.
DIRECTORY_OUTPUTS = frozenset({"output_dir", "plots_dir"})


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
    "method": "auto|exact|lsh", "metadata": "METADATA", "file": "FILE.json", "features": "FILE",
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

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DepgraphError as exc:
            raise as_option(ctx, exc) from None
        finally:
            out.stderr = False  # a command writing data to stdout sent its messages to stderr

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        params = [p for p in self.get_params(ctx) if not p.hidden]
        arguments = [p for p in params if p.param_type_name == "argument"]
        usage = ["[OPTIONS]", *(p.display_name_raw if p.required else f"[{p.display_name_raw}]" for p in arguments)]
        sections = {
            "Arguments": [(p.display_name_raw, p.help or "") for p in arguments],
            "Options": [option_help(p) for p in params if p.param_type_name == "option"],
        }
        formatter.write(help_page(f"{ctx.command_path} {' '.join(usage)}", self.help, sections, formatter.width))

    def get_short_help_str(self, limit: int = 45) -> str:
        """The command's line in ``depgraph --help``: its first sentence, whole (the list wraps it)."""
        return (self.short_help or (self.help or "").split(". ")[0].split("\n\n")[0]).rstrip(".")


def canonical(name: str, joiner: str) -> str:
    """A mode, strategy, scheme or format name as depgraph spells it: ``rule-based`` and ``rule_based`` are one
    name (``joiner`` is the one depgraph uses), in any case."""
    return name.strip().lower().replace("_" if joiner == "-" else "-", joiner)


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
    return "/".join((*shown_spellings(param.opts), *param.secondary_opts))


#: How a whole number is written on the command line: digits, with a sign at most.
INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


def _names_path(param: Any) -> bool:
    return getattr(param.type_descriptor, "annotation", None) in (Path, Path | None)


def _takes_integer(param: Any) -> bool:
    return getattr(param.type_descriptor, "annotation", None) in (int, int | None)


def _check_value(param: Any, value: str, spellings: set[str]) -> None:
    name = _spelt(param)
    # a value of spaces is refused where it names a file; elsewhere (a one-character separator, say) it may be meant
    if value == "" or (not value.strip() and _names_path(param)):
        raise DepgraphError("invalid_argument", f"{name} is given an empty value {value!r}", option=name)
    if _takes_integer(param) and not INTEGER_TEXT.fullmatch(value.strip()):  # typer would read "2.0" as 2
        raise DepgraphError("invalid_argument", f"{name} takes a whole number written as one (digits), not {value!r}",
                            option=name)  # fmt: skip
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
#: A JSON graph or spec written at least this large (bytes) is followed by a note suggesting the columnar form.
LARGE_JSON = 25 * 2**20
FORMAT_HELP = (
    "json (one file) or parquet (the columnar form: a directory of Parquet tables and a manifest); default: by "
    "the output's name, parquet for .dgspec and .dggraph."
)


def format_option() -> Any:
    """The ``--format json|parquet`` option of a command writing a graph or a spec (one spelling everywhere)."""
    return typer.Option("--format", metavar="json|parquet", help=FORMAT_HELP)


def outputs_plan(
    *files: Path | None, writes: tuple[str, ...] | None, inputs: tuple[Path | None, ...] = (), binary: bool = False
) -> Outputs:
    """The command's outputs plan, every file checked now, before any work; ``-`` is standard output,
    and then what depgraph says to the user goes to stderr so that stdout carries the data only. ``writes``: the
    kinds (:data:`~depgraph.io.outputs.SUFFIX_KINDS` values) the files receive; a suffix naming another kind is
    refused (``None``: the
    command checks the suffixes itself, later)."""
    plan = Outputs(inputs)
    for path in files:
        if path is not None:
            plan.file(path, binary=binary)  # what the path is (an input, a device, a directory) comes first
            if writes is not None:
                check_suffix(path, writes)
    if plan.writes_stdout:
        out.stderr = True  # reset by main()
    return plan


def document_outputs(
    output: Path, kind: str | None, form: str | None, inputs: tuple[Path | None, ...]
) -> tuple[Outputs, str]:
    """The plan of a command writing one graph or spec (:func:`~depgraph.io.columnar.plan_document`) and the form
    it is written in; the plan sends the command's words to stderr when it writes to standard output."""
    plan = Outputs(inputs)
    chosen = plan_document(plan, output, kind, form)
    if plan.writes_stdout:
        out.stderr = True  # reset by main()
    return plan, chosen


def tell_if_large(output: Path, form: str, what: str) -> None:
    """After a large JSON graph or spec is written to a file, one line on stderr suggesting the columnar form."""
    if form != "json" or str(output) == "-" or not output.is_file():
        return
    size = output.stat().st_size
    if size >= LARGE_JSON:
        suffix = ".dggraph" if what == "graph" else ".dgspec"
        typer.echo(
            f"depgraph: note: {str(output)!r} is a {size / 2**20:.0f} MB JSON {what}; its columnar form (-o "
            f"{output.with_suffix(suffix).name}, or --format parquet) is several times smaller and faster to read",
            err=True,
        )


def column_map(pairs: list[str] | None) -> dict[str, str]:
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


def name_list(text: str | None, option: str) -> list[str] | None:
    """``a,b`` as ``["a", "b"]`` (the callee checks the names); a list with no name, an empty one or one named
    twice is refused: ``--via subject,subject``, ``--modes a,,b`` or ``--balance ,`` say something else than the
    user meant."""
    if text is None:
        return None
    names = [m.strip() for m in text.split(",")]
    if not any(names):
        raise DepgraphError("invalid_argument", f"{option} {text!r} lists no name", option=option)
    if not all(names):  # "a,,b" or "a,b,": a name left out by mistake, not nothing
        raise DepgraphError("invalid_argument", f"{option} {text!r} holds an empty name (name {names.index('') + 1} "
                            "of the list): separate names with one comma", option=option)  # fmt: skip
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DepgraphError(
            "invalid_argument", f"{option} names {describe_ids(repeated)} more than once", option=option
        )
    return names


def number_list(text: str, option: str) -> list[float]:
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


def check_environment(variable: str | None, option: str) -> None:
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


def typed(ctx: typer.Context, parameter: str) -> bool:
    """Whether the option ``parameter`` (its Python name) was given on the command line rather than left at its
    default. Options that do not apply are refused when given, whatever their value."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def option_name(ctx: typer.Context, parameter: str) -> str:
    """How the user spells the option ``parameter``: ``--seed``, ``-k/--folds``."""
    found = next(p for p in ctx.command.params if p.name == parameter)
    return "/".join(found.opts)  # with a deprecated spelling, which the user may have typed


#: The library's key parameters and the options that give them: a key is given as the environment variable holding it.
KEY_OPTIONS = {"verify_key": "verify_key_env", "sign_key": "sign_key_env"}


def as_option(ctx: typer.Context, exc: DepgraphError) -> DepgraphError:
    """A library's refusal of one of its parameters (``details["parameter"]``, the message beginning with its name),
    said of the command's option as the user may have typed it (``-k/--n-splits``)."""
    parameter = exc.details.get("parameter")
    given = KEY_OPTIONS.get(parameter, parameter)
    if not any(p.name == given for p in ctx.command.params) or not exc.message.startswith(f"{parameter} "):
        return exc
    option = option_name(ctx, given)
    return DepgraphError(exc.code, option + exc.message[len(parameter) :], **{**exc.details, "option": option})


def refuse_given(ctx: typer.Context, where: str, *parameters: str) -> None:
    """Refuse the first of ``parameters`` given on the command line: it does not apply ``where``."""
    for parameter in parameters:
        if typed(ctx, parameter):
            option = option_name(ctx, parameter)
            raise DepgraphError("invalid_argument", f"{option} does not apply {where}", option=option)


def encoding_option(what: str) -> Any:
    """The ``--encoding CODEC`` option of a command reading ``what`` (one spelling and help for every command)."""
    return typer.Option(metavar="CODEC", help=f"Text encoding of {what} when not UTF-8, e.g. latin-1 or cp1252.")


def excel_safe_option() -> Any:
    """The ``--excel-safe`` flag of a command writing a CSV/TSV table (one spelling and help for every command)."""
    return typer.Option(
        "--excel-safe",
        help="CSV/TSV for spreadsheets: prefix with ' every cell a spreadsheet would run as a formula "
        "(first character = + - @ tab CR). The file is then not id-exact.",
    )


#: What a command writing ``--excel-safe`` adds to its "wrote FILE" line.
EXCEL_SAFE_NOTE = " (cells a spreadsheet would run as formulas prefixed with ')"


def refuse_excel_safe(excel_safe: bool, kind: str | None, written: str | None) -> None:
    """Refuse ``--excel-safe`` before anything is read unless the command writes a CSV or TSV table (``kind``):
    ``written`` says what it writes instead (``None``: no file at all)."""
    if not excel_safe or kind in ("csv", "tsv"):
        return
    if written is None:
        raise DepgraphError(
            "invalid_argument", "--excel-safe applies to a CSV/TSV table written with -o; none is written here",
            option="--excel-safe",
        )  # fmt: skip
    raise DepgraphError(
        "invalid_argument",
        f"--excel-safe writes CSV/TSV meant for spreadsheets; it does not apply to {written} (that file keeps ids "
        "exact and is not opened as formulas)",
        option="--excel-safe",
    )


def delimiter_option() -> Any:
    """The ``--delimiter`` option of a command reading the metadata table (one spelling and help everywhere)."""
    return typer.Option(
        metavar="DELIM", help="The metadata table's delimiter (, ; | or tab), not read from its header."
    )


def print_graph(graph: StudyGraph, title: str) -> None:
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


def print_report(report: ValidationReport, words: str = "options") -> None:
    """The validation report, one line a finding, the Python names in messages spelt as ``words`` (the commands'
    options, or a study file's keys: :func:`~depgraph.cli.main.for_the_command_line`)."""
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
                f" {issue.code} ({issue.level}, {issue.count}): {for_the_command_line(issue.message, words)}",
            )
        )


#: A table format and the kind of file it makes (:data:`~depgraph.io.outputs.SUFFIX_KINDS`).
TABLE_KINDS = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet"}


def text_table(output: Path) -> str:
    """``tsv`` for an output named ``.tsv``, else ``csv``."""
    return "tsv" if output.suffix.lower() == ".tsv" else "csv"
