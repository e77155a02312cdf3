DEPGRAPH_SPEC_FORMAT <- "depgraph.split-spec"
DEPGRAPH_SPEC_MAJOR <- 1L
DEPGRAPH_ROLES <- c("train", "test", "excluded")

#' Read a depgraph split spec
#'
#' Reads a split spec that depgraph wrote, as one JSON file (`spec.json`) or in its columnar form (the directory
#' `spec.dgspec/`: `manifest.json`, `samples.parquet` and, with folds, `folds.parquet`), checks it and returns its
#' samples table. Nothing is trusted: the format and its major version, every sample column, every fold position
#' and the sha256 digest, recomputed from the content in R exactly as depgraph computes it, so a spec edited or
#' damaged after it was written is refused whichever form it travelled in. Given the key the teams share, the
#' signature is verified too.
#'
#' A columnar spec's Parquet tables are read with the `arrow` package when it is installed; otherwise with
#' Python's `pyarrow` (which depgraph installs) through `reticulate`; with neither, the error says so.
#'
#' @param path The spec: a `.json` file or a columnar spec's directory.
#' @param verify_key `NULL` (the default) to check the digest only; or the key the spec was signed with (text, as
#'   `depgraph spec --sign-key-env` read it from the environment), to also require and verify its signature.
#' @return A `data.frame`, one row per sample in the spec's order (`sample_id`, `group_id`, the block columns such
#'   as `batch_group`, `time_index`, `order_rank`, carried columns). `attr(spec, "depgraph")` holds the rest:
#'   `format_version`, `digest`, `constraint` (`mode`, `relations`, ...), `recommended_resampling`, `summary`,
#'   `warnings`, `pseudonymization`, `signature`, and `folds` (the scheme, `splits`: one row per split with
#'   `repeat`, `fold`, `n_train`, `n_test`, `n_excluded`, and `role`: a splits-by-samples matrix of 0 train,
#'   1 test, 2 excluded) when the spec carries folds.
#' @seealso [depgraph_groups()], [depgraph_fold_table()], [depgraph_rset()], [depgraph_as_split_spec()];
#'   [depgraph_error] for what is refused.
#' @examples
#' path <- system.file("extdata", "spec.json", package = "depgraphR")
#' spec <- read_depgraph_spec(path)
#' head(spec)
#' attr(spec, "depgraph")$constraint$mode
#' @export
read_depgraph_spec <- function(path, verify_key = NULL) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    depgraph_abort("invalid_argument", "read_depgraph_spec(): `path` must be one file or directory name")
  }
  if (!is.null(verify_key) && !(is.character(verify_key) && length(verify_key) == 1L && nzchar(verify_key))) {
    depgraph_abort("invalid_argument", "read_depgraph_spec(): `verify_key` must be NULL or one non-empty string")
  }
  if (!dir.exists(path) && !file.exists(path)) {
    depgraph_abort("io", sprintf("depgraph spec '%s' does not exist", path), path = path)
  }
  tryCatch(if (dir.exists(path)) depgraph_read_columnar(path, verify_key) else depgraph_read_json(path, verify_key),
           error = function(e) {
             if (inherits(e, "depgraph_error")) stop(e)
             # a shape no check above foresaw: still refused by name, never as a bare R error
             depgraph_abort("schema", sprintf("'%s' cannot be read as a split spec: %s", path, conditionMessage(e)),
                            path = path)
           })
}

depgraph_read_json <- function(path, verify_key) {
  text <- depgraph_read_text(path)
  doc <- depgraph_parse(text, path)
  depgraph_check_header(doc, path)
  depgraph_check_envelope(doc, path)
  if (!depgraph_is_object(doc$samples)) {
    depgraph_abort("schema", sprintf("'%s' holds no samples object", path), path = path)
  }
  read <- depgraph_samples_frame(doc$samples, path)
  positions <- lapply(depgraph_splits(doc, path), function(split) {
    list(test = depgraph_positions(split$test, path), excluded = depgraph_positions(split$excluded, path))
  })
  # what was read, spelt once: each column as checked, each split's positions as the integers they are
  content <- function(marked) {
    for (name in names(read$spelt)) {  # a column holding integers beyond 32 bits, marked as written
      if (!identical(marked$samples[[name]], doc$samples[[name]])) {
        read$spelt[[name]] <- structure(depgraph_json(marked$samples[[name]]), class = "depgraph_spelt")
      }
    }
    marked$samples <- read$spelt
    depgraph_with_positions(marked, positions, listed_only = TRUE)
  }
  expected <- depgraph_digest_of(doc, text, content)
  depgraph_spec(read$frame, doc, positions, path, expected, verify_key)
}

depgraph_read_text <- function(path) {
  bytes <- readBin(path, "raw", n = file.info(path)$size)
  if (any(bytes == as.raw(0L))) depgraph_abort("parse", sprintf("'%s' is not JSON: it holds NUL bytes", path))
  text <- rawToChar(bytes)
  Encoding(text) <- "UTF-8"
  if (!validUTF8(text)) depgraph_abort("parse", sprintf("'%s' is not UTF-8 text", path), path = path)
  problem <- .Call(C_json_scan, text, FALSE)
  if (nzchar(problem)) depgraph_abort("parse", sprintf("'%s' is not strict JSON: %s", path, problem), path = path)
  text
}

