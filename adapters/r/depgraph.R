# depgraph split specs in R.
#
# A small, dependency-light reader: jsonlite for the JSON, rsample only when you
# ask for resampling splits. Source this file, then
#
#   spec <- read_depgraph_spec("spec.json")   # a data.frame, one row per sample
#   spec <- read_depgraph_spec("spec.dgspec") # the same from a columnar spec (arrow, or reticulate + pyarrow)
#   attr(spec, "depgraph")$constraint$mode    # how the groups were derived
#   folds <- depgraph_rset(spec)              # rsample::manual_rset, when the spec has folds
#   folds <- depgraph_rset(spec, data = my_df) # splits over your own data, matched by sample_id
#
# The reader accepts depgraph split specs of format_version 1.x and refuses any
# other major version with a message saying which version it found. It checks
# the structure any consumer relies on: no JSON object repeats a key (R's `$`
# would read the first of two "samples" while other readers keep the last),
# equal column lengths, unique sample ids and fold positions inside the samples.
#
# It does NOT recompute the sha256 digest nor verify a signature: that needs the
# canonical JSON form (sorted keys, numbers spelt as depgraph spells them), which
# jsonlite cannot reproduce. Check a spec that travelled with
#   depgraph validate spec.json [--verify-key-env VAR]
# before reading it here. The digest and any signature are carried through in
# attr(spec, "depgraph")$digest and $signature.

DEPGRAPH_SPEC_FORMAT <- "depgraph.split-spec"
DEPGRAPH_SPEC_MAJOR <- 1L
DEPGRAPH_ROLES <- c("train", "test", "excluded")

read_depgraph_spec <- function(path) {
  if (!requireNamespace("jsonlite", quietly = TRUE)) {
    stop("read_depgraph_spec() needs the jsonlite package", call. = FALSE)
  }
  if (dir.exists(path)) return(depgraph_read_columnar(path))
  if (!file.exists(path)) {
    stop(sprintf("depgraph spec '%s' does not exist", path), call. = FALSE)
  }
  doc <- depgraph_read_json(path)
  depgraph_check_header(doc, path)
  columns <- doc$samples
  lengths <- vapply(columns, length, integer(1))
  if (length(unique(lengths)) != 1L) {
    stop(sprintf("'%s': samples columns have unequal lengths (%s)", path,
                 paste(names(lengths), lengths, sep = "=", collapse = ", ")), call. = FALSE)
  }
  samples <- as.data.frame(lapply(columns, function(col) {
    if (is.list(col)) col <- unlist(lapply(col, function(v) if (is.null(v)) NA else v))
    col
  }), stringsAsFactors = FALSE)
  positions <- lapply(doc$folds$splits, function(split) list(test = unlist(split$test), excluded = unlist(split$excluded)))
  depgraph_spec(samples, doc, positions, path)
}

# A columnar spec: the directory spec.dgspec/ holding manifest.json (the document without its long arrays),
# samples.parquet and, with folds, folds.parquet (one row per tested or excluded sample of each split). The tables
# are read with the arrow package when it is installed, else with Python's pyarrow through reticulate.
depgraph_read_columnar <- function(path) {
  manifest <- file.path(path, "manifest.json")
  if (!file.exists(manifest)) {
    stop(sprintf("'%s' is a directory, and not a columnar spec: it holds no manifest.json", path), call. = FALSE)
  }
  doc <- depgraph_read_json(manifest)
  depgraph_check_header(doc, path)
  samples <- depgraph_table(path, doc, "samples.parquet")
  positions <- list()
  if (!is.null(doc$folds)) {
    folds <- depgraph_table(path, doc, "folds.parquet")
    role <- as.character(folds$role)
    if (!all(role %in% c("test", "excluded"))) {
      stop(sprintf("'%s': folds.parquet holds a role other than test and excluded", path), call. = FALSE)
    }
    named <- as.character(folds$sample_id)
    at <- as.integer(folds$position)
    if (length(at) && (min(at) < 0L || max(at) >= nrow(samples) || any(named != samples$sample_id[at + 1L]))) {
      stop(sprintf("'%s': folds.parquet names a sample its position does not hold", path), call. = FALSE)
    }
    split <- as.integer(folds$split)
    positions <- lapply(seq_along(doc$folds$splits) - 1L, function(i) {
      list(test = at[split == i & role == "test"], excluded = at[split == i & role == "excluded"])
    })
  }
  depgraph_spec(samples, doc, positions, path)
}

