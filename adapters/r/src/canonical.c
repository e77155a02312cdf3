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

/* Whether mantissa x 10^power reads back as v (C's strtod rounds correctly). */
static int reads_back(unsigned long long mantissa, int power, double v) {
  char text[48];
  snprintf(text, sizeof text, "%llue%d", mantissa, power);
  return strtod(text, NULL) == v;
}

/* The shortest decimal that reads back as v (finite, non-zero), closest to v among the shortest, as its digits
 * (mantissa) and power of ten. A normal double needs at least 15 significant digits before two decimals of that
 * length can read back as it; a subnormal one, holding fewer digits, tries from 1. At each length the decimal
 * nearest v (printf's, correctly rounded) is tried first, then its neighbours: where v's neighbouring doubles are
 * not equally far (a power of two), the nearest may fall outside what reads back while the next one does not. */
static void shortest(double v, unsigned long long *mantissa, int *power) {
  char text[40];
  for (int digits = fabs(v) < 2.2250738585072014e-308 ? 1 : 15; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*e", digits - 1, fabs(v));
    unsigned long long m = 0;
    const char *p = text;
    for (; *p != 'e'; p++)
      if (*p != '.') m = m * 10 + (unsigned long long)(*p - '0');
    int e = atoi(p + 1) - (digits - 1);
    double target = fabs(v);
    if (reads_back(m, e, target) || digits == 17) { *mantissa = m; *power = e; return; }
    if (reads_back(m + 1, e, target)) { *mantissa = m + 1; *power = e; return; }
    if (m > 1 && reads_back(m - 1, e, target)) { *mantissa = m - 1; *power = e; return; }
  }
}

/* A double as orjson spells it: the shortest round-trip digits, in plain decimals for exponents -5..15 ("6.0",
 * "0.00001", "1250000000000000.0"), else "1.5e-7" / "1e+16". */
static void spell_double(buffer *b, double v) {
  char out[48], significant[24];
  if (v == 0) {
    const char *zero = signbit(v) ? "-0.0" : "0.0";
    put(b, zero, strlen(zero));
    return;
  }
  unsigned long long mantissa;
  int power;
  shortest(v, &mantissa, &power);
  while (mantissa % 10 == 0) { mantissa /= 10; power++; }
  int n = snprintf(significant, sizeof significant, "%llu", mantissa);
  int exponent = power + n - 1, k = 0;
  if (v < 0) out[k++] = '-';
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

/* The text of a JSON document held to strict JSON before jsonlite reads it (jsonlite also takes comments, which
 * other readers refuse, and cuts a string at \u0000 or turns a lone surrogate into "?"): outside strings only
 * whitespace, structural characters, numbers and the literals; inside strings no escape R cannot hold. Returns the
 * empty string when the text is strict JSON, else what is wrong. With `numbers`, returns instead the list of number
 * tokens in document order: where each starts (1-based), its length, and whether it is an integer. */
static int hex4(const unsigned char *p) {
  int value = 0;
  for (int i = 0; i < 4; i++) {
    int c = p[i], digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

static SEXP scan_problem(const char *what, R_xlen_t at) {
  char message[160];
  snprintf(message, sizeof message, "%s (byte %lld)", what, (long long)at + 1);
  return Rf_ScalarString(Rf_mkChar(message));
}

SEXP depgraph_json_scan(SEXP text, SEXP numbers) {
  const unsigned char *s = (const unsigned char *)CHAR(STRING_ELT(text, 0));
  R_xlen_t n = (R_xlen_t)strlen((const char *)s), count = 0, i = 0;
  int want = Rf_asLogical(numbers);
  for (int pass = 0; pass < (want ? 2 : 1); pass++) {
    SEXP start = R_NilValue, length = R_NilValue, integer = R_NilValue;
    if (pass == 1) {
      start = PROTECT(Rf_allocVector(INTSXP, count));
      length = PROTECT(Rf_allocVector(INTSXP, count));
      integer = PROTECT(Rf_allocVector(LGLSXP, count));
    }
    R_xlen_t k = 0;
    for (i = 0; i < n; i++) {
      unsigned char c = s[i];
      if (c == '"') {
        for (i++; i < n && s[i] != '"'; i++) {
          if (s[i] < 0x20) return scan_problem("a string holds a raw control character", i);
          if (s[i] != '\\') continue;
          i++;
          if (i < n && s[i] == 'u') {
            int code = i + 4 < n ? hex4(s + i + 1) : -1;
            if (code == 0) return scan_problem("a string holds \\u0000, which an R string cannot hold", i);
            if (code >= 0xD800 && code <= 0xDBFF) {
              int low = (i + 10 < n && s[i + 5] == '\\' && s[i + 6] == 'u') ? hex4(s + i + 7) : -1;
              if (low < 0xDC00 || low > 0xDFFF) return scan_problem("a string holds a lone surrogate escape", i);
              i += 6;  /* the pair's low half, read */
            } else if (code >= 0xDC00 && code <= 0xDFFF) {
              return scan_problem("a string holds a lone surrogate escape", i);
            }
          }
        }
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        R_xlen_t first = i;
        int whole = 1;
        for (; i + 1 < n; i++) {
          unsigned char d = s[i + 1];
          if (d == '.' || d == 'e' || d == 'E') whole = 0;
          else if (!(d == '+' || d == '-' || (d >= '0' && d <= '9'))) break;
        }
        if (pass == 1) {
          INTEGER(start)[k] = (int)first + 1;
          INTEGER(length)[k] = (int)(i - first + 1);
          LOGICAL(integer)[k] = whole;
        }
        k++;
      } else if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '{' || c == '}' || c == '[' ||
                   c == ']' || c == ':' || c == ',' || c == 't' || c == 'r' || c == 'u' || c == 'e' || c == 'f' ||
                   c == 'a' || c == 'l' || c == 's' || c == 'n')) {
        return scan_problem(c == '/' ? "it holds a comment, which JSON does not allow"
                                     : "it holds a character JSON does not allow outside strings", i);
      }
    }
    if (pass == 0) count = k;
    else {
      SEXP out = PROTECT(Rf_allocVector(VECSXP, 3)), names = PROTECT(Rf_allocVector(STRSXP, 3));
      SET_VECTOR_ELT(out, 0, start);
      SET_VECTOR_ELT(out, 1, length);
      SET_VECTOR_ELT(out, 2, integer);
      SET_STRING_ELT(names, 0, Rf_mkChar("start"));
      SET_STRING_ELT(names, 1, Rf_mkChar("length"));
      SET_STRING_ELT(names, 2, Rf_mkChar("integer"));
      Rf_setAttrib(out, R_NamesSymbol, names);
      UNPROTECT(5);
      return out;
    }
  }
  return Rf_ScalarString(Rf_mkChar(""));
}