# The document as parsed, unsimplified (integers stay integers, one-element arrays stay arrays), with no object
# repeating a key: R's `$` would read the first of two "samples" while other readers keep the last.
depgraph_parse <- function(text, path) {
  doc <- tryCatch(
    jsonlite::parse_json(text, simplifyVector = FALSE),
    error = function(e) depgraph_abort("parse", sprintf("'%s' is not valid JSON: %s", path, conditionMessage(e)),
                                       path = path)
  )
  if (!depgraph_is_object(doc)) depgraph_abort("schema", sprintf("'%s' is not a JSON object", path), path = path)
  repeated <- depgraph_repeated_key(doc)
  if (!is.null(repeated)) {
    depgraph_abort("schema", sprintf(
      "'%s' repeats the key '%s' within one object; JSON readers disagree on which value counts", path, repeated
    ), path = path)
  }
  doc
}

depgraph_is_object <- function(x) is.list(x) && !is.null(names(x))

# The sample columns (lists of scalars, as parsed) as a data.frame (`frame`: each column one value per sample, null
# as NA) and each column as its canonical JSON array (`spelt`).
depgraph_samples_frame <- function(columns, path) {
  for (name in c("sample_id", "group_id")) {
    if (is.null(columns[[name]])) depgraph_abort("schema", sprintf("'%s': samples lacks %s", path, name), path = path)
  }
  lengths <- vapply(columns, function(col) if (is.list(col) && is.null(names(col))) length(col) else -1L, 1L)
  if (any(lengths < 0L)) {
    depgraph_abort("schema", sprintf("'%s': samples.%s is not an array", path, names(lengths)[lengths < 0L][1L]),
                   path = path)
  }
  if (length(unique(lengths)) != 1L) {
    depgraph_abort("schema", sprintf("'%s': samples columns have unequal lengths (%s)", path,
                                     paste(names(lengths), lengths, sep = "=", collapse = ", ")), path = path)
  }
  read <- lapply(stats::setNames(nm = names(columns)), function(name) depgraph_column(columns[[name]], name, path))
  frame <- as.data.frame(lapply(read, `[[`, "values"), stringsAsFactors = FALSE, check.names = FALSE)
  for (name in c("sample_id", "group_id")) {
    bad <- which(!is.character(frame[[name]]) | is.na(frame[[name]]) | !nzchar(frame[[name]]))
    if (length(bad)) {
      depgraph_abort("schema", sprintf("'%s': samples.%s[%d] is not a non-empty string", path, name, bad[1L] - 1L),
                     path = path)
    }
  }
  list(frame = frame, spelt = lapply(read, `[[`, "spelt"))
}

# One sample column: its values as an atomic vector (null is NA; a value that is an array or an object is
# refused), and its canonical JSON array, spelt from the vector when every value has one type, else value by value.
depgraph_column <- function(col, name, path) {
  type <- depgraph_types(col)
  nested <- which(type == "list")
  if (length(nested)) {
    depgraph_abort("schema", sprintf("'%s': samples.%s[%d] is not a single value", path, name, nested[1L] - 1L),
                   path = path)
  }
  missing <- type == "NULL"
  values <- unlist(col, use.names = FALSE)
  if (any(missing)) {
    present <- values
    values <- if (is.null(present)) rep(NA, length(col)) else rep(present[NA_integer_], length(col))
    values[!missing] <- present
  }
  spelt <- if (length(unique(type[!missing])) <= 1L) {
    depgraph_spell(values, joined = TRUE)
  } else {
    paste0("[", paste(depgraph_scalars(col), collapse = ","), "]")
  }
  if (name == "order_rank") {
    if (!(is.numeric(values) || all(is.na(values))) || any(values < 1 | values != trunc(values), na.rm = TRUE)) {
      depgraph_abort("schema", sprintf("'%s': samples.order_rank holds a value that is not a rank (1, 2, ...)", path),
                     path = path)
    }
    if (all(abs(values) <= .Machine$integer.max, na.rm = TRUE)) values <- as.integer(values)  # else doubles
  }
  list(values = values, spelt = structure(spelt, class = "depgraph_spelt"))
}

depgraph_splits <- function(doc, path) {
  folds <- doc$folds
  if (is.null(folds)) return(list())
  if (!depgraph_is_object(folds) || !is.list(folds$splits) || !is.null(names(folds$splits)) ||
      !length(folds$splits)) {
    depgraph_abort("schema", sprintf("'%s': folds holds no splits", path), path = path)
  }
  for (i in seq_along(folds$splits)) {
    split <- folds$splits[[i]]
    counts <- c("repeat", "fold", "n_train", "n_test", "n_excluded")
    whole <- depgraph_is_object(split) &&
      all(vapply(counts, function(f) is.integer(split[[f]]) && length(split[[f]]) == 1L && split[[f]] >= 0L, NA))
    if (!whole) {
      depgraph_abort("schema", sprintf("'%s': folds.splits[%d] is not a split (%s, each a count)", path, i - 1L,
                                       paste(counts, collapse = ", ")), path = path)
    }
  }
  folds$splits
}

