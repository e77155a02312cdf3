#' The group of each sample
#'
#' The spec's `group_id` for each row of your data, matched by sample id: the vector to hand to any grouped
#' resampling (`rsample::group_vfold_cv(data, group = ...)`, `caret::groupKFold()`), so that no group is ever on
#' both sides of a split.
#'
#' @param spec A spec from [read_depgraph_spec()].
#' @param data A `data.frame` holding the samples, or `NULL` (the default) for the spec's own rows.
#' @param id_column The column of `data` holding sample ids.
#' @return A character vector, one group id per row of `data` (or of the spec), in that order.
#'   Every row of `data` must be a sample of the spec: an id the spec does not hold is refused
#'   (`depgraph_error_reference`), never given a group of its own.
#' @examples
#' spec <- read_depgraph_spec(system.file("extdata", "spec.json", package = "depgraphR"))
#' my_data <- data.frame(sample_id = rev(spec$sample_id), y = seq_len(nrow(spec)))
#' my_data$group <- depgraph_groups(spec, my_data)
#' head(my_data)
#' @export
depgraph_groups <- function(spec, data = NULL, id_column = "sample_id") {
  depgraph_check_spec(spec)
  if (is.null(data)) return(spec$group_id)
  ids <- depgraph_ids(data, id_column)
  at <- match(ids, spec$sample_id)
  if (anyNA(at)) {
    unknown <- unique(ids[is.na(at)])
    depgraph_abort("reference", sprintf("data holds %d sample id(s) the spec does not: %s", length(unknown),
                                        depgraph_describe_ids(unknown)), ids = unknown)
  }
  spec$group_id[at]
}

#' The folds as a table
#'
#' One row per sample and split: which side of each split the spec puts every sample on, as depgraph assigned it.
#'
#' @inheritParams depgraph_groups
#' @return A `data.frame` with columns `sample_id`, `repeat` and `fold` (counted from 0, as in the spec) and
#'   `role` (`"train"`, `"test"` or `"excluded"`), splits in the spec's order and samples in its order within each.
#' @examples
#' spec <- read_depgraph_spec(system.file("extdata", "spec.json", package = "depgraphR"))
#' table <- depgraph_fold_table(spec)
#' table(table$fold, table$role)
#' @export
depgraph_fold_table <- function(spec) {
  folds <- depgraph_folds(spec)
  n <- nrow(spec)
  k <- nrow(folds$role)
  data.frame(
    sample_id = rep(spec$sample_id, times = k),
    `repeat` = rep(folds$splits$`repeat`, each = n),
    fold = rep(folds$splits$fold, each = n),
    role = DEPGRAPH_ROLES[as.vector(t(folds$role)) + 1L],
    stringsAsFactors = FALSE, check.names = FALSE
  )
}

#' The folds as rsample splits
#'
#' The spec's folds as an `rsample` resampling set (`rsample::manual_rset`): analysis = the split's training
#' samples, assessment = its test samples; excluded samples are in neither. These are the exact folds depgraph
#' computed, no fold logic re-run in R, so R and Python fit on the same splits. It works wherever a
#' `group_vfold_cv()` result does (`tune::fit_resamples()`, `rsample::analysis()`, ...).
#'
#' @inheritParams depgraph_groups
#' @param data The `data.frame` the splits index, `spec` itself by default. Every sample of the spec must be a row
#'   of `data` (`depgraph_error_reference` otherwise); rows of `data` that are not samples of the spec are in no
#'   split.
#' @return An `rsample` `manual_rset` with one split per fold of each repeat, its `id` `"Repeat1_Fold1"`, ...
#' @examples
#' spec <- read_depgraph_spec(system.file("extdata", "spec.json", package = "depgraphR"))
#' if (requireNamespace("rsample", quietly = TRUE)) {
#'   folds <- depgraph_rset(spec)
#'   rsample::assessment(folds$splits[[1]])$sample_id
#' }
#' @export
depgraph_rset <- function(spec, data = spec, id_column = "sample_id") {
  depgraph_need("rsample", "depgraph_rset()")
  folds <- depgraph_folds(spec)
  ids <- depgraph_ids(data, id_column)
  if (anyDuplicated(ids)) {
    twice <- unique(ids[duplicated(ids)])
    depgraph_abort("invalid_argument", sprintf("data's %s repeats sample ids: %s", id_column,
                                               depgraph_describe_ids(twice)), ids = twice)
  }
  row_of <- match(spec$sample_id, ids)
  if (anyNA(row_of)) {
    missing <- spec$sample_id[is.na(row_of)]
    depgraph_abort("reference", sprintf("data lacks %d sample(s) of the spec: %s", length(missing),
                                        depgraph_describe_ids(missing)), ids = missing)
  }
  splits <- lapply(seq_len(nrow(folds$role)), function(i) {
    rsample::make_splits(
      list(analysis = row_of[folds$role[i, ] == 0L], assessment = row_of[folds$role[i, ] == 1L]),
      data = data
    )
  })
  ids <- sprintf("Repeat%d_Fold%d", folds$splits$`repeat` + 1L, folds$splits$fold + 1L)
  rsample::manual_rset(splits, ids)
}

depgraph_check_spec <- function(spec) {
  if (!is.data.frame(spec) || is.null(attr(spec, "depgraph"))) {
    depgraph_abort("invalid_argument", "`spec` must be a spec read by read_depgraph_spec()")
  }
}

depgraph_folds <- function(spec) {
  depgraph_check_spec(spec)
  folds <- attr(spec, "depgraph")$folds
  if (is.null(folds)) {
    depgraph_abort("invalid_argument", "the spec carries no folds: assign them first (depgraph folds ...)")
  }
  folds
}

depgraph_ids <- function(data, id_column) {
  if (!is.data.frame(data)) depgraph_abort("invalid_argument", "`data` must be a data.frame")
  if (!is.character(id_column) || length(id_column) != 1L || !id_column %in% names(data)) {
    depgraph_abort("invalid_argument", sprintf("data has no '%s' column", format(id_column)))
  }
  ids <- data[[id_column]]
  if (is.factor(ids)) ids <- as.character(ids)
  if (!is.character(ids)) {
    depgraph_abort("invalid_argument", sprintf("data's %s is %s; sample ids are text (as.character() them)",
                                               id_column, class(ids)[1L]))
  }
  ids
}
