"""The ``depgraph`` command: its entry point.

Exit codes: 0 ok, 1 findings (validation errors), 2 bad input (one line on
stderr: ``depgraph: <code>: <what is wrong and where>``), 130 / 143 interrupted
by SIGINT / SIGTERM (one line, ``depgraph: interrupted``). Nothing is written
when a command fails or is interrupted: each command checks all its outputs
before its work and commits them together at the end (:mod:`depgraph.io.outputs`).

Start-up is quick because this module loads no command: :data:`COMMANDS` names the module of each, which is
imported when that command runs (or shows its help), with only the libraries it uses. ``depgraph --help`` and
``depgraph --version`` load typer and this module, never pandas, numpy or scipy.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import json
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import typer

from depgraph.cli.helptext import help_page, option_help
from depgraph.errors import DepgraphError, DepgraphWarning
from depgraph.version import __version__

#: Every command, in the order ``depgraph --help`` lists them: the module that defines it, and its line in that
#: list (the command's first sentence; tests/test_cli_usage.py holds the two equal).
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("depgraph.cli.init", "Write a starter study file from a metadata table, every choice explicit"),
    "run": ("depgraph.cli.run", "Run a study file in one process: build, validate, derive, assign folds, write"),
    "build": ("depgraph.cli.build", "Build a study graph from metadata (+ kinship, coordinates, duplicates)"),
    "validate": ("depgraph.cli.validate", "Validate a study graph, or check a split spec"),
    "derive": ("depgraph.cli.derive", "Derive one group per sample and write a split spec"),
    "import": ("depgraph.cli.exchange", "Read a splitGraph split_spec or dependency_graph"),
    "export": ("depgraph.cli.exchange", "Write a spec or a graph in its other form, for other tools, or as a table"),
    "diff": ("depgraph.cli.diff", "Which samples changed group between two specs"),
    "why": ("depgraph.cli.why", "Why two samples are never apart: the chains of dependencies that join them"),
    "explain": ("depgraph.cli.explain", "What holds a group together: its make-up and its bridges"),
    "compare": ("depgraph.cli.compare", "Groupings of one graph side by side"),
    "neighbors": ("depgraph.cli.query", "The neighbours of nodes, one row per edge"),
    "query": ("depgraph.cli.query", "The graph's nodes of some types, or edges of some relations"),
    "folds": ("depgraph.cli.folds", "Assign folds to a spec's groups and write the spec carrying them"),
    "check": ("depgraph.cli.check", "Verify a split made elsewhere: list every spec group that straddles it"),
    "audit": ("depgraph.cli.audit", "Find near-identical samples; optionally declare them"),
    "report": ("depgraph.cli.report", "Write a self-contained HTML report"),
    "evaluate": ("depgraph.cli.evaluate", "AUC and metrics at a training threshold, per split and block"),
    "demo": ("depgraph.cli.demo", "The bundled family cohort, end to end, with its report"),
}


class Group(typer.core.TyperGroup):
    """``depgraph`` itself: each command loaded from its module when it is asked for; the help, as plain text that
    fits the terminal like the commands' own (:func:`~depgraph.cli.helptext.help_page`), lists them from
    :data:`COMMANDS` without loading any."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(COMMANDS)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:
        """The command ``args`` name; a name that is none, with the nearest command's name when one is close."""
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            near = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
            ctx.fail(f"No such command {name!r}" + (f"; did you mean {near[0]!r}?" if near else "."))
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = command(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        options = [option_help(p) for p in self.get_params(ctx) if not p.hidden]
        commands = [(name, short) for name, (_, short) in COMMANDS.items()]
        page = help_page(f"{ctx.command_path} [OPTIONS] COMMAND [ARGS]...", self.help, {"Options": options,
                         "Commands": commands}, formatter.width)  # fmt: skip
        formatter.write(page)


def command(name: str) -> Any:
    """The click command ``depgraph NAME`` runs, from its module (:data:`COMMANDS`)."""
    module = importlib.import_module(COMMANDS[name][0])
    made = typer.main.get_command(module.app)
    return made.commands[name] if isinstance(made, typer.core.TyperGroup) else made


app = typer.Typer(
    name="depgraph",
    help="Declare what must never be split between training and evaluation data; derive leakage-free groups.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion [bash|zsh|fish|powershell|pwsh]
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=Group,
)


def _print_version(asked: bool) -> None:
    if asked:
        print(f"depgraph {__version__}")
        raise typer.Exit()


@app.callback()
def depgraph_command(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Declare what must never be split between training and evaluation data; derive leakage-free groups."""


#: The shells ``depgraph --install-completion`` / ``--show-completion`` complete in (typer's).
COMPLETION_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _refuse_unsupported_shell(argv: list[str]) -> None:
    """``--install-completion`` and ``--show-completion`` complete the shell running depgraph; one that typer
    cannot complete is refused naming the shells it can (typer itself would print only that it cannot)."""
    if not {"--install-completion", "--show-completion"} & set(argv):
        return
    import shellingham

    try:
        shell = shellingham.detect_shell()[0]
    except shellingham.ShellDetectionFailure:
        shell = None
    if shell not in COMPLETION_SHELLS:
        running = f"the shell running depgraph is {shell}" if shell else "no shell could be told running depgraph"
        raise DepgraphError("invalid_argument", f"shell completion: {running}; depgraph completes "
                            f"{', '.join(COMPLETION_SHELLS[:-1])} and {COMPLETION_SHELLS[-1]}")  # fmt: skip


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
    group = typer.main.get_command(app)
    heard: list[warnings.WarningMessage] = []
    try:
        _refuse_unsupported_shell(sys.argv[1:] if argv is None else argv)
        with _interruptible(), warnings.catch_warnings(record=True) as heard:  # warnings told once done (_tell)
            warnings.simplefilter("always", DepgraphWarning)
            result: Any = group.main(args=argv, prog_name="depgraph", standalone_mode=False)
    except Interrupted as exc:
        print("depgraph: interrupted", file=sys.stderr)
        return 128 + exc.signum
    except DepgraphError as exc:
        print(f"depgraph: {exc.code}: {for_the_command_line(exc.message, exc.details.get('words', ''))}",
              file=sys.stderr)  # fmt: skip
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
        if type(exc).__name__ == "NoSuchOption" and getattr(exc, "possibilities", None):  # click's near names
            near = " or ".join(sorted(exc.possibilities))  # type: ignore[attr-defined]
            message = f"No such option: {exc.option_name}; did you mean {near}?"  # type: ignore[attr-defined]
        print(f"depgraph: invalid_argument: {message}", file=sys.stderr)
        return 2
    _tell(heard)
    return result if isinstance(result, int) else 0


#: The library's messages address Python callers by keyword argument (``columns={'sample_id': ...}``,
#: ``samples=``); the CLI shows its own options instead. Applied in order, to each error and warning it prints.
Spelling = str | Callable[[re.Match[str]], str]
CLI_SPELLINGS: list[tuple[re.Pattern[str], Spelling]] = [(re.compile(pattern), spelling) for pattern, spelling in [
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


#: The same, for an error raised while a study file runs (``depgraph run``): the keys of the study file, which carry
#: the Python names, where a message names a keyword argument.
STUDY_SPELLINGS: list[tuple[re.Pattern[str], Spelling]] = [(re.compile(pattern), spelling) for pattern, spelling in [
    (r"--allow-(unlinked|single-group) / allow_(\w+)=True", r"allow_\2 = true in [grouping]"),
    (r"allow_single_group \(--allow-single-group\) applies", "allow_single_group applies"),
    (r"--via \(e\.g\. --via ([\w,]+)\)", lambda m: f"via (e.g. via = {json.dumps(m[1].split(','))})"),
    (r"(?<![-\w])--via(?![-\w])", "via in [grouping]"),
    (r"--duplicates FILE, or find them with depgraph audit --write-back",
     "a [duplicates] table: a path of pairs, or features to audit"),
    (r"--duplicates\)", "[duplicates])"),
    (r"\(written with --sign-key-env\)", "(written with sign_key_env in [outputs])"),
    (r"id_column / --id-column", "id_column in [duplicates]"),
    (r"into the spec with derive --attributes", "into the spec with attributes in [outputs]"),
    (r"needs --by COL", 'needs by = "COL" in [folds]'),
    (r"(?<![-\w])--(by|stratify|balance|key) column", r"\1 column"),
    (r"columns=\{'(\w+)': '([^']*)'\}", r'\1 = "\2" in [metadata.columns]'),
    (r"(?<![-\w])columns= maps", "[metadata.columns] maps"),
    (r"(?<![-\w])id_template='([^']*)'", r'id_template = "\1"'),
    (r"unknown='ignore', or --unknown ignore on the command line", 'unknown = "ignore"'),
    (r"(?<![-\w])unknown='ignore'", 'unknown = "ignore"'),
    (r"(?<![-\w])samples=", "[grouping] samples"),
    (r"allow_single_group \(--allow-single-group\)", "allow_single_group = true"),
    (r" / allow_(unlinked|single_group)=True", r" (allow_\1 = true in [grouping])"),
    (r"(?<![-\w])via=(\S+)", r"via = \1"),
    (r"--encoding (\S+) on the command line, encoding='[^']*' in Python", r'encoding = "\1"'),
]]  # fmt: skip


def for_the_command_line(message: str, words: str = "options") -> str:
    """``message`` with the Python keyword arguments it names spelt as the CLI's options (``words="study"``: as
    the keys of a study file).

    >>> for_the_command_line("metadata 'm.csv' has no sample_id column; map yours with columns={'sample_id': 'x'}")
    "metadata 'm.csv' has no sample_id column; map yours with --column sample_id=x"
    >>> for_the_command_line("map yours with columns={'sample_id': 'x'}", words="study")
    'map yours with sample_id = "x" in [metadata.columns]'
    """
    for pattern, spelling in STUDY_SPELLINGS if words == "study" else CLI_SPELLINGS:
        message = pattern.sub(spelling, message)
    return message


def _tell(heard: list[warnings.WarningMessage]) -> None:
    """Print each DepgraphWarning a command raised, one line each on stderr:
    only when it did not fail, whose stderr is its one error line."""
    for w in heard:
        if isinstance(w.message, DepgraphWarning):
            print(f"depgraph: warning: {w.message.code}: {for_the_command_line(w.message.message)}", file=sys.stderr)


#: The memory pool Arrow allocates from in a ``depgraph`` process (Arrow's own setting, read when pyarrow first
#: allocates). Arrow's default, mimalloc, hands the large buffers a command frees back to the operating system
#: and faults fresh pages in for the next ones; the C library's malloc reuses them: on a million samples a
#: command spends a third less time in the kernel and the whole path runs about a tenth faster (paired runs,
#: benchmarks/). A user's own ARROW_DEFAULT_MEMORY_POOL is kept. The library never sets it: a process it is
#: imported into keeps Arrow's default.
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")


def prepare_process() -> None:
    """What the console script sets before any command loads pyarrow: :data:`ARROW_POOL`."""
    os.environ.setdefault(*ARROW_POOL)


def run() -> None:  # pragma: no cover - console-script shim
    """The console script: run the command, then leave at once. Every output is committed, synced and closed by
    then, so the process skips freeing its heap object by object (a quarter of a second after a command on a
    million samples). Before the command, :func:`prepare_process`."""
    prepare_process()
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more to say
        pass
    os._exit(code)
