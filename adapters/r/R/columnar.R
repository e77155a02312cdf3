# A columnar spec: the directory spec.dgspec/ holding manifest.json (the document without its long arrays),
# samples.parquet and, with folds, folds.parquet (one row per tested or excluded sample of each split). Its digest
# is the JSON document's: the columns are spelt from the Parquet tables by their Arrow types, as depgraph spells them.
depgraph_read_columnar <- function(path, verify_key) {
  manifest_path <- file.path(path, "manifest.json")
  if (!file.exists(manifest_path)) {
    depgraph_abort("io", sprintf("'%s' is a directory, and not a columnar spec: it holds no manifest.json", path),
                   path = path)
  }
  text <- depgraph_read_text(manifest_path)
  manifest <- depgraph_parse(text, manifest_path)
  depgraph_check_header(manifest, path)
  depgraph_check_envelope(manifest, path)
  if (!is.null(manifest$samples)) {
    depgraph_abort("schema", sprintf("'%s': the manifest holds 'samples': they are in samples.parquet", path))
  }
  held <- sort(list.files(path, all.files = TRUE, no.. = TRUE), method = "radix")
  wanted <- c("manifest.json", "samples.parquet", if (!is.null(manifest$folds)) "folds.parquet")
  if (!identical(held, sort(wanted, method = "radix"))) {
    depgraph_abort("schema", sprintf("'%s' holds %s; a spec%s holds %s", path, paste(held, collapse = ", "),
                                     if (is.null(manifest$folds)) " without folds" else " with folds",
                                     paste(wanted, collapse = ", ")), path = path)
  }
  samples <- depgraph_table(path, manifest, "samples.parquet")
  if (!identical(names(samples)[1:2], c("sample_id", "group_id"))) {
    depgraph_abort("schema", sprintf("'%s': samples.parquet does not begin with sample_id, group_id", path))
  }
  positions <- depgraph_columnar_positions(path, manifest, samples$sample_id)
  content <- function(manifest) depgraph_columnar_content(manifest, samples, positions, path)
  expected <- depgraph_digest_of(manifest, text, content)
  frame <- samples
  attr(frame, "arrow_types") <- NULL
  depgraph_spec(frame, manifest, positions, path, expected, verify_key)
}

# The JSON document a columnar spec stands for: its manifest but the table list, the sample columns (spelt from
# samples.parquet) and each split's positions (from folds.parquet).
depgraph_columnar_content <- function(manifest, samples, positions, path) {
  written <- manifest[setdiff(names(manifest), "tables")]
  types <- attr(samples, "arrow_types")
  written$samples <- lapply(stats::setNames(nm = names(samples)), function(name) {
    structure(depgraph_spell_typed(samples[[name]], types[[name]], name, path), class = "depgraph_spelt")
  })
  depgraph_with_positions(written, positions, listed_only = FALSE)
}

# A column as the JSON array depgraph spells from the Arrow type it was stored as: text quoted, integers as
# integers (whole doubles when R holds 64-bit integers as doubles), floats in their shortest spelling, booleans,
# null where missing.
depgraph_spell_typed <- function(values, type, name, path) {
  kind <- depgraph_kind(type)
  if (is.na(kind)) depgraph_abort("schema", sprintf("'%s': samples.%s is stored as %s", path, name, type), path = path)
  if (kind == "integer" && inherits(values, "integer64")) {  # arrow's 64-bit integers: doubles, when exact
    exact <- as.character(values) == sprintf("%.0f", as.double(values))
    if (!all(exact, na.rm = TRUE)) {
      depgraph_abort("invalid_value", sprintf("'%s': samples.%s holds an integer a double cannot hold exactly (%s)",
                                              path, name, as.character(values)[which(!exact)[1L]]), path = path)
    }
    values <- as.double(values)
  }
  if (kind == "float" && any(is.nan(values))) {
    depgraph_abort("schema", sprintf("'%s': samples.%s holds NaN; a missing value is null", path, name), path = path)
  }
  switch(kind,
    text = depgraph_spell(as.character(values), joined = TRUE),
    integer = depgraph_spell(values, joined = TRUE, whole = TRUE),
    float = depgraph_spell(as.double(values), joined = TRUE),
    boolean = depgraph_spell(as.logical(values), joined = TRUE),
    null = depgraph_spell(rep(NA, length(values)), joined = TRUE)
  )
}

