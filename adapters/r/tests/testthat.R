library(testthat)
library(depgraphR)

test_check("depgraphR")
