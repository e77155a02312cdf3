"""The command line as a newcomer meets it (issue 11): ``--version``, ``python -m depgraph``, ``--help`` at 80 columns,
one name for one thing across subcommands with the old spellings deprecated, and messages that name CLI options."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.core
import typer.main

from depgraph.cli.main import COMMANDS, app, command, main
from depgraph.folds.parameters import PARAMETERS

WORKTREE = Path(__file__).resolve().parents[1]
#: The version as the package file declares it (pyproject reads it from there), read as text.
VERSION = re.search(r'^__version__ = "([^"]+)"', (WORKTREE / "depgraph" / "version.py").read_text(), re.M).group(1)


def process(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``args`` run in a separate process with the worktree's package first on the path."""
    environment = {**os.environ, "PYTHONPATH": str(WORKTREE), **env}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120, check=False
    )


CONSOLE = ("-c", "import sys; from depgraph.cli.main import main; sys.exit(main(sys.argv[1:]))")


# --------------------------------------------------------------------------- --version and python -m depgraph
@pytest.mark.parametrize("entry", [("-m", "depgraph"), CONSOLE], ids=["python-m-depgraph", "depgraph"])
def test_version(tmp_path, entry):
    done = process(*entry, "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"depgraph {VERSION}\n", "")


@pytest.mark.parametrize("args", [["--help"], ["validate", "missing.json"]], ids=["help", "bad-input"])
def test_python_m_depgraph_behaves_as_depgraph(tmp_path, args):
    # Same output, same exit code: the help, and a bad input's one line.
    as_module = process("-m", "depgraph", *args, cwd=tmp_path, COLUMNS="80")
    as_command = process(*CONSOLE, *args, cwd=tmp_path, COLUMNS="80")
    seen = (as_module.returncode, as_module.stdout, as_module.stderr)
    assert seen == (as_command.returncode, as_command.stdout, as_command.stderr)
    if args == ["--help"]:
        assert as_module.returncode == 0 and "Usage: depgraph" in as_module.stdout
    else:
        assert seen == (2, "", "depgraph: io: file 'missing.json' does not exist\n")


def test_version_in_process(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"depgraph {VERSION}\n"


# --------------------------------------------------------------------------- --help at 80 columns
COMMAND = typer.main.get_command(app)
#: Every command, each loaded from its module as `depgraph NAME` loads it.
SUBCOMMANDS = {name: command(name) for name in COMMANDS}
#: Long option names that a table cut at 80 columns (typer's rich help showed --kinship-thres…).
LONG_NAMES = ["--kinship-threshold", "--allow-multi-subject-samples", "--no-allow-multi-subject-samples",
              "--pseudonymize-ids", "--allow-single-group", "--splitgraph-version", "--verify-key-env",
              "--test-fraction", "--train-after", "--no-train-after", "--outcome-scope"]  # fmt: skip


def help_text(capsys, monkeypatch, *command: str, columns: int = 80) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    assert main([*command, "--help"]) == 0
    return capsys.readouterr().out


def spellings(command: typer.core.TyperCommand) -> list[str]:
    return [o for p in command.params for o in (*p.opts, *p.secondary_opts) if p.param_type_name == "option"]


@pytest.mark.parametrize("name", [None, *SUBCOMMANDS])
def test_help_at_80_columns(capsys, monkeypatch, name):
    command = COMMAND if name is None else SUBCOMMANDS[name]
    text = help_text(capsys, monkeypatch, *([name] if name else []))
    assert text.startswith(f"Usage: depgraph {name or ''}".rstrip())
    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert not re.search(r"<\w[\w\[\], ]*>|…", text), "a Python type or a cut name in the help"
    for spelling in spellings(command):
        if spelling in ("--ids-column", "--n-folds", "--folds"):  # deprecated: they work, the help does not offer them
            assert spelling not in text
            continue
        assert re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", text), f"{spelling} is not whole"
    for param in command.params:
        if param.param_type_name == "option" and not param.is_flag and param.name != "help":
            # the metavar follows the name: upper-case words (FILE, N, CANONICAL=COL) or the choices (error|ignore)
            longest = max((o for o in param.opts if o not in ("--ids-column", "--n-folds", "--folds")), key=len)
            metavar = re.search(rf"^  (?:-\w, )?{re.escape(longest)} (\S+)", text, re.M).group(1)
            assert metavar.split("=")[0].split(".")[0].isupper() or "|" in metavar, metavar
        if param.param_type_name == "argument":
            # one placeholder style for positional arguments: upper-case, a .json suffix for JSON documents
            assert all(part.split(".")[0].isupper() for part in param.metavar.split("|")), param.metavar
            assert f" {param.metavar}" in text.splitlines()[0]


def test_help_names_whole_and_descriptions_unbroken(capsys, monkeypatch):
    texts = {name: help_text(capsys, monkeypatch, name) for name in SUBCOMMANDS}
    everything = "\n".join(texts.values())
    for name in LONG_NAMES:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", everything), name
    # words are never cut at a hyphen: scheme and option names stay whole across a line break
    assert "group-kfold, stratified-group-kfold" in " ".join(texts["folds"].split())
    assert not re.search(r"\w-\n", everything)
    # the command list gives each command's first sentence whole, never cut with '...'
    top = help_text(capsys, monkeypatch)
    assert "..." not in top.split("Commands:")[1]
    assert "Assign folds to a spec's groups and write the spec carrying them" in " ".join(top.split())


def test_help_fits_a_narrow_terminal(capsys, monkeypatch):
    # At 60 columns (click's floor is 50) names stay whole; a long name puts its description on the next line.
    text = help_text(capsys, monkeypatch, "build", columns=60)
    assert "  --allow-multi-subject-samples / --no-allow-multi-subject-samples\n" in text
    assert max(len(line) for line in text.splitlines() if not line.lstrip().startswith("--allow")) <= 60


# --------------------------------------------------------------------------- one name for one thing
META = "sample_id,subject_id,batch_id\nS1,P1,B1\nS2,P1,B1\nS3,P2,B2\nS4,P3,B2\nS5,P4,B1\nS6,P5,B2\n"
FEATURES = "sample_id,f1,f2\nS1,1,0\nS2,1,0.0001\nS3,0,1\nS4,0.3,1\nS5,1,1\nS6,0.5,0.1\n"
SPLITGRAPH_SPEC = WORKTREE / "tests" / "data" / "conformance" / "splitgraph_json" / "spec_time.json"


def deprecation(old: str, new: str) -> str:
    minor = ".".join(VERSION.split(".")[:2])
    dropped = f"{minor.split('.')[0]}.{int(minor.split('.')[1]) + 1}"
    return f"depgraph: warning: deprecated: {old} is now {new}; the old spelling goes in {dropped}\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "meta.csv").write_text(META)
    (tmp_path / "features.csv").write_text(FEATURES.replace("sample_id", "sid"))
    assert main(["build", str(tmp_path / "meta.csv"), "-o", str(tmp_path / "graph.json")]) == 0
    assert main(["derive", str(tmp_path / "graph.json"), "--mode", "subject", "-o", str(tmp_path / "spec.json")]) == 0
    return {name: tmp_path / f for name, f in [("graph", "graph.json"), ("spec", "spec.json"),
                                                ("features", "features.csv"), ("dir", "")]}  # fmt: skip


def run(capsys, *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_audit_id_column_and_its_old_spelling(files, capsys):
    new = run(capsys, "audit", files["graph"], files["features"], "--id-column", "sid", "--threshold", "0.99")
    old = run(capsys, "audit", files["graph"], files["features"], "--ids-column", "sid", "--threshold", "0.99")
    assert new[0] == old[0] == 0 and new[1] == old[1] and "S1 ~ S2" in new[1]
    assert (new[2], old[2]) == ("", deprecation("--ids-column", "--id-column"))
    assert run(capsys, "audit", files["graph"], files["features"], "--id-column=sid")[2] == ""
    assert run(capsys, "audit", files["graph"], files["features"], "--ids-column=sid")[2] == old[2]


def test_validate_folds_and_its_old_spelling(files, capsys):
    runs = {spelling: run(capsys, "validate", files["graph"], "--json", spelling, "50") for spelling in
            ("-k", "--n-splits", "--folds", "--n-folds")}  # fmt: skip
    assert {r[1] for r in runs.values()} == {runs["-k"][1]} and all(r[0] == 0 for r in runs.values())
    assert runs["-k"][1] != run(capsys, "validate", files["graph"], "--json")[1]  # 50 folds: modes flagged
    assert (runs["-k"][2], runs["--n-splits"][2]) == ("", "")
    assert runs["--n-folds"][2] == deprecation("--n-folds", "-k/--n-splits")
    assert runs["--folds"][2] == deprecation("--folds", "-k/--n-splits")
    # the deprecated spelling still counts as the option: refused on a spec by the name the user typed
    code, _, err = run(capsys, "validate", files["spec"], "--n-folds", "5")
    assert code == 2 and err.startswith("depgraph: invalid_argument: -k/--n-splits/--folds/--n-folds does not apply")
    code, _, err = run(capsys, "validate", files["graph"], "-k", "5", "--n-folds", "4")
    assert code == 2 and "is given more than once" in err and err.count("\n") == 1


@pytest.mark.parametrize("spelling", ["rule_based", "rule-based", "Rule-Based"])
def test_strategy_rule_based_with_a_hyphen_or_an_underscore(files, capsys, spelling):
    target = files["dir"] / f"{spelling}.json"
    code, _, err = run(capsys, "derive", files["graph"], "--mode", "composite", "--strategy", spelling,
                         "--priority", "batch,subject", "-o", target)  # fmt: skip
    assert (code, err) == (0, "")
    doc = json.loads(target.read_text())
    assert doc["constraint"]["strategy"] == "rule_based"
    # batch first: S1, S2, S5 (B1) in one group, S3, S4, S6 (B2) in the other
    groups = dict(zip(doc["samples"]["sample_id"], doc["samples"]["group_id"], strict=True))
    assert len({groups["S1"], groups["S2"], groups["S5"]}) == 1 and groups["S1"] != groups["S3"]


@pytest.mark.parametrize(("option", "spellings"), [("--scheme", ["group-kfold", "group_kfold", "GROUP_KFOLD"])])
def test_scheme_names_with_a_hyphen_or_an_underscore(files, capsys, option, spellings):
    written = []
    for i, spelling in enumerate(spellings):
        target = files["dir"] / f"folds{i}.json"
        code, _, err = run(capsys, "folds", files["spec"], option, spelling, "-k", "2", "-o", target)
        assert (code, err) == (0, "")
        written.append(json.loads(target.read_text())["folds"]["splits"])
    assert all(w == written[0] for w in written)
    code, _, err = run(capsys, "folds", files["spec"], "--scheme", "group kfold", "-k", "2", "-o", files["dir"] / "x")
    assert code == 2 and "'group kfold'" in err
    assert json.loads((files["dir"] / "folds2.json").read_text())["folds"]["scheme"] == "group-kfold"  # stored lower


def test_folds_options_are_the_schemes_declared_parameters(capsys, monkeypatch):
    """Every scheme parameter is one ``folds`` option, spelt, described and defaulted as its declaration says."""
    command = SUBCOMMANDS["folds"]
    options = {p.name: p for p in command.params if p.param_type_name == "option"}
    text = " ".join(help_text(capsys, monkeypatch, "folds").split())
    for parameter in PARAMETERS:
        option = options[parameter.name]
        assert parameter.flags[0].split("/")[0] in option.opts
        assert parameter.help in text
    assert options["n_splits"].default == 5 and options["stratify"].default == "stratum"


def test_folds_takes_the_old_spelling_of_the_fold_count_with_a_warning(files, capsys):
    target = files["dir"] / "old-k.json"
    code, _, err = run(capsys, "folds", files["spec"], "--scheme", "group-kfold", "--folds", "2", "-o", target)
    assert code == 0 and err == deprecation("--folds", "-k/--n-splits")
    assert json.loads(target.read_text())["folds"]["parameters"]["n_splits"] == 2


def test_import_from_symmetric_with_export_to(files, capsys):
    new_target, old_target = files["dir"] / "new.json", files["dir"] / "old.json"
    new = run(capsys, "import", "--from", "splitgraph", SPLITGRAPH_SPEC, "-o", new_target)
    old = run(capsys, "import", "splitgraph", SPLITGRAPH_SPEC, "-o", old_target)
    assert new[0] == old[0] == 0
    assert "depgraph: warning: deprecated" not in new[2]
    assert deprecation("import splitgraph FILE", "import --from splitgraph FILE") in old[2]
    assert json.loads(new_target.read_text())["digest"] == json.loads(old_target.read_text())["digest"]
    # --from names where the file comes from, as --to names where it goes
    code, _, err = run(capsys, "import", SPLITGRAPH_SPEC, "-o", files["dir"] / "x.json")
    assert code == 2 and err == "depgraph: invalid_argument: Missing option '--from'.\n"
    code, _, err = run(capsys, "import", "--from", "rsample", SPLITGRAPH_SPEC, "-o", files["dir"] / "x.json")
    assert code == 2 and err == "depgraph: invalid_argument: import --from reads splitgraph files, not 'rsample'\n"
    code, _, err = run(capsys, "import", "rsample", SPLITGRAPH_SPEC, "-o", files["dir"] / "x.json")
    assert code == 2 and err == "depgraph: invalid_argument: import --from reads splitgraph files, not 'rsample'\n"
    assert not (files["dir"] / "x.json").exists()


# --------------------------------------------------------------------------- messages name CLI options
INPUTS = {
    "nosid.csv": "sid,subject_id\nS1,P1\nS2,P2\n",
    "both.csv": "sample_id,subject_id,patient\nS1,P1,Q1\nS2,P2,Q2\n",
    "k.kin0": "ID1\tID2\tKinship\nP1\tP2\t0.25\n",
    "dups.csv": "id1,id2\nS1,X9\n",
    "samples.txt": "S1\nX9\n",
    "feat.csv": "id,f1\nS1,1\nS2,1\n",
}
MESSAGE_CASES = [
    ("no-sample-id", ["build", "nosid.csv", "-o", "g.json"], "schema",
     "metadata 'nosid.csv' has no sample_id column (columns: sid, subject_id); map yours with "
     "--column sample_id=your_column"),
    ("column-onto-a-present-one", ["build", "both.csv", "--column", "subject_id=patient", "-o", "g.json"], "ambiguity",
     "metadata already has a subject_id column and --column maps another column onto it"),
    ("one-column-onto-two", ["build", "both.csv", "--column", "batch_id=patient", "--column", "study_id=patient", "-o",
     "g.json"], "invalid_argument", "--column maps the column 'patient' onto batch_id and study_id; a column holds "
     "one kind of id: map each canonical column to a column of its own"),
    ("id-template-without-fid", ["build", "{meta}", "--kinship", "k.kin0", "--kinship-threshold", "0.1",
     "--id-template", "{FID}_{IID}", "-o", "g.json"], "invalid_argument",
     "--id-template uses {FID} but KING kinship file 'k.kin0' has no family-id column; use --id-template '{IID}'"),
    ("duplicates-unknown-ids", ["build", "{meta}", "--duplicates", "dups.csv", "-o", "g.json"], "reference",
     "duplicate pairs 'dups.csv' names 1 Sample id(s) not in the graph: X9 (to drop them instead: --unknown ignore)"),
    ("samples-unknown", ["derive", "{graph}", "--mode", "subject", "--samples", "samples.txt", "-o", "s.json"],
     "reference", "samples file 'samples.txt' names 1 sample(s) not in the graph: X9"),
    ("strategy-outside-composite", ["derive", "{graph}", "--mode", "subject", "--strategy", "strict", "-o", "s.json"],
     "invalid_argument", "--strategy, --via and --priority apply to mode 'composite', not 'subject'"),
    ("strategy-unknown", ["derive", "{graph}", "--mode", "composite", "--strategy", "bogus", "-o", "s.json"],
     "invalid_argument", "--strategy must be one of strict, rule_based, not 'bogus'"),
    ("via-not-a-mode", ["derive", "{graph}", "--mode", "composite", "--via", "kinship", "-o", "s.json"],
     "invalid_argument", "--via/--priority take mode names"),
    ("min-groups-negative", ["derive", "{graph}", "--mode", "subject", "--min-groups", "-1", "-o", "s.json"],
     "invalid_argument", "--min-groups must be an integer of at least 1, not -1"),
    ("single-group-with-via", ["derive", "{graph}", "--mode", "composite", "--allow-single-group", "--via", "subject",
     "-o", "s.json"], "invalid_argument",
     "--allow-single-group applies to mode 'composite' without via or priority, not to composite with --via subject"),
    ("audit-no-id-column", ["audit", "{graph}", "feat.csv"], "schema",
     "features have no 'sample_id' column; name the id column with --id-column"),
    ("validate-one-fold", ["validate", "{graph}", "-k", "1"], "invalid_argument",
     "-k/--n-splits must be an integer of at least 2, not 1"),
    ("folds-written-as-a-decimal", ["folds", "{spec}", "--scheme", "group-kfold", "-k", "2.0", "-o", "f.json"],
     "invalid_argument", "-k/--n-splits takes a whole number written as one (digits), not '2.0'"),
    ("repeats-written-as-a-decimal", ["folds", "{spec}", "--scheme", "group-kfold", "--repeats", "2.0", "-o",
     "f.json"], "invalid_argument", "--repeats takes a whole number written as one (digits), not '2.0'"),
    ("seed-written-as-a-decimal", ["folds", "{spec}", "--scheme", "holdout", "--seed", "7.0", "-o", "f.json"],
     "invalid_argument", "--seed takes a whole number written as one (digits), not '7.0'"),
    ("repeats-beyond-any-plan", ["folds", "{spec}", "--scheme", "group-kfold", "--repeats", "1000000000", "-o",
     "f.json"], "invalid_argument", "--repeats must be an integer from 1 to 10000, not 1000000000"),
    ("folds-times-repeats-beyond-any-plan", ["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "--repeats",
     "6000", "-o", "f.json"], "invalid_argument",
     "group-kfold: 2 folds × 6000 repeats is 12,000 splits; a plan holds at most 10,000"),
    ("joint-beyond-the-balance-columns", ["folds", "{spec}", "--scheme", "balanced-holdout", "--balance",
     "batch_group", "--joint", "99", "-o", "f.json"], "invalid_argument",
     "joint is 99, but the holdout balances 1 column(s)"),
    ("by-the-table-column", ["folds", "{spec}", "--scheme", "logo", "--by", "batch_id", "-o", "f.json"],
     "invalid_argument", "the table's batch_id became the spec's batch_group; name 'batch_group'"),
    ("stratify-not-in-spec", ["folds", "{spec}", "--scheme", "stratified-group-kfold", "--stratify", "nope", "-o",
     "f.json"], "invalid_argument", "--stratify column 'nope' is not in the spec"),
]  # fmt: skip
#: Python keyword arguments a CLI user never sees.
PYTHON_SPELLINGS = re.compile(r"(?<![-\w])(columns|id_template|unknown|samples|strategy|via|min_groups|n_splits|"
                              r"allow_unlinked|allow_single_group|id_column|stratify|encoding)=|"
                              r"id_column")  # fmt: skip


@pytest.mark.parametrize(("args", "code", "message"), [pytest.param(*c[1:], id=c[0]) for c in MESSAGE_CASES])
def test_messages_name_cli_options(files, capsys, monkeypatch, args, code, message):
    monkeypatch.chdir(files["dir"])
    for name, text in INPUTS.items():
        Path(name).write_text(text)
    subs = {"{meta}": "meta.csv", "{graph}": str(files["graph"]), "{spec}": str(files["spec"])}
    status, _, err = run(capsys, *[subs.get(a, a) for a in args])  # meta.csv: the files fixture's metadata
    assert status == 2 and err.startswith(f"depgraph: {code}: ") and err.count("\n") == 1
    assert message in err
    assert not PYTHON_SPELLINGS.search(err), err
    for name in INPUTS:  # a file is named once
        assert err.count(name) <= 1, err


# --------------------------------------------------------------------------- did you mean; shell completion
@pytest.mark.parametrize(("args", "line"), [
    (["dervie", "g.json"], "No such command 'dervie'; did you mean 'derive'?"),
    (["explian", "g.json", "S1"], "No such command 'explian'; did you mean 'explain'?"),
    (["zzz"], "No such command 'zzz'."),
    (["derive", "g.json", "--mod", "subject"], "No such option: --mod; did you mean --mode?"),
    (["derive", "g.json", "--zzzz"], "No such option: --zzzz"),
])  # fmt: skip
def test_a_mistyped_command_or_option_is_named_with_the_nearest_one(capsys, args, line):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"depgraph: invalid_argument: {line}\n"


def test_completion_completes_commands_and_their_options(monkeypatch, capsys):
    """What the shell asks through the variable typer's completion sets (bash's words here): the commands, loaded
    lazily, and a command's options."""
    monkeypatch.setenv("_DEPGRAPH_COMPLETE", "complete_bash")
    for words, cword, expected in (("depgraph der", "1", ["derive"]), ("depgraph ex", "1", ["export", "explain"]),
                                   ("depgraph derive --mo", "2", ["--mode"])):  # fmt: skip
        monkeypatch.setenv("COMP_WORDS", words)
        monkeypatch.setenv("COMP_CWORD", cword)
        with pytest.raises(SystemExit) as done:
            main([])
        assert done.value.code == 0 and capsys.readouterr().out.split() == expected, words


@pytest.mark.parametrize("shell", ["tcsh", None])
def test_completion_in_a_shell_it_cannot_complete_names_the_shells_it_can(monkeypatch, capsys, tmp_path, shell):
    import shellingham

    def detect() -> tuple[str, str]:
        if shell is None:
            raise shellingham.ShellDetectionFailure()
        return shell, f"/bin/{shell}"

    monkeypatch.setattr(shellingham, "detect_shell", detect)
    monkeypatch.setenv("HOME", str(tmp_path))
    for option in ("--install-completion", "--show-completion"):
        assert main([option]) == 2
        captured = capsys.readouterr()
        said = f"the shell running depgraph is {shell}" if shell else "no shell could be told running depgraph"
        assert captured.err == (f"depgraph: invalid_argument: shell completion: {said}; depgraph completes bash, "
                                "zsh, fish, powershell and pwsh\n")  # fmt: skip
    assert not list(tmp_path.iterdir())  # nothing installed


def test_completion_installs_for_bash(monkeypatch, capsys, tmp_path):
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda: ("bash", "/bin/bash"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["--install-completion"])
    assert done.value.code == 0
    script = (tmp_path / ".bash_completions" / "depgraph.sh").read_text()
    assert "_DEPGRAPH_COMPLETE=complete_bash" in script and "complete -o default -F" in script
    assert ".bash_completions/depgraph.sh" in (tmp_path / ".bashrc").read_text()