# One table of a columnar spec, held to what the manifest says of it (rows, columns in order).
depgraph_table <- function(path, doc, name) {
  listed <- doc$tables[[name]]
  if (is.null(listed)) stop(sprintf("'%s': its manifest.json lists no %s", path, name), call. = FALSE)
  table <- depgraph_read_parquet(file.path(path, name))
  if (!identical(names(table), as.character(unlist(listed$columns))) || nrow(table) != listed$rows) {
    stop(sprintf("'%s': %s does not hold the rows and columns its manifest.json lists", path, name), call. = FALSE)
  }
  table
}

# A Parquet table (a file, or a directory of parts in name order) as a data.frame: text as character, integers as
# integer or double, missing values NA.
depgraph_read_parquet <- function(path) {
  parts <- if (dir.exists(path)) sort(list.files(path, pattern = "\\.parquet$", full.names = TRUE)) else path
  if (!length(parts) || !all(file.exists(parts))) stop(sprintf("'%s' does not exist", path), call. = FALSE)
  read_one <- if (requireNamespace("arrow", quietly = TRUE)) {
    function(part) as.data.frame(arrow::read_parquet(part))
  } else if (requireNamespace("reticulate", quietly = TRUE) && reticulate::py_module_available("pyarrow")) {
    pq <- reticulate::import("pyarrow.parquet", convert = FALSE)
    function(part) {
      table <- pq$read_table(part)
      columns <- lapply(reticulate::py_to_r(table$column_names), function(name) {
        values <- reticulate::py_to_r(table$column(name)$to_pylist())
        unlist(lapply(values, function(v) if (is.null(v)) NA else v))
      })
      names(columns) <- reticulate::py_to_r(table$column_names)
      as.data.frame(columns, stringsAsFactors = FALSE)
    }
  } else {
    stop("reading a columnar spec needs the arrow package (install.packages('arrow')), or reticulate with ",
         "Python's pyarrow (which depgraph installs)", call. = FALSE)
  }
  do.call(rbind, lapply(parts, read_one))
}

depgraph_read_json <- function(path) {
  doc <- tryCatch(
    jsonlite::fromJSON(path, simplifyVector = TRUE, simplifyDataFrame = FALSE, simplifyMatrix = FALSE),
    error = function(e) stop(sprintf("depgraph spec '%s' is not valid JSON: %s", path, conditionMessage(e)), call. = FALSE)
  )
  repeated <- depgraph_repeated_key(doc)
  if (!is.null(repeated)) {
    stop(sprintf(
      "'%s' repeats the key '%s' within one object; JSON readers disagree on which value counts",
      path, repeated
    ), call. = FALSE)
  }
  doc
}

depgraph_check_header <- function(doc, path) {
  if (!identical(doc$format, DEPGRAPH_SPEC_FORMAT)) {
    stop(sprintf("'%s' is not a depgraph split spec (format is '%s')", path, format(doc$format)), call. = FALSE)
  }
  version <- as.character(doc$format_version)
  major <- suppressWarnings(as.integer(strsplit(version, ".", fixed = TRUE)[[1]][1]))
  if (is.na(major) || major != DEPGRAPH_SPEC_MAJOR) {
    stop(sprintf(
      "'%s' has format_version %s; this reader reads %d.x", path, version, DEPGRAPH_SPEC_MAJOR
    ), call. = FALSE)
  }
}

