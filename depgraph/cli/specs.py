"""What the commands that write or show a split spec share: the signing key of ``--sign-key-env``, what a command
says of a spec it signed, and the one-line account of a spec."""

from __future__ import annotations

import numpy as np

from depgraph.cli.commandline import SEVERITY_STYLE, check_environment, out, styled
from depgraph.common.identifiers import formula_like
from depgraph.errors import describe_ids
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import key_from_env


def signing_key(variable: str | None) -> bytes | None:
    """The key of ``--sign-key-env`` (the pseudonymisation key rules), read before any work."""
    check_environment(variable, "--sign-key-env")
    return None if variable is None else key_from_env(variable, purpose="signing")


def signed_note(spec: SplitSpec) -> str:
    return signed_by(None if spec.signature is None else spec.signature.key_fingerprint)


def signed_by(fingerprint: str | None) -> str:
    """What a command says of a spec it signed with the key of ``fingerprint`` (nothing when it signed none)."""
    return "" if fingerprint is None else f" (signed, key fingerprint {fingerprint})"


SIGN_HELP = "Sign the spec: HMAC-SHA256 of its digest under the key in this environment variable."


def print_spec(spec: SplitSpec, digest: str | None = None, signed: bool = False) -> None:
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
