#' Errors depgraphR signals
#'
#' Every failure a spec, its key or your data can cause is an R error condition of class
#' `depgraph_error`, and of a class naming its code, `depgraph_error_<code>`, so code can catch one kind and let
#' the others through. The codes are depgraph's own (Python's `DepgraphError.code`), plus `missing_package`:
#'
#' \describe{
#'   \item{`io`}{the spec's path does not exist, or a columnar spec lacks a table.}
#'   \item{`parse`}{the file is not JSON.}
#'   \item{`schema`}{the document is not a split spec's shape: a field or column missing, columns of unequal
#'     lengths, a key repeated in one object, a fold position outside the samples.}
#'   \item{`version`}{a `format_version` whose major is not 1 (a spec of a future major version).}
#'   \item{`integrity`}{the digest does not match the content, a signature does not match its key, or the content
#'     contradicts itself (repeated sample ids, a summary that miscounts, a group on both sides of a split).}
#'   \item{`ambiguity`}{two ids that differ only in Unicode normalisation: one id written two ways.}
#'   \item{`invalid_value`}{an id holding a control or invisible character, or an integer R cannot hold exactly.}
#'   \item{`reference`}{sample ids of one side absent from the other: your data lacks samples of the spec, or holds
#'     samples the spec does not.}
#'   \item{`invalid_argument`}{an argument outside what the function accepts.}
#'   \item{`missing_package`}{a function needs a package that is not installed (`rsample`, `splitGraph`, `arrow`).}
#' }
#'
#' The condition carries `code` and, where one file is at fault, `path`.
#' @name depgraph_error
#' @examples
#' bad <- tempfile(fileext = ".json")
#' writeLines('{"format": "depgraph.split-spec", "format_version": "9.0.0"}', bad)
#' tryCatch(read_depgraph_spec(bad), depgraph_error_version = function(e) conditionMessage(e))
NULL

# Signal a depgraph_error of `code` with `message`; extra fields (path, ids) ride on the condition.
depgraph_abort <- function(code, message, ...) {
  condition <- structure(
    class = c(paste0("depgraph_error_", code), "depgraph_error", "error", "condition"),
    list(message = message, call = NULL, code = code, ...)
  )
  stop(condition)
}

# The first `limit` ids and how many more, for one-line messages (as depgraph's Python side writes them).
depgraph_describe_ids <- function(ids, limit = 5L) {
  shown <- paste(utils::head(ids, limit), collapse = ", ")
  if (length(ids) > limit) shown <- sprintf("%s and %d more", shown, length(ids) - limit)
  shown
}

# Stop with missing_package unless `package` is installed.
depgraph_need <- function(package, what) {
  if (!requireNamespace(package, quietly = TRUE)) {
    depgraph_abort("missing_package", sprintf("%s needs the %s package: install.packages(\"%s\")", what, package,
                                              package), package = package)
  }
}
