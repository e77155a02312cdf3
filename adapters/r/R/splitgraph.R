DEPGRAPH_BLOCK_COLUMNS <- c("batch_group", "study_group", "site_group", "region_group", "platform_group",
                            "assay_group")

#' The spec as a splitGraph split_spec
#'
#' The spec as the `split_spec` object of the splitGraph package, for the tools that read one (bioLeak's
#' adapters, `splitGraph::validate_split_spec()`). The same mapping as `depgraph export --to splitgraph`: each
#' sample's group, block columns (`batch_group`, `study_group`, ...), `timepoint_id`, `time_index` and
#' `order_rank`; `ordering_required` for a time-ordered spec whose every sample has a rank. What a split_spec cannot
#' hold is not carried: the folds, other sample columns, the digest and the signature.
#'
#' @inheritParams depgraph_groups
#' @return A `splitGraph` `split_spec`. Needs the splitGraph package (`depgraph_error_missing_package` otherwise).
#' @examples
#' spec <- read_depgraph_spec(system.file("extdata", "spec.json", package = "depgraphR"))
#' if (requireNamespace("splitGraph", quietly = TRUE)) {
#'   splitGraph::validate_split_spec(depgraph_as_split_spec(spec))
#' }
#' @export
depgraph_as_split_spec <- function(spec) {
  depgraph_check_spec(spec)
  depgraph_need("splitGraph", "depgraph_as_split_spec()")
  meta <- attr(spec, "depgraph")
  mode <- meta$constraint$mode
  strategy <- meta$constraint$strategy %||% mode
  columns <- intersect(c(DEPGRAPH_BLOCK_COLUMNS, "timepoint_id", "time_index", "order_rank", "stratum"), names(spec))
  sample_data <- data.frame(sample_id = spec$sample_id, sample_node_id = paste0("sample:", spec$sample_id),
                            group_id = spec$group_id, primary_group = spec$group_id, stringsAsFactors = FALSE)
  for (column in columns) sample_data[[column]] <- spec[[column]]
  ranked <- "order_rank" %in% names(spec) && !all(is.na(spec$order_rank))
  time_aware <- identical(mode, "time") || (identical(strategy, "rule_based") && "time" %in% meta$constraint$priority)
  split_spec <- getExportedValue("splitGraph", "split_spec")
  split_spec(
    sample_data = sample_data,
    group_var = "group_id",
    block_vars = intersect(DEPGRAPH_BLOCK_COLUMNS, names(spec)),
    time_var = if (ranked) "order_rank" else NULL,
    ordering_required = time_aware && ranked && !anyNA(spec$order_rank),
    constraint_mode = mode,
    constraint_strategy = strategy,
    recommended_resampling = meta$recommended_resampling,
    metadata = list(
      graph_name = meta$graph_name, source_mode = mode, source_strategy = strategy,
      relations_used = as.character(unlist(meta$constraint$relations)), n_samples = nrow(spec),
      n_groups = length(unique(spec$group_id)), warnings = depgraph_warning_messages(meta$warnings),
      enriched_from_graph = TRUE
    )
  )
}

depgraph_warning_messages <- function(warnings) {
  if (!length(warnings)) return(character())
  vapply(warnings, function(w) as.character(w$message %||% ""), character(1), USE.NAMES = FALSE)
}
