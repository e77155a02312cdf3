test_that("every conformance spec gives Python's groups and folds", {
  stems <- conformance_specs()
  expect_gte(length(stems), 18L)
  for (stem in stems) {
    spec <- read_depgraph_spec(fixture(paste0(stem, ".json")))
    expected <- utils::read.csv(fixture(paste0(stem, ".csv")), stringsAsFactors = FALSE)
    table <- depgraph_fold_table(spec)
    expect_identical(table$sample_id, expected$sample_id, label = stem)
    expect_identical(table$`repeat`, expected$repeat., label = stem)
    expect_identical(table$fold, expected$fold, label = stem)
    expect_identical(table$role, expected$role, label = stem)
    groups <- depgraph_groups(spec, data.frame(sample_id = table$sample_id))
    expect_identical(groups, expected$group_id, label = stem)
  }
})

test_that("the JSON and the columnar form give the same spec", {
  skip_if_not(requireNamespace("arrow", quietly = TRUE) ||
                (requireNamespace("reticulate", quietly = TRUE) && reticulate::py_module_available("pyarrow")),
              "neither arrow nor reticulate with pyarrow")
  from_json <- read_depgraph_spec(example_spec("spec.json"))
  from_columns <- read_depgraph_spec(example_spec("spec.dgspec"))
  expect_identical(as.list(from_columns), as.list(from_json))
  expect_identical(attr(from_columns, "depgraph")$digest, attr(from_json, "depgraph")$digest)
  expect_identical(attr(from_columns, "depgraph")$folds$role, attr(from_json, "depgraph")$folds$role)
})

test_that("the samples table holds the spec's columns, and its envelope rides along", {
  spec <- read_depgraph_spec(example_spec())
  expect_s3_class(spec, "data.frame")
  expect_identical(names(spec)[1:2], c("sample_id", "group_id"))
  expect_type(spec$order_rank, "integer")
  meta <- attr(spec, "depgraph")
  expect_identical(meta$constraint$mode, "subject")
  expect_match(meta$digest, "^sha256:[0-9a-f]{64}$")
  expect_identical(dim(meta$folds$role), c(6L, nrow(spec)))
})

test_that("the group vector follows the data's rows", {
  spec <- read_depgraph_spec(example_spec())
  mine <- data.frame(sample_id = rev(spec$sample_id), stringsAsFactors = FALSE)
  expect_identical(depgraph_groups(spec, mine), rev(spec$group_id))
  expect_identical(depgraph_groups(spec), spec$group_id)
})

test_that("the rsample splits are the spec's folds, over the user's rows", {
  skip_if_not_installed("rsample")
  spec <- read_depgraph_spec(example_spec())
  mine <- data.frame(sample_id = rev(spec$sample_id), y = seq_len(nrow(spec)), stringsAsFactors = FALSE)
  folds <- depgraph_rset(spec, data = mine)
  expect_s3_class(folds, "manual_rset")
  expect_identical(folds$id, sprintf("Repeat%d_Fold%d", rep(1:2, each = 3), rep(1:3, 2)))
  role <- attr(spec, "depgraph")$folds$role
  for (i in seq_along(folds$splits)) {
    held <- rsample::assessment(folds$splits[[i]])
    expect_setequal(held$sample_id, spec$sample_id[role[i, ] == 1L])
    expect_identical(held$y, match(held$sample_id, mine$sample_id))
    trained <- rsample::analysis(folds$splits[[i]])$sample_id
    expect_length(intersect(spec$group_id[match(trained, spec$sample_id)],
                            spec$group_id[match(held$sample_id, spec$sample_id)]), 0L)
  }
})

test_that("a signed spec is verified with its key", {
  key <- "depgraphR's test key, never use it for real"
  expect_s3_class(read_depgraph_spec(fixture("signed.json"), verify_key = key), "data.frame")
  expect_error(read_depgraph_spec(fixture("signed.json"), verify_key = "another key"),
               class = "depgraph_error_integrity", regexp = "signed with another key")
  expect_error(read_depgraph_spec(example_spec(), verify_key = key),
               class = "depgraph_error_integrity", regexp = "carries no signature")
})

test_that("the digest is the content's, whatever the file's layout", {
  compact <- edited_spec(function(text) as.character(jsonlite::minify(text)))
  expect_identical(attr(read_depgraph_spec(compact), "depgraph")$digest,
                   attr(read_depgraph_spec(example_spec()), "depgraph")$digest)
})

test_that("numbers are spelt as depgraph spells them", {
  values <- c(1e-5, 1.5e-7, 6, 1e16, 1e15, -0, 0.1 + 0.2, 1.25e-12, 123456.789, 5e-324, 1.7976931348623157e308)
  expect_identical(depgraphR:::depgraph_spell(values), c(
    "0.00001", "1.5e-7", "6.0", "1e+16", "1000000000000000.0", "-0.0", "0.30000000000000004", "1.25e-12",
    "123456.789", "5e-324", "1.7976931348623157e+308"
  ))
  tricky <- paste0("a\"b\\c", intToUtf8(1L), "\n", intToUtf8(233L))
  expect_identical(depgraphR:::depgraph_spell(tricky), paste0("\"a\\\"b\\\\c\\u0001\\n", intToUtf8(233L), "\""))
})

test_that("a spec converts to splitGraph's split_spec", {
  skip_if_not_installed("splitGraph")
  spec <- read_depgraph_spec(example_spec())
  converted <- depgraph_as_split_spec(spec)
  expect_s3_class(converted, "split_spec")
  expect_identical(converted$sample_data$group_id, spec$group_id)
  expect_identical(converted$block_vars, c("batch_group", "study_group"))
  expect_true(splitGraph::validate_split_spec(converted)$valid)
})
