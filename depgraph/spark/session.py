"""Where the Spark engine runs: the caller's session or a local one, and the checkpoints that keep an iterative
job's lineage short.

Every function of the engine takes its session from the DataFrames it is given; :func:`local_session` is for the
command line and tests (a cluster's ``spark-submit`` makes the session and the engine uses it).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from depgraph.errors import DepgraphError

# PySpark 4 warns on every pandas conversion that it is not yet tested with pandas 3; the engine converts only
# small driver-side tables (timepoints, hubs), which it tests.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

#: Settings of a session the engine starts itself: few shuffle partitions (the defaults' 200 cost more than they
#: spread on a laptop or in CI; :func:`fit_partitions` raises them for large graphs), no web UI, and no join
#: broadcast planned from file sizes: a Parquet column of sorted row numbers compresses so well that Spark takes a
#: table of 10^7 samples for a small one and runs the driver out of memory broadcasting it. Joins are broadcast
#: when the engine asks (hubs, timepoints) or when a shuffle has measured a side as small (adaptive execution).
LOCAL_SETTINGS: dict[str, str] = {
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}


def submitted() -> bool:
    """Whether this process was started by ``spark-submit`` (which hands it a running JVM and its settings)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


#: How long each address of a standalone master is given to accept a connection before a session is started on it:
#: Spark itself retries its registration for a minute and then says only that its context was stopped.
MASTER_ANSWER_SECONDS = 5.0


def check_standalone_master(master: str) -> None:
    """``engine``, naming each address and why, when no host of a standalone master (``spark://host:port``, or
    several for high availability, ``spark://h1:7077,h2:7077``) accepts a connection on its port within
    :data:`MASTER_ANSWER_SECONDS`. Other masters (``local[2]``, ``yarn``, ``k8s://…``) and addresses this does not
    read are left to Spark, which names what is wrong with them."""
    if not master.startswith("spark://"):
        return
    reasons = []
    for address in (a.strip() for a in master.removeprefix("spark://").split(",")):
        host, colon, port = address.rpartition(":")
        if not colon or not host or not port.isdigit():
            return
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=MASTER_ANSWER_SECONDS):
                return
        except OSError as exc:
            reasons.append(f"{address} ({exc.strerror or str(exc) or type(exc).__name__})")
    raise DepgraphError(
        "engine", f"Spark could not start on {master}: no standalone master answers at {', '.join(reasons)}"
    )


def local_session(master: str | None = None, settings: dict[str, str] | None = None, *, quiet: bool = False
                  ) -> SparkSession:  # fmt: skip
    """The active session if there is one; under ``spark-submit``, a session on its master and settings (and
    ``settings``); else a new JVM and session on ``master`` (default ``local[2]``; ``spark://host:7077``, ``yarn``)
    with :data:`LOCAL_SETTINGS` and ``settings`` (``{"spark.driver.memory": "1g"}``).

    ``quiet`` sends the new JVM's own output (its log lines, its warnings, the stack traces of failed tasks) to
    the null device, for the command line, whose stderr is its one line; the failure still reaches Python.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if master is not None:  # a master that cannot be reached is named now, not after a minute of Spark's retries
        check_standalone_master(master)
    if not submitted() and (master or "local").startswith("local"):
        # Spark starts its Python workers with PYSPARK_PYTHON, else the first python3 on the PATH, which may lack
        # pyarrow (a virtualenv run without activating it): on this machine they run the driver's Python. A
        # cluster's workers run what the cluster says (a path here may not exist there).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("depgraph")
    if master is not None or not submitted():
        builder = builder.master(master or "local[2]")
    for key, value in {**({} if submitted() else LOCAL_SETTINGS), **(settings or {})}.items():
        builder = builder.config(key, value)
    with _jvm_output_discarded(quiet and not submitted()):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.conf.get("spark.sql.shuffle.partitions")  # the SQL settings checked now: a bad one fails the start
    return spark


@contextlib.contextmanager
def session_request(run: Any, master: str | None = None, conf: dict[str, str] | None = None) -> Iterator[None]:
    """The Spark engine started for a run of several stages (:func:`depgraph.engines.running`: ``depgraph run`` of
    a study file saying ``engine = "spark"``, ``derive`` and ``folds --engine spark``): ``run.options`` the session
    (:func:`local_session` on ``master`` with the settings ``conf``, its JVM's own output sent to the null device)
    and whether the stages size its shuffle partitions to the data (a session started here, unless ``conf`` sets
    them). A failure of Spark rather than of the input is ``engine``: "Spark could not <run.doing>: …"."""
    if master or not submitted():
        run.doing = f"start on {master or 'local[2]'}"
    try:
        spark = local_session(master, conf, quiet=True)
        sized = not submitted() and "spark.sql.shuffle.partitions" not in (conf or {})
        run.options = {"spark": spark, "sized": sized}
        run.doing = "run"
        yield
    except Exception as exc:
        reason = failure(exc)  # depgraph's own errors and Python's pass as they are
        if reason is None:
            raise
        raise DepgraphError("engine", f"Spark could not {run.doing}: {reason}") from None


@contextlib.contextmanager
def _jvm_output_discarded(discard: bool) -> Iterator[None]:
    """This process's stdout and stderr pointed at the null device while a JVM is launched, so the JVM (which keeps
    the descriptors it was born with) writes there for good; this process's own restored after."""
    if not discard:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    kept = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(kept[0], 1)
        os.dup2(kept[1], 2)
        for fd in (*kept, null):
            os.close(fd)


