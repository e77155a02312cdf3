/* A column of a depgraph split spec as its canonical JSON array, in one pass and one string.
 *
 * The digest of a spec is taken over its canonical JSON form (see R/canonical.R). Spelling a million-sample column
 * with R's vectorised string functions makes several million intermediate strings; this writes the array directly.
 * Numbers are spelt as depgraph's JSON library (orjson) spells them: the shortest decimal that reads back as the
 * same double (C's correctly rounded printf and strtod), in plain decimals for exponents -5..15, else as "1.5e-7" /
 * "1e+16"; no JSON library for R spells them so. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *data;
  size_t length, capacity;
} buffer;

static void reserve(buffer *b, size_t more) {
  if (b->length + more <= b->capacity) return;
  size_t capacity = b->capacity ? b->capacity : 1024;
  while (capacity < b->length + more) capacity *= 2;
  char *grown = realloc(b->data, capacity);
  if (!grown) {
    free(b->data);
    Rf_error("depgraphR: out of memory spelling a column");
  }
  b->data = grown;
  b->capacity = capacity;
}

static void put(buffer *b, const char *text, size_t n) {
  reserve(b, n);
  memcpy(b->data + b->length, text, n);
  b->length += n;
}

/* The shortest round-trip digits of a finite, non-zero double: a normal double needs at least 15 significant digits
 * before two decimals of that length can read back as it, so the first of 15, 16, 17 digits that does is the
 * shortest once its trailing zeros are dropped; a subnormal one, holding fewer digits, tries from 1. */
static void spell_double(buffer *b, double v) {
  char text[40], out[48];
  if (v == 0) {
    const char *zero = signbit(v) ? "-0.0" : "0.0";
    put(b, zero, strlen(zero));
    return;
  }
  int digits = fabs(v) < 2.2250738585072014e-308 ? 1 : 15;
  for (; digits < 17; digits++) {
    snprintf(text, sizeof text, "%.*e", digits - 1, v);
    if (strtod(text, NULL) == v) break;
  }
  if (digits == 17) snprintf(text, sizeof text, "%.16e", v);
  /* text is [-]d[.ddd]e[+-]x..: gather the significant digits and the exponent */
  const char *p = text;
  int negative = *p == '-';
  if (negative) p++;
  char significant[24];
  int n = 0;
  for (; *p != 'e'; p++)
    if (*p != '.') significant[n++] = *p;
  int exponent = atoi(p + 1);
  while (n > 1 && significant[n - 1] == '0') n--;
  significant[n] = '\0';
  int k = 0;
  if (negative) out[k++] = '-';
  if (exponent >= 0 && exponent < 16) {
    for (int i = 0; i <= exponent; i++) out[k++] = i < n ? significant[i] : '0';
    out[k++] = '.';
    if (n > exponent + 1)
      for (int i = exponent + 1; i < n; i++) out[k++] = significant[i];
    else
      out[k++] = '0';
  } else if (exponent < 0 && exponent >= -5) {
    out[k++] = '0';
    out[k++] = '.';
    for (int i = 0; i < -exponent - 1; i++) out[k++] = '0';
    for (int i = 0; i < n; i++) out[k++] = significant[i];
  } else {
    out[k++] = significant[0];
    if (n > 1) {
      out[k++] = '.';
      for (int i = 1; i < n; i++) out[k++] = significant[i];
    }
    k += snprintf(out + k, sizeof out - k, "e%c%d", exponent < 0 ? '-' : '+', abs(exponent));
  }
  put(b, out, k);
}

