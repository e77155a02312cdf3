# The canonical form a spec's digest is taken over, spelt in R exactly as depgraph spells it.
#
# The digest is "sha256:<hex>" of the document's content: every top-level field but created_at, generator, digest
# and signature, as compact JSON with object keys sorted (by code point), strings in UTF-8 with only `"`, `\` and
# control characters escaped, integers as integers and other numbers in their shortest round-trip spelling laid out
# as depgraph's JSON library lays them out ("6.0", "0.00001", "1.5e-7", "1e+16"): depgraph_spell(). The content is
# parsed without simplification (jsonlite's parse_json), so an integer stays an integer, a number stays a number and
# a one-element array stays an array: what was written is what is spelt, whatever its layout in the file.

DEPGRAPH_UNDIGESTED <- c("created_at", "generator", "digest", "signature")
DEPGRAPH_SIGNED_PREFIX <- "depgraph.split-spec:"

# "sha256:<hex>" of the canonical form of `doc`'s content.
depgraph_content_digest <- function(doc) {
  depgraph_sha256(doc[setdiff(names(doc), DEPGRAPH_UNDIGESTED)])
}

# The digest of the document parsed from `text`, its content made by `content` (the JSON file's document is its own
# content; a columnar spec's manifest gets its columns). One spelling is ambiguous after parsing: an integer beyond
# R's 32-bit range is read as a double, and "3000000000" and "3000000000.0" both read as 3e9. When the text holds
# an integer token long enough to lie there, the tokens say which numbers were written as integers, and those are
# spelt as written.
depgraph_digest_of <- function(doc, text, content = identity) {
  tokens <- depgraph_number_tokens(text)
  if (any(tokens$integer & tokens$length >= 10L)) doc <- depgraph_mark_integers(doc, tokens, text)
  depgraph_content_digest(content(doc))
}

# `doc` with each split's test and excluded positions as the integer arrays read (I(): spelt in one pass); with
# `listed_only`, only the roles a split lists (a JSON file's splits, as written; a manifest's list none).
depgraph_with_positions <- function(doc, positions, listed_only) {
  for (i in seq_along(positions)) {
    for (role in c("test", "excluded")) {
      if (!listed_only || !is.null(doc$folds$splits[[i]][[role]])) {
        doc$folds$splits[[i]][[role]] <- I(positions[[i]][[role]])
      }
    }
  }
  doc
}

# The canonical form streamed through a file, a column at a time (a million-sample spec is never one string).
depgraph_sha256 <- function(content) {
  scratch <- tempfile("depgraph-canonical-")
  on.exit(unlink(scratch), add = TRUE)
  out <- file(scratch, open = "wb")
  tryCatch(depgraph_write_canonical(content, out), finally = close(out))
  paste0("sha256:", digest::digest(file = scratch, algo = "sha256"))
}

depgraph_write_canonical <- function(content, out) {
  keys <- names(content)
  o <- order(keys, method = "radix")
  put <- function(text) writeBin(charToRaw(enc2utf8(text)), out)
  put("{")
  for (j in seq_along(o)) {
    put(paste0(if (j > 1L) "," else "", depgraph_spell(keys[o[j]]), ":"))
    put(depgraph_json(content[[o[j]]]))
  }
  put("}")
}

# The number tokens of a strict JSON text in document order (src/canonical.c skips strings): where each starts,
# its length, and whether it is an integer (no fraction, no exponent). parse_json keeps document order, so the k-th
# token is the k-th number met walking the parsed document depth first.
depgraph_number_tokens <- function(text) .Call(C_json_scan, text, TRUE)

# `doc` with every double written as an integer token marked as that integer, its digits as written.
depgraph_mark_integers <- function(doc, tokens, text) {
  k <- 0L
  bytes <- charToRaw(text)  # the tokens' places count bytes
  mark <- function(at) {
    digits <- vapply(at, function(i) rawToChar(bytes[tokens$start[i] + seq_len(tokens$length[i]) - 1L]), "")
    wide <- sprintf("%.0f", as.numeric(digits)) != sub("^-0$", "0", digits)  # not held exactly by a double
    if (any(wide)) {
      depgraph_abort("invalid_value", sprintf(
        "the spec holds the integer %s, beyond 2^53, which R cannot hold exactly", digits[wide][1L]
      ))
    }
    lapply(digits, function(d) structure(list(d), class = "depgraph_integer_text"))
  }
  walk <- function(x) {
    if (!is.list(x)) {
      if (!is.numeric(x)) return(x)
      k <<- k + 1L
      return(if (is.double(x) && tokens$integer[k]) mark(k)[[1L]] else x)
    }
    type <- depgraph_types(x)
    if (is.null(names(x)) && all(lengths(x) <= 1L) && !any(type == "list")) {
      at <- which(type %in% c("integer", "double"))
      index <- k + seq_along(at)
      k <<- k + length(at)
      wide <- tokens$integer[index] & type[at] == "double"
      x[at[wide]] <- mark(index[wide])
      return(x)
    }
    for (i in seq_along(x)) if (!is.null(x[[i]])) x[[i]] <- walk(x[[i]])
    x
  }
  walk(doc)
}

