# The specs the tests read: the example cohort, and every conformance fixture with the fold table Python wrote.
example_spec <- function(form = "spec.json") system.file("extdata", form, package = "depgraphR")
fixture <- function(name) test_path("fixtures", name)
conformance_specs <- function() sub("\\.csv$", "", list.files(test_path("fixtures"), pattern = "\\.csv$"))

# A copy of the example spec's text with `edit` applied (a function of the text), written to a temporary file.
edited_spec <- function(edit) {
  text <- readChar(example_spec(), file.info(example_spec())$size, useBytes = TRUE)
  path <- tempfile(fileext = ".json")
  writeChar(edit(text), path, eos = NULL, useBytes = TRUE)
  path
}