/* A string as orjson quotes it: UTF-8 as is, `"` and `\` escaped, control characters as \b \t \n \f \r or \u00xx. */
static void spell_string(buffer *b, const char *s) {
  put(b, "\"", 1);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    char escaped[8];
    switch (*c) {
      case '"': put(b, "\\\"", 2); break;
      case '\\': put(b, "\\\\", 2); break;
      case '\b': put(b, "\\b", 2); break;
      case '\t': put(b, "\\t", 2); break;
      case '\n': put(b, "\\n", 2); break;
      case '\f': put(b, "\\f", 2); break;
      case '\r': put(b, "\\r", 2); break;
      default:
        if (*c < 0x20) {
          snprintf(escaped, sizeof escaped, "\\u%04x", *c);
          put(b, escaped, 6);
        } else {
          put(b, (const char *)c, 1);
        }
    }
  }
  put(b, "\"", 1);
}

/* One element of an atomic vector, spelt into b. */
static void spell(buffer *b, SEXP values, R_xlen_t i, int whole) {
  char number[32];
  switch (TYPEOF(values)) {
    case STRSXP: {
      SEXP s = STRING_ELT(values, i);
      if (s == NA_STRING) put(b, "null", 4);
      else spell_string(b, Rf_translateCharUTF8(s));
      break;
    }
    case INTSXP: {
      int v = INTEGER(values)[i];
      if (v == NA_INTEGER) put(b, "null", 4);
      else put(b, number, snprintf(number, sizeof number, "%d", v));
      break;
    }
    case REALSXP: {
      double v = REAL(values)[i];
      if (ISNAN(v)) put(b, "null", 4);
      else if (whole) put(b, number, snprintf(number, sizeof number, "%.0f", v));
      else spell_double(b, v);
      break;
    }
    case LGLSXP: {
      int v = LOGICAL(values)[i];
      if (v == NA_LOGICAL) put(b, "null", 4);
      else if (v) put(b, "true", 4);
      else put(b, "false", 5);
      break;
    }
  }
}

static SEXP as_string(buffer *b) {
  if (b->length > INT_MAX) {
    free(b->data);
    Rf_error("depgraphR: a column longer than 2 GB cannot be spelt");
  }
  SEXP out = Rf_mkCharLenCE(b->data ? b->data : "", (int)b->length, CE_UTF8);
  b->length = 0;
  return out;
}

/* An atomic vector (character, integer, double, logical; NA as null; doubles finite, and with `whole` spelt as the
 * integers they hold) in canonical JSON: with `joined`, one string holding the JSON array; else each element. */
SEXP depgraph_json_spell(SEXP values, SEXP joined, SEXP whole) {
  int type = TYPEOF(values);
  if (type != STRSXP && type != INTSXP && type != REALSXP && type != LGLSXP)
    Rf_error("depgraphR: cannot spell a vector of type %s", Rf_type2char(type));
  R_xlen_t n = XLENGTH(values);
  int as_array = Rf_asLogical(joined), integers = Rf_asLogical(whole);
  buffer b = {NULL, 0, 0};
  SEXP result;
  if (as_array) {
    put(&b, "[", 1);
    for (R_xlen_t i = 0; i < n; i++) {
      if (i) put(&b, ",", 1);
      spell(&b, values, i, integers);
    }
    put(&b, "]", 1);
    result = PROTECT(Rf_ScalarString(as_string(&b)));
  } else {
    result = PROTECT(Rf_allocVector(STRSXP, n));
    for (R_xlen_t i = 0; i < n; i++) {
      spell(&b, values, i, integers);
      SET_STRING_ELT(result, i, as_string(&b));
    }
  }
  free(b.data);
  UNPROTECT(1);
  return result;
}

/* The R type of each element of a list (as typeof() names it), for a million-element column in one call. */
SEXP depgraph_list_types(SEXP x) {
  R_xlen_t n = XLENGTH(x);
  SEXP out = PROTECT(Rf_allocVector(STRSXP, n));
  for (R_xlen_t i = 0; i < n; i++) SET_STRING_ELT(out, i, Rf_mkChar(Rf_type2char(TYPEOF(VECTOR_ELT(x, i)))));
  UNPROTECT(1);
  return out;
}