# One JSON value in canonical form, as one string. A value is what parse_json gives (a named list is an object, an
# unnamed list an array, a length-one vector a scalar, NULL null), or an AsIs vector (I(x)): an array of scalars.
depgraph_json <- function(x) {
  if (is.null(x)) return("null")
  if (inherits(x, "depgraph_integer_text")) return(x[[1L]])
  if (inherits(x, "depgraph_spelt")) return(unclass(x))
  if (inherits(x, "AsIs")) return(depgraph_spell(unclass(x), joined = TRUE))
  if (!is.list(x)) return(depgraph_spell(x))
  keys <- names(x)
  if (!is.null(keys)) {
    if (!length(keys)) return("{}")
    o <- order(keys, method = "radix")
    values <- vapply(x[o], depgraph_json, character(1), USE.NAMES = FALSE)
    return(paste0("{", paste0(depgraph_spell(keys[o]), ":", values, collapse = ","), "}"))
  }
  if (all(lengths(x) <= 1L) && !any(depgraph_types(x) == "list")) {
    return(paste0("[", paste(depgraph_scalars(x), collapse = ","), "]"))
  }
  paste0("[", paste(vapply(x, depgraph_json, character(1), USE.NAMES = FALSE), collapse = ","), "]")
}

# A list of scalars (and NULLs), each spelt by its own type: a column as parse_json gives it, vectorised by type.
depgraph_scalars <- function(x) {
  type <- depgraph_types(x)
  spelt <- character(length(x))
  for (kind in unique(type)) {
    at <- which(type == kind)
    spelt[at] <- if (kind == "NULL") "null" else depgraph_spell(unlist(x[at], use.names = FALSE))
  }
  spelt
}

# typeof() of each element of a list (a column of a million values in one call, src/canonical.c).
depgraph_types <- function(x) if (is.list(x)) .Call(C_list_types, x) else rep(typeof(x), length(x))

# An atomic vector in canonical form, each element (NA is null) or, `joined`, the whole as one JSON array; `whole`
# doubles spelt as the integers they hold (a 64-bit integer column R holds as doubles). Strings are quoted as
# depgraph's JSON library quotes them (UTF-8; `"`, `\` and control characters escaped), numbers spelt as it spells
# them (the shortest decimal that reads back as the same double: "6.0", "0.00001", "1.5e-7", "1e+16"); the C code
# in src/canonical.c does both, in one pass over a column.
depgraph_spell <- function(v, joined = FALSE, whole = FALSE) {
  if (is.double(v)) {
    if (!all(is.finite(v) | is.na(v))) {
      depgraph_abort("schema", "a spec holds a number that is not finite (Infinity or NaN are not JSON numbers)")
    }
  } else if (is.character(v)) {
    v <- enc2utf8(v)
  } else if (!is.integer(v) && !is.logical(v)) {
    depgraph_abort("schema", sprintf("a spec holds a value of R type %s, which is not JSON data", typeof(v)))
  }
  .Call(C_json_spell, v, joined, whole)
}

# The digest a signature signs, checked against `key` (text or raw) as depgraph checks it: HMAC-SHA256 of
# "depgraph.split-spec:" + digest, and the key's fingerprint (HMAC-SHA256 of a fixed label, 16 hex digits).
depgraph_check_signature <- function(signature, digest, key, path) {
  if (is.null(signature)) {
    depgraph_abort("integrity", sprintf("'%s' carries no signature; a signed spec is needed", path), path = path)
  }
  ours <- substr(digest::hmac(key, "depgraph signing key fingerprint", "sha256"), 1L, 16L)
  if (!identical(signature$key_fingerprint, ours)) {
    depgraph_abort("integrity", sprintf("'%s' is signed with another key (key fingerprint %s, yours is %s)", path,
                                        format(signature$key_fingerprint), ours), path = path)
  }
  if (!identical(signature$value, digest::hmac(key, paste0(DEPGRAPH_SIGNED_PREFIX, digest), "sha256"))) {
    depgraph_abort("integrity", sprintf(
      "'%s': the signature does not match the digest; the spec was changed after it was signed", path
    ), path = path)
  }
}