# The spec as a data.frame carrying its envelope and folds in attr(, "depgraph"), from its samples, its document
# (or manifest) and each split's 0-based test and excluded positions; either form gives the same.
depgraph_spec <- function(samples, doc, positions, path) {
  if (anyDuplicated(samples$sample_id)) {
    dup <- unique(samples$sample_id[duplicated(samples$sample_id)])
    stop(sprintf("'%s': sample ids repeat: %s", path, paste(utils::head(dup, 5), collapse = ", ")), call. = FALSE)
  }
  if ("order_rank" %in% names(samples)) samples$order_rank <- as.integer(samples$order_rank)
  folds <- doc$folds
  if (!is.null(folds)) {
    n <- nrow(samples)
    # one role code per sample and split: 0 train, 1 test, 2 excluded (positions are 0-based in the file)
    role <- t(vapply(positions, function(split) {
      codes <- integer(n)
      at <- c(split$test, split$excluded)
      if (length(at) && (min(at) < 0 || max(at) >= n)) {
        stop(sprintf("'%s': a fold split names a sample position outside 0..%d", path, n - 1L), call. = FALSE)
      }
      codes[split$test + 1L] <- 1L
      codes[split$excluded + 1L] <- 2L
      codes
    }, integer(n)))
    if (length(folds$splits) == 0L) role <- matrix(integer(), nrow = 0L, ncol = n)
    folds$role <- role
    folds$splits <- data.frame(
      `repeat` = vapply(folds$splits, function(s) as.integer(s$`repeat`), integer(1)),
      fold = vapply(folds$splits, function(s) as.integer(s$fold), integer(1)),
      n_train = vapply(folds$splits, function(s) as.integer(s$n_train), integer(1)),
      n_test = vapply(folds$splits, function(s) as.integer(s$n_test), integer(1)),
      n_excluded = vapply(folds$splits, function(s) as.integer(s$n_excluded), integer(1)),
      check.names = FALSE
    )
  }
  attr(samples, "depgraph") <- list(
    format_version = as.character(doc$format_version),
    digest = doc$digest,
    constraint = doc$constraint,
    recommended_resampling = doc$recommended_resampling,
    summary = doc$summary,
    warnings = doc$warnings,
    pseudonymization = doc$pseudonymization,
    signature = doc$signature,
    folds = folds
  )
  samples
}

# The first key some object of a parsed document repeats, named by its path as depgraph's other readers name
# it ("samples", "folds.splits[1].test": array positions count from 0), or NULL. Objects are few; columns are
# atomic vectors and are not walked.
depgraph_repeated_key <- function(x, path = "") {
  if (!is.list(x)) return(NULL)
  keys <- names(x)
  if (!is.null(keys)) {
    twice <- keys[duplicated(keys)]
    if (length(twice)) return(paste0(path, if (nzchar(path)) "." else "", twice[1]))
  }
  for (i in seq_along(x)) {
    step <- if (is.null(keys)) sprintf("%s[%d]", path, i - 1L) else paste0(path, if (nzchar(path)) "." else "", keys[i])
    found <- depgraph_repeated_key(x[[i]], step)
    if (!is.null(found)) return(found)
  }
  NULL
}

# The long fold table: one row per sample and split (sample_id, repeat, fold, role).
depgraph_fold_table <- function(spec) {
  folds <- attr(spec, "depgraph")$folds
  if (is.null(folds)) stop("the spec carries no folds", call. = FALSE)
  do.call(rbind, lapply(seq_len(nrow(folds$role)), function(i) {
    data.frame(
      sample_id = spec$sample_id,
      `repeat` = as.integer(folds$splits$`repeat`[i]),
      fold = as.integer(folds$splits$fold[i]),
      role = DEPGRAPH_ROLES[folds$role[i, ] + 1L],
      stringsAsFactors = FALSE, check.names = FALSE
    )
  }))
}

# rsample splits from the spec's folds: analysis = train, assessment = test;
# excluded samples are in neither. `data` defaults to the spec's own rows; any
# other data.frame is matched to the spec by its `id_column`.
depgraph_rset <- function(spec, data = spec, id_column = "sample_id") {
  if (!requireNamespace("rsample", quietly = TRUE)) {
    stop("depgraph_rset() needs the rsample package", call. = FALSE)
  }
  folds <- attr(spec, "depgraph")$folds
  if (is.null(folds)) stop("the spec carries no folds: assign folds first (depgraph folds ...)", call. = FALSE)
  if (!id_column %in% names(data)) stop(sprintf("data has no '%s' column", id_column), call. = FALSE)
  row_of <- match(spec$sample_id, data[[id_column]])
  if (anyNA(row_of)) {
    missing <- spec$sample_id[is.na(row_of)]
    stop(sprintf("data lacks %d sample(s) of the spec: %s", length(missing),
                 paste(utils::head(missing, 5), collapse = ", ")), call. = FALSE)
  }
  splits <- lapply(seq_len(nrow(folds$role)), function(i) {
    rsample::make_splits(
      list(analysis = row_of[folds$role[i, ] == 0L], assessment = row_of[folds$role[i, ] == 1L]),
      data = data
    )
  })
  ids <- sprintf("Repeat%d_Fold%d", as.integer(folds$splits$`repeat`) + 1L, as.integer(folds$splits$fold) + 1L)
  rsample::manual_rset(splits, ids)
}
