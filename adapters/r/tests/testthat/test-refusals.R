test_that("a spec edited after it was written is refused: its digest does not match", {
  spec <- read_depgraph_spec(example_spec())
  moved <- spec$group_id[1]
  edited <- edited_spec(function(text) sub(sprintf("\"%s\"", moved), "\"subject:someone-else\"", text, fixed = TRUE))
  expect_error(read_depgraph_spec(edited), class = "depgraph_error_integrity", regexp = "digest does not match")
  refused <- tryCatch(read_depgraph_spec(edited), depgraph_error = function(e) e)
  expect_s3_class(refused, "depgraph_error")
  expect_identical(refused$code, "integrity")
})

test_that("a spec of a future major version is refused, naming its version", {
  future <- edited_spec(function(text) sub("\"format_version\": \"1.[0-9]+.[0-9]+\"", "\"format_version\": \"2.0.0\"",
                                           text))
  expect_error(read_depgraph_spec(future), class = "depgraph_error_version", regexp = "format_version 2.0.0")
})

test_that("a document that is not a spec, not JSON, or absent is refused by name", {
  other <- edited_spec(function(text) sub("depgraph.split-spec", "something.else", text, fixed = TRUE))
  expect_error(read_depgraph_spec(other), class = "depgraph_error_schema", regexp = "not a depgraph split spec")
  broken <- edited_spec(function(text) substr(text, 1L, 200L))
  expect_error(read_depgraph_spec(broken), class = "depgraph_error_parse")
  expect_error(read_depgraph_spec(tempfile()), class = "depgraph_error_io", regexp = "does not exist")
  expect_error(read_depgraph_spec(c("a", "b")), class = "depgraph_error_invalid_argument")
})

test_that("an object repeating a key is refused: R and other readers would read different values", {
  twice <- edited_spec(function(text) sub("\"samples\": {", "\"samples\": {\"sample_id\": [\"X\"]},\n  \"samples\": {",
                                          text, fixed = TRUE))
  expect_error(read_depgraph_spec(twice), class = "depgraph_error_schema", regexp = "repeats the key 'samples'")
})

test_that("columns of unequal lengths are refused", {
  short <- edited_spec(function(text) sub("\"group_id\": \\[\"[^\"]+\",", "\"group_id\": [", text))
  expect_error(read_depgraph_spec(short), class = "depgraph_error_schema", regexp = "unequal lengths")
})

test_that("sample ids absent from one side are refused, naming them", {
  spec <- read_depgraph_spec(example_spec())
  partial <- data.frame(sample_id = spec$sample_id[-(1:2)], stringsAsFactors = FALSE)
  if (requireNamespace("rsample", quietly = TRUE)) {
    expect_error(depgraph_rset(spec, data = partial), class = "depgraph_error_reference",
                 regexp = spec$sample_id[1], fixed = TRUE)
  }
  stranger <- data.frame(sample_id = c(spec$sample_id[1], "nobody"), stringsAsFactors = FALSE)
  expect_error(depgraph_groups(spec, stranger), class = "depgraph_error_reference", regexp = "nobody")
  expect_error(depgraph_groups(spec, data.frame(id = 1)), class = "depgraph_error_invalid_argument")
})

test_that("asking for the folds of a spec that has none says so", {
  spec <- read_depgraph_spec(fixture("no_folds.json"))
  expect_null(attr(spec, "depgraph")$folds)
  expect_error(depgraph_fold_table(spec), class = "depgraph_error_invalid_argument", regexp = "carries no folds")
  expect_error(depgraph_fold_table(data.frame(sample_id = "a")), class = "depgraph_error_invalid_argument")
})

test_that("content that contradicts itself is refused even when its digest was recomputed", {
  expect_error(read_depgraph_spec(fixture("straddling.json")), class = "depgraph_error_integrity",
               regexp = "puts group\\(s\\) on both sides")
  expect_error(read_depgraph_spec(fixture("miscounted.json")), class = "depgraph_error_integrity",
               regexp = "summary says n_samples")
})

test_that("a file that is not strict JSON is refused, whatever jsonlite would take", {
  commented <- edited_spec(function(text) sub("\"seed\": ([0-9]+)", "\"seed\": /* 3e9 */ \\1", text))
  expect_error(read_depgraph_spec(commented), class = "depgraph_error_parse", regexp = "comment")
  marked <- edited_spec(function(text) paste0("\ufeff", text))
  expect_error(read_depgraph_spec(marked), class = "depgraph_error_parse", regexp = "not allow")
  nul <- edited_spec(function(text) sub("\"subject\"", "\"sub\\u0000ject\"", text, fixed = TRUE))
  expect_error(read_depgraph_spec(nul), class = "depgraph_error_parse", regexp = "u0000")
  surrogate <- edited_spec(function(text) sub("\"subject\"", "\"sub\\ud800ject\"", text, fixed = TRUE))
  expect_error(read_depgraph_spec(surrogate), class = "depgraph_error_parse", regexp = "lone surrogate")
})

test_that("a split, a signature or a field of the wrong kind is refused by name, never as a bare R error", {
  not_a_split <- edited_spec(function(text) sub("\"splits\": [\n", "\"splits\": [\n      \"x\",\n", text,
                                                fixed = TRUE))
  expect_error(read_depgraph_spec(not_a_split), class = "depgraph_error_schema", regexp = "splits\\[0\\]")
  forged <- edited_spec(function(text) sub("\"digest\": ", "\"signature\": \"abc\",\n  \"digest\": ", text,
                                           fixed = TRUE))
  expect_error(read_depgraph_spec(forged, verify_key = "k"), class = "depgraph_error_schema", regexp = "signature")
  odd <- edited_spec(function(text) sub("\"format_version\": \"1.", "\"format_version\": \"1.x.", text, fixed = TRUE))
  expect_error(read_depgraph_spec(odd), class = "depgraph_error_version")
})
