"""Where the Spark engine runs: the caller's session or a local one, and the checkpoints that keep an iterative
job's lineage short.

Every function of the engine takes its session from the DataFrames it is given; :func:`local_session` is for the
command line and tests (a cluster's ``spark-submit`` makes the session and the engine uses it).
"""

from __future__ import annotations

import warnings

from pyspark.sql import DataFrame, SparkSession

# PySpark 4 warns on every pandas conversion that it is not yet tested with pandas 3; the engine converts only
# small driver-side tables (timepoints, hubs), which it tests.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

#: Settings of a session the engine starts itself: few shuffle partitions (the defaults' 200 cost more than they
#: spread on a laptop or in CI), no web UI.
LOCAL_SETTINGS: dict[str, str] = {
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}


def local_session(master: str = "local[2]", settings: dict[str, str] | None = None) -> SparkSession:
    """The active session if there is one, else a new one on ``master`` (``local[2]``, ``spark://host:7077``,
    ``yarn``) with :data:`LOCAL_SETTINGS` and ``settings`` (``{"spark.driver.memory": "1g"}``)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName("depgraph").master(master)
    for key, value in {**LOCAL_SETTINGS, **(settings or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def checkpointed(frame: DataFrame) -> DataFrame:
    """``frame`` computed now and its lineage cut: a reliable checkpoint when the session has a checkpoint
    directory (``spark.sparkContext.setCheckpointDir``; what a cluster should set, so a lost executor does not lose
    the step), else a local one (kept by the executors)."""
    if frame.sparkSession.sparkContext.getCheckpointDir() is not None:
        return frame.checkpoint(eager=True)
    return frame.localCheckpoint(eager=True)
