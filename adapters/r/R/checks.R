# What a spec must be and say of itself, checked whichever form it was read from: its format and version, its
# envelope's fields each of its kind, its ids, its summary and its splits (integrity even when the digest matches:
# anyone can recompute a digest).

depgraph_check_header <- function(doc, path) {
  if (!identical(doc$format, DEPGRAPH_SPEC_FORMAT)) {
    depgraph_abort("schema", sprintf("'%s' is not a depgraph split spec (format is '%s')", path,
                                     format(doc$format)), path = path)
  }
  version <- doc$format_version
  major <- if (is.character(version) && length(version) == 1L && grepl("^[0-9]+\\.[0-9]+\\.[0-9]+$", version)) {
    as.integer(strsplit(version, ".", fixed = TRUE)[[1]][1])
  } else {
    NA_integer_
  }
  if (is.na(major) || major != DEPGRAPH_SPEC_MAJOR) {
    depgraph_abort("version", sprintf(
      "'%s' has format_version %s; this reader reads %d.x (a newer depgraphR may read it)", path, format(version),
      DEPGRAPH_SPEC_MAJOR
    ), path = path, version = version)
  }
}

# The envelope's fields a reader relies on, each of its kind.
depgraph_check_envelope <- function(doc, path) {
  kinds <- list(constraint = depgraph_is_object, summary = depgraph_is_object,
                warnings = function(x) is.list(x) && is.null(names(x)),
                recommended_resampling = function(x) is.character(x) && length(x) == 1L)
  for (field in names(kinds)) {
    if (!kinds[[field]](doc[[field]])) {
      depgraph_abort("schema", sprintf("'%s': %s is missing or not what a spec holds there", path, field), path = path)
    }
  }
  if (!is.character(doc$constraint$mode) || length(doc$constraint$mode) != 1L) {
    depgraph_abort("schema", sprintf("'%s': constraint.mode is not a name", path), path = path)
  }
  if (!is.null(doc$signature) && !(depgraph_is_object(doc$signature) && is.character(doc$signature$value) &&
                                   is.character(doc$signature$key_fingerprint))) {
    depgraph_abort("schema", sprintf("'%s': signature is not a signature (key_fingerprint and value)", path),
                   path = path)
  }
}

# What the content says of itself, checked even when the digest matches (anyone can recompute a digest): ids held to
# depgraph's rules, sample ids unique and in byte order (a 1.0.x spec promised unique only), a summary that counts
# the samples and groups.
depgraph_check_content <- function(samples, doc, path) {
  for (column in c("sample_id", "group_id")) depgraph_check_ids(samples[[column]], column, path)
  ids <- samples$sample_id
  if (anyDuplicated(ids)) {
    twice <- unique(ids[duplicated(ids)])
    depgraph_abort("integrity", sprintf("'%s': sample ids repeat: %s", path, depgraph_describe_ids(twice)),
                   path = path)
  }
  if (!startsWith(doc$format_version, "1.0.") && !identical(sort(ids, method = "radix"), ids)) {
    depgraph_abort("integrity", sprintf("'%s': sample ids are not in byte order; a spec keeps them so", path),
                   path = path)
  }
  groups <- unique(samples$group_id)
  sizes <- tabulate(match(samples$group_id, groups), length(groups))
  largest <- max(sizes)
  counted <- list(n_samples = nrow(samples), n_groups = length(sizes),
                  largest_group = sort(groups[sizes == largest], method = "radix")[1L],
                  largest_group_size = as.integer(largest), singletons = sum(sizes == 1L))
  for (field in names(counted)) {
    said <- doc$summary[[field]]
    same <- if (is.character(counted[[field]])) identical(said, counted[[field]]) else
      is.numeric(said) && length(said) == 1L && said == counted[[field]]
    if (!same) {
      depgraph_abort("integrity", sprintf("'%s': its summary says %s %s; the samples give %s", path, field,
                                          format(said), format(counted[[field]])), path = path)
    }
  }
}

# The rules every depgraph reader holds ids to: printable (no control, format or separator character: a zero-width
# space would make two ids nobody can tell apart), and each written one way (two ids equal once normalised, NFC, are
# one id in two spellings: a subject on both sides of a split).
depgraph_check_ids <- function(ids, column, path) {
  wide <- grepl("[^\x20-\x7e]", ids, useBytes = TRUE)
  if (!any(wide)) return(invisible())
  unprintable <- which(grepl("[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]", ids, perl = TRUE))
  if (length(unprintable)) {
    depgraph_abort("invalid_value", sprintf("'%s': %s holds a control or invisible character in %s; an id is printable",
                                            path, column, encodeString(ids[unprintable[1L]], quote = "'")), path = path)
  }
  written <- unique(ids[wide])
  composed <- stringi::stri_trans_nfc(written)
  twins <- written[(composed != written & composed %in% ids) | duplicated(composed) |
                     duplicated(composed, fromLast = TRUE)]
  if (length(twins)) {
    depgraph_abort("ambiguity", sprintf(
      "'%s': %s holds %s, which differs from another id only in Unicode normalisation: one id written two ways",
      path, column, encodeString(twins[1L], quote = "'")
    ), path = path)
  }
}

# Every split as the plan lists it: its counts those of its positions, someone tested, and no group on both sides.
depgraph_check_folds <- function(plan, group_id, path) {
  for (i in seq_len(nrow(plan$role))) {
    role <- plan$role[i, ]
    counts <- c(n_train = sum(role == 0L), n_test = sum(role == 1L), n_excluded = sum(role == 2L))
    for (field in names(counts)) {
      if (!identical(plan$splits[[field]][i], unname(counts[[field]]))) {
        depgraph_abort("integrity", sprintf("'%s': fold split %d says %s %s; its positions hold %d", path, i - 1L,
                                            field, format(plan$splits[[field]][i]), counts[[field]]), path = path)
      }
    }
    if (!counts[["n_test"]]) depgraph_abort("integrity", sprintf("'%s': fold split %d tests no one", path, i - 1L))
    both <- intersect(group_id[role == 0L], group_id[role == 1L])
    if (length(both)) {
      depgraph_abort("integrity", sprintf("'%s': fold split %d puts group(s) on both sides: %s", path, i - 1L,
                                          depgraph_describe_ids(both)), path = path)
    }
  }
}
