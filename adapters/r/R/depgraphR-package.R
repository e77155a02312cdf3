#' depgraphR: depgraph split specs in R
#'
#' depgraph declares what must never be split between training and evaluation data and writes it as a split
#' spec: every sample's group and, once assigned, the folds. depgraphR reads a spec ([read_depgraph_spec()]),
#' verifying its digest, and gives the group of each sample ([depgraph_groups()]), the folds as a table
#' ([depgraph_fold_table()]) or as `rsample` splits ([depgraph_rset()]), and the spec as a splitGraph
#' `split_spec` ([depgraph_as_split_spec()]). Failures are [depgraph_error] conditions.
#' @keywords internal
#' @useDynLib depgraphR, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