# Each split's test and excluded positions from folds.parquet, every row checked: its split one of the manifest's,
# its role test or excluded, its position a row of samples.parquet holding the sample its sample_id names.
depgraph_columnar_positions <- function(path, manifest, sample_ids) {
  if (is.null(manifest$folds)) return(list())
  splits <- depgraph_splits(manifest, path)
  folds <- depgraph_table(path, manifest, "folds.parquet")
  if (!identical(names(folds), c("split", "role", "position", "sample_id"))) {
    depgraph_abort("schema", sprintf("'%s': folds.parquet holds the columns %s", path,
                                     paste(names(folds), collapse = ", ")), path = path)
  }
  types <- unlist(attr(folds, "arrow_types"))
  kinds <- vapply(types, depgraph_kind, "")
  if (!all(kinds[c("split", "position")] == "integer") || !all(kinds[c("role", "sample_id")] == "text") ||
      anyNA(folds)) {
    depgraph_abort("schema", sprintf(paste0("'%s': folds.parquet's split and position are not integers, or its ",
                                            "role and sample_id not text, or a value is missing"), path), path = path)
  }
  role <- as.character(folds$role)
  if (!all(role %in% c("test", "excluded"))) {
    depgraph_abort("schema", sprintf("'%s': folds.parquet holds a role other than test and excluded", path),
                   path = path)
  }
  at <- as.integer(folds$position)
  split <- as.integer(folds$split)
  if (anyNA(at) || anyNA(split) || any(split < 0L | split >= length(splits))) {
    depgraph_abort("schema", sprintf("'%s': folds.parquet names a split the manifest does not list", path),
                   path = path)
  }
  if (length(at) && (min(at) < 0L || max(at) >= length(sample_ids) ||
                     any(as.character(folds$sample_id) != sample_ids[at + 1L]))) {
    depgraph_abort("schema", sprintf("'%s': folds.parquet names a sample its position does not hold", path),
                   path = path)
  }
  order <- (split * 2 + (role == "excluded")) * length(sample_ids) + at
  if (length(order) > 1L && any(diff(order) <= 0)) {
    depgraph_abort("schema", sprintf("'%s': folds.parquet's rows are not ordered by split, role, position, each once",
                                     path), path = path)
  }
  lapply(seq_along(splits) - 1L, function(i) {
    list(test = at[split == i & role == "test"], excluded = at[split == i & role == "excluded"])
  })
}

# One table of a columnar spec, held to what the manifest says of it (rows, columns in order); its Arrow types
# in attr(, "arrow_types").
depgraph_table <- function(path, manifest, name) {
  listed <- if (depgraph_is_object(manifest$tables)) manifest$tables[[name]]
  if (!depgraph_is_object(listed) || !is.integer(listed$rows) || !is.list(listed$columns)) {
    depgraph_abort("schema", sprintf("'%s': its manifest.json lists no %s (rows and columns)", path, name),
                   path = path)
  }
  table <- depgraph_read_parquet(file.path(path, name))
  if (!identical(names(table), as.character(unlist(listed$columns))) || !identical(nrow(table), listed$rows)) {
    depgraph_abort("schema", sprintf("'%s': %s does not hold the rows and columns its manifest.json lists", path,
                                     name), path = path)
  }
  table
}

# A Parquet table (a file, or a directory of parts in name order) as a data.frame (text as character, integers as
# integer or double, missing values NA) with each column's Arrow type in attr(, "arrow_types"): with the arrow
# package when installed, else with Python's pyarrow through reticulate.
depgraph_read_parquet <- function(path) {
  # a directory's parts in byte order, hidden files (_SUCCESS, .crc, _x.parquet) skipped, as depgraph reads them
  parts <- if (dir.exists(path)) {
    named <- list.files(path, pattern = "^[^._].*\\.parquet$")
    file.path(path, sort(named, method = "radix"))
  } else {
    path
  }
  if (!length(parts) || !all(file.exists(parts))) {
    depgraph_abort("io", sprintf("'%s' does not exist", path), path = path)
  }
  read_one <- if (requireNamespace("arrow", quietly = TRUE)) {
    depgraph_arrow_reader()
  } else if (requireNamespace("reticulate", quietly = TRUE) && reticulate::py_module_available("pyarrow")) {
    depgraph_pyarrow_reader()
  } else {
    depgraph_abort("missing_package", paste0(
      "reading a columnar spec needs the arrow package (install.packages(\"arrow\")), or reticulate with ",
      "Python's pyarrow (which depgraph installs)"
    ), package = "arrow")
  }
  tables <- lapply(parts, function(part) {
    tryCatch(read_one(part), error = function(e) {
      if (inherits(e, "depgraph_error")) stop(e)
      depgraph_abort("parse", sprintf("'%s' is not a Parquet table depgraphR can read: %s", part,
                                      conditionMessage(e)), path = part)
    })
  })
  first <- attr(tables[[1L]], "arrow_types")
  for (i in seq_along(tables)) {
    types <- attr(tables[[i]], "arrow_types")
    if (!identical(names(types), names(first)) || !identical(unname(types), unname(first))) {
      depgraph_abort("schema", sprintf("'%s': its parts do not share one schema (%s differs from %s)", path,
                                       basename(parts[i]), basename(parts[1L])), path = path)
    }
  }
  frame <- do.call(rbind, tables)
  attr(frame, "arrow_types") <- attr(tables[[1L]], "arrow_types")
  frame
}

