#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

SEXP depgraph_json_spell(SEXP values, SEXP joined, SEXP whole);
SEXP depgraph_list_types(SEXP x);
SEXP depgraph_json_scan(SEXP text, SEXP numbers);

static const R_CallMethodDef calls[] = {
  {"json_spell", (DL_FUNC)&depgraph_json_spell, 3},
  {"list_types", (DL_FUNC)&depgraph_list_types, 1},
  {"json_scan", (DL_FUNC)&depgraph_json_scan, 2},
  {NULL, NULL, 0}
};

void R_init_depgraphR(DllInfo *info) {
  R_registerRoutines(info, NULL, calls, NULL, NULL);
  R_useDynamicSymbols(info, FALSE);
}
