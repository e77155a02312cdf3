"""The Spark engine: the same groups, labels and spec as the single-machine engine, on Apache Spark
DataFrames, for cohorts one machine cannot hold (``pip install 'depgraph[spark]'``; docs/spark.md).

A study on Spark is a :class:`~depgraph.spark.graph.SparkGraph`: one table per node type (``row``, ``key``, the
type's attributes; rows numbered in key byte order, as a columnar graph file numbers them) and one per relation
(``source`` and ``target`` rows, ``weight``). It is read from a columnar graph (:func:`~depgraph.spark.graph.
read_graph`) or built from DataFrames (:func:`~depgraph.spark.tables.from_metadata`, ``add_kinship``,
``add_duplicates``, ``add_relations``); :func:`depgraph.derive` reduces it to one group per sample (on Spark, given
a SparkGraph) with connected components computed in Spark (:mod:`depgraph.spark.components`);
:func:`~depgraph.spark.spec.write_spec` writes the spec in the columnar form, with the digest the single-machine
engine computes for the same content, and with a fold plan when asked (every scheme of
:func:`depgraph.assign_folds`: :mod:`depgraph.spark.folds`)::

    from depgraph import derive
    from depgraph.spark import tables
    from depgraph.spark.session import local_session
    from depgraph.spark.spec import write_spec

    spark = local_session("local[2]")
    graph = tables.add_kinship(tables.from_metadata(spark.read.parquet("metadata.parquet")),
                               spark.read.parquet("king.parquet"), threshold="first")
    write_spec(derive(graph, "relatedness"), "spec.dgspec", "group-kfold", n_splits=5, seed=7)
"""