def failure(exc: BaseException) -> str | None:
    """What went wrong in Spark, in one line, when ``exc`` is a failure of Spark or of the JVM rather than of
    depgraph (a master it cannot reach, a heap too small for the data, a lost executor); None otherwise."""
    if not isinstance(exc, (Py4JError, PySparkException)):
        return None
    text = _java_text(exc)
    reason = first_line(text) or type(exc).__name__
    if "OutOfMemoryError" in text or "Not enough memory" in text:
        reason += " (out of memory: give Spark more, e.g. spark.driver.memory, or more shuffle partitions)"
    elif isinstance(exc, Py4JError) and not isinstance(exc, Py4JJavaError):
        reason += " (the Spark JVM stopped answering: killed, perhaps for memory)"
    return reason


def first_line(text: str) -> str:
    """The first non-blank line of one of Spark's messages, at most :data:`MOST_REASON` characters (its stack
    trace and the lines after left out)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:MOST_REASON]


def unreadable_file(exc: BaseException) -> str | None:
    """Spark's one line when ``exc`` says a file is not readable as what it was read as (not a Parquet file, a
    damaged footer, no schema to infer); None for any other failure."""
    if not isinstance(exc, (Py4JError, PySparkException)):
        return None
    text = _java_text(exc)
    return first_line(text) if any(sign in text for sign in UNREADABLE) else None


#: How Spark names a file it cannot read (its error classes).
UNREADABLE = (
    "FAILED_READ_FILE",
    "UNABLE_TO_INFER_SCHEMA",
    "CANNOT_READ_FILE_FOOTER",
    "is not a Parquet file",
    "MALFORMED_RECORD",
    "MALFORMED_CSV",
)


def _java_text(exc: BaseException) -> str:
    """The message of the Java exception behind ``exc`` (Spark's error class first), without py4j's preamble."""
    if isinstance(exc, Py4JJavaError):
        try:
            return str(exc.java_exception.toString())
        except Py4JError:  # the JVM is gone
            return str(exc.errmsg)
    return str(exc)


#: Characters of Spark's own message kept in the one line.
MOST_REASON = 300


#: Samples per shuffle partition that a 1 GB executor heap carries through the components' aggregations (at 10^7
#: samples in ``local[2]``, 8 partitions ran out of heap; 50 did not).
SAMPLES_PER_PARTITION = 200_000
#: Shuffle partitions of a session the engine starts itself, at least.
FEWEST_PARTITIONS = 8


def shuffle_partitions(n_samples: int) -> int:
    """Shuffle partitions for a graph of ``n_samples``: one per :data:`SAMPLES_PER_PARTITION`, at least
    :data:`FEWEST_PARTITIONS` (adaptive execution merges the small ones).

    >>> shuffle_partitions(10**6), shuffle_partitions(10**7)
    (8, 50)
    """
    return max(FEWEST_PARTITIONS, -(-n_samples // SAMPLES_PER_PARTITION))


def fit_partitions(spark: SparkSession, n_samples: int) -> int:
    """Set the session's shuffle partitions for a graph of ``n_samples`` (:func:`shuffle_partitions`) and return
    them: for a session the engine started itself (a cluster's own setting is the cluster's to choose)."""
    partitions = shuffle_partitions(n_samples)
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    return partitions


def checkpointed(frame: DataFrame) -> DataFrame:
    """``frame`` computed now and its lineage cut: a reliable checkpoint when the session has a checkpoint
    directory (``spark.sparkContext.setCheckpointDir``; what a cluster should set, so a lost executor does not lose
    the step), else a local one (kept by the executors)."""
    if frame.sparkSession.sparkContext.getCheckpointDir() is not None:
        return frame.checkpoint(eager=True)
    return frame.localCheckpoint(eager=True)