# A split's test or excluded positions (0-based), every one an integer.
depgraph_positions <- function(values, path) {
  if (is.null(values)) return(integer())
  if (!is.list(values) || !all(depgraph_types(values) == "integer" & lengths(values) == 1L)) {
    depgraph_abort("schema", sprintf("'%s': a fold split's positions are not all integers", path), path = path)
  }
  unlist(values, use.names = FALSE) %||% integer()
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# The spec as a data.frame carrying its envelope and folds in attr(, "depgraph"), from its samples, its document
# (or manifest) and each split's 0-based test and excluded positions, once the digest the file carries is the
# `expected` one and, with `verify_key`, its signature signs it; either form gives the same.
depgraph_spec <- function(samples, doc, positions, path, expected, verify_key) {
  if (!identical(doc$digest, expected)) {
    said <- if (is.character(doc$digest) && length(doc$digest) == 1L) substr(doc$digest, 1L, 19L) else "none"
    depgraph_abort("integrity", sprintf(
      "'%s': digest does not match the content (file says %s..., content is %s...); the file was edited or damaged",
      path, said, substr(expected, 1L, 19L)
    ), path = path)
  }
  if (!is.null(verify_key)) depgraph_check_signature(doc$signature, expected, verify_key, path)
  depgraph_check_content(samples, doc, path)
  attr(samples, "depgraph") <- list(
    format_version = doc$format_version,
    digest = doc$digest,
    constraint = depgraph_simplify(doc$constraint),
    graph_name = doc$graph_name,
    recommended_resampling = doc$recommended_resampling,
    summary = depgraph_simplify(doc$summary),
    warnings = depgraph_simplify(doc$warnings),
    pseudonymization = depgraph_simplify(doc$pseudonymization),
    signature = depgraph_simplify(doc$signature),
    folds = depgraph_fold_plan(doc$folds, positions, samples$group_id, path)
  )
  samples
}

# The folds object with its splits as a table and `role`, one row per split and one column per sample
# (0 train, 1 test, 2 excluded), from each split's 0-based positions, checked.
depgraph_fold_plan <- function(folds, positions, group_id, path) {
  if (is.null(folds)) return(NULL)
  n <- length(group_id)
  role <- matrix(0L, nrow = length(positions), ncol = n)
  for (i in seq_along(positions)) {
    at <- c(positions[[i]]$test, positions[[i]]$excluded)
    if (length(at) && (min(at) < 0L || max(at) >= n)) {
      depgraph_abort("schema", sprintf("'%s': fold split %d names a sample position outside 0..%d", path, i - 1L,
                                       n - 1L), path = path)
    }
    if (anyDuplicated(at)) {
      depgraph_abort("integrity", sprintf("'%s': fold split %d names a sample twice", path, i - 1L), path = path)
    }
    role[i, positions[[i]]$test + 1L] <- 1L
    role[i, positions[[i]]$excluded + 1L] <- 2L
  }
  field <- function(name) vapply(folds$splits, function(s) as.integer(s[[name]] %||% NA_integer_), integer(1))
  plan <- depgraph_simplify(folds[setdiff(names(folds), "splits")])
  plan$splits <- data.frame(`repeat` = field("repeat"), fold = field("fold"), n_train = field("n_train"),
                            n_test = field("n_test"), n_excluded = field("n_excluded"), check.names = FALSE)
  plan$role <- role
  depgraph_check_folds(plan, group_id, path)
  plan
}

# Small parsed values as jsonlite's simplified reading gives them: arrays of scalars as vectors.
depgraph_simplify <- function(x) {
  if (!is.list(x)) return(x)
  if (is.null(names(x)) && length(x) && all(lengths(x) == 1L) && !any(vapply(x, is.list, logical(1)))) {
    return(unlist(x, use.names = FALSE))
  }
  lapply(x, depgraph_simplify)
}

# The first key some object of a parsed document repeats, named by its path as depgraph's other readers name
# it ("samples", "folds.splits[1].test": array positions count from 0), or NULL. Arrays of scalars (the long
# columns and positions) hold no objects and are not walked.
depgraph_repeated_key <- function(x, path = "") {
  if (!is.list(x)) return(NULL)
  keys <- names(x)
  if (!is.null(keys)) {
    twice <- keys[duplicated(keys)]
    if (length(twice)) return(paste0(path, if (nzchar(path)) "." else "", twice[1]))
  }
  nested <- which(depgraph_types(x) == "list")
  for (i in nested) {
    step <- if (is.null(keys)) sprintf("%s[%d]", path, i - 1L) else paste0(path, if (nzchar(path)) "." else "", keys[i])
    found <- depgraph_repeated_key(x[[i]], step)
    if (!is.null(found)) return(found)
  }
  NULL
}