# What depgraph stores in a Parquet column, by its Arrow type: text, integer, float (64-bit), boolean, null; NA for
# a type depgraph never writes.
depgraph_kind <- function(type) {
  if (type %in% c("string", "large_string") || grepl("^dictionary<values=(large_)?string,", type)) return("text")
  if (grepl("^u?int(8|16|32|64)$", type)) return("integer")
  switch(type, double = "float", bool = "boolean", null = "null", NA_character_)
}

# Refuse a column of a type depgraph does not write (lists, structs, 32-bit floats, ...) before it is converted.
depgraph_scalar_types <- function(types, names, part) {
  odd <- is.na(vapply(types, depgraph_kind, ""))
  if (any(odd)) {
    depgraph_abort("schema", sprintf("'%s': column %s holds %s, which depgraph does not write", part,
                                     names[odd][1L], types[odd][1L]), path = part)
  }
}

depgraph_arrow_reader <- function() {
  function(part) {
    table <- arrow::read_parquet(part, as_data_frame = FALSE)
    types <- vapply(table$schema$fields, function(field) field$type$ToString(), character(1))
    depgraph_scalar_types(types, names(table), part)
    frame <- as.data.frame(table)
    for (i in seq_along(frame)) if (is.factor(frame[[i]])) frame[[i]] <- as.character(frame[[i]])
    attr(frame, "arrow_types") <- stats::setNames(as.list(types), names(frame))
    frame
  }
}

depgraph_pyarrow_reader <- function() {
  pa <- reticulate::import("pyarrow", convert = FALSE)
  pq <- reticulate::import("pyarrow.parquet", convert = FALSE)
  function(part) {
    table <- pq$read_table(part)
    names <- reticulate::py_to_r(table$column_names)
    types <- lapply(seq_along(names) - 1L, function(i) reticulate::py_to_r(table$schema$field(i)$type$`__str__`()))
    depgraph_scalar_types(unlist(types), names, part)
    columns <- lapply(seq_along(names) - 1L, function(i) {
      column <- table$column(i)
      # reticulate makes a Python int an R integer, wrapping what 32 bits cannot hold: integers cross as doubles
      # (exact to 2^53; pyarrow refuses a cast that is not)
      wide <- grepl("^u?int[0-9]+$", types[[i + 1L]])
      if (wide) column <- depgraph_exact_doubles(column, pa, names[i + 1L], part)
      values <- reticulate::py_to_r(column$to_pylist())
      if (!length(values)) {  # a part without rows: an empty column of its kind
        values <- switch(depgraph_kind(types[[i + 1L]]), text = character(), integer = integer(), float = double(),
                         logical())
      }
      if (is.list(values)) {  # a column with gaps (None) arrives as a list
        values[depgraph_types(values) == "NULL"] <- list(NA)
        values <- unlist(values, use.names = FALSE)
      }
      if (wide && all(abs(values) < 2^31, na.rm = TRUE)) values <- as.integer(values)
      values
    })
    frame <- as.data.frame(stats::setNames(columns, names), stringsAsFactors = FALSE, check.names = FALSE)
    attr(frame, "arrow_types") <- stats::setNames(types, names)
    frame
  }
}

depgraph_exact_doubles <- function(column, pa, name, part) {
  tryCatch(column$cast(pa$float64()), error = function(e) {
    depgraph_abort("invalid_value", sprintf("'%s': %s holds an integer a double cannot hold exactly", part, name),
                   path = part)
  })
}
