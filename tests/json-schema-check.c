/* json-schema-check — validate a JSON document against a JSON Schema:
 *
 *   json-schema-check SCHEMA.json DOCUMENT.json
 *
 * The subset of JSON Schema (2020-12) that flightrec's schemas in formats/
 * use: type (a name or an array of names; "integer" is a whole number),
 * properties, required, additionalProperties (false or a schema), items,
 * minItems, enum, const, minimum, minLength, pattern limited to
 * "^[0-9a-f]{16}$" (comm ids), anyOf, oneOf, and $ref to "#/$defs/NAME".
 * A keyword outside this subset is an error, so a schema cannot silently
 * go unchecked.  Every violation is printed with its path.
 * Exit status: 0 valid, 1 invalid, 2 unreadable input or bad schema. */
#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *root_schema;
static int schema_error;

static char *read_all(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  rewind(f);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) b[n] = '\0';
  return b;
}

static int is_type(const cJSON *v, const char *t)
{
  if (!strcmp(t, "object")) return cJSON_IsObject(v);
  if (!strcmp(t, "array")) return cJSON_IsArray(v);
  if (!strcmp(t, "string")) return cJSON_IsString(v);
  if (!strcmp(t, "boolean")) return cJSON_IsBool(v);
  if (!strcmp(t, "null")) return cJSON_IsNull(v);
  if (!strcmp(t, "number")) return cJSON_IsNumber(v);
  if (!strcmp(t, "integer")) return cJSON_IsNumber(v) && floor(v->valuedouble) == v->valuedouble;
  fprintf(stderr, "json-schema-check: unknown type \"%s\" in the schema\n", t);
  schema_error = 1;
  return 0;
}

static int hex16(const char *s)
{
  if (strlen(s) != 16) return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
  return 1;
}

/* Number of violations of schema s by value v at path p; printed when loud. */
static int check(const cJSON *s, const cJSON *v, const char *p, int loud);

static int say(int loud, const char *p, const char *what)
{
  if (loud) printf("%s: %s\n", *p ? p : "(document)", what);
  return 1;
}

static int check_object(const cJSON *s, const cJSON *v, const char *p, int loud)
{
  int bad = 0;
  char sub[2048];
  const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
  const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
  const cJSON *add = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
  const cJSON *k;
  cJSON_ArrayForEach(k, req) {
    if (!cJSON_GetObjectItemCaseSensitive(v, k->valuestring)) {
      char w[512];
      snprintf(w, sizeof w, "required key \"%s\" missing", k->valuestring);
      bad += say(loud, p, w);
    }
  }
  const cJSON *m;
  cJSON_ArrayForEach(m, v) {
    snprintf(sub, sizeof sub, "%s%s%s", p, *p ? "." : "", m->string);
    const cJSON *ps = props ? cJSON_GetObjectItemCaseSensitive(props, m->string) : NULL;
    if (ps) bad += check(ps, m, sub, loud);
    else if (cJSON_IsFalse(add)) bad += say(loud, sub, "key not allowed");
    else if (cJSON_IsObject(add)) bad += check(add, m, sub, loud);
  }
  return bad;
}

static int check(const cJSON *s, const cJSON *v, const char *p, int loud)
{
  int bad = 0;
  char sub[2048], w[512];
  if (cJSON_IsTrue(s)) return 0;
  const cJSON *kw;
  cJSON_ArrayForEach(kw, s) {
    const char *k = kw->string;
    if (!strcmp(k, "$ref")) {
      const char *r = kw->valuestring;
      if (!r || strncmp(r, "#/$defs/", 8) != 0) {
        fprintf(stderr, "json-schema-check: unsupported $ref\n");
        schema_error = 1;
        return 1;
      }
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root_schema, "$defs"), r + 8);
      if (!t) {
        fprintf(stderr, "json-schema-check: $ref %s not found\n", r);
        schema_error = 1;
        return 1;
      }
      bad += check(t, v, p, loud);
    } else if (!strcmp(k, "type")) {
      int ok = 0;
      if (cJSON_IsString(kw)) ok = is_type(v, kw->valuestring);
      else {
        const cJSON *t;
        cJSON_ArrayForEach(t, kw) ok |= is_type(v, t->valuestring);
      }
      if (!ok) return say(loud, p, "wrong type");
    } else if (!strcmp(k, "properties") || !strcmp(k, "required") || !strcmp(k, "additionalProperties")) {
      /* handled together below */
    } else if (!strcmp(k, "items")) {
      if (cJSON_IsArray(v)) {
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
          snprintf(sub, sizeof sub, "%s[%d]", p, i++);
          bad += check(kw, e, sub, loud);
        }
      }
    } else if (!strcmp(k, "minItems")) {
      if (cJSON_IsArray(v) && cJSON_GetArraySize(v) < kw->valueint) bad += say(loud, p, "too few items");
    } else if (!strcmp(k, "enum")) {
      int ok = 0;
      const cJSON *e;
      cJSON_ArrayForEach(e, kw) ok |= cJSON_Compare(e, v, 1);
      if (!ok) bad += say(loud, p, "value not in enum");
    } else if (!strcmp(k, "const")) {
      if (!cJSON_Compare(kw, v, 1)) bad += say(loud, p, "value differs from const");
    } else if (!strcmp(k, "minimum")) {
      if (cJSON_IsNumber(v) && v->valuedouble < kw->valuedouble) bad += say(loud, p, "below minimum");
    } else if (!strcmp(k, "minLength")) {
      if (cJSON_IsString(v) && (int)strlen(v->valuestring) < kw->valueint) bad += say(loud, p, "too short");
    } else if (!strcmp(k, "pattern")) {
      if (!kw->valuestring || strcmp(kw->valuestring, "^[0-9a-f]{16}$") != 0) {
        fprintf(stderr, "json-schema-check: unsupported pattern\n");
        schema_error = 1;
        return 1;
      }
      if (cJSON_IsString(v) && !hex16(v->valuestring)) bad += say(loud, p, "not 16 lowercase hex digits");
    } else if (!strcmp(k, "anyOf") || !strcmp(k, "oneOf")) {
      int n = 0;
      const cJSON *alt;
      cJSON_ArrayForEach(alt, kw) n += check(alt, v, p, 0) == 0;
      if (n == 0 || (k[0] == 'o' && n != 1)) {
        snprintf(w, sizeof w, "matches %d of the %s alternatives", n, k);
        bad += say(loud, p, w);
      }
    } else if (!strcmp(k, "$schema") || !strcmp(k, "$id") || !strcmp(k, "$defs") || !strcmp(k, "title") ||
               !strcmp(k, "description") || !strcmp(k, "$comment")) {
      /* annotations */
    } else {
      fprintf(stderr, "json-schema-check: unsupported keyword \"%s\"\n", k);
      schema_error = 1;
      return 1;
    }
  }
  if (cJSON_IsObject(v)) bad += check_object(s, v, p, loud);
  return bad;
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fputs("usage: json-schema-check SCHEMA.json DOCUMENT.json\n", stderr);
    return 2;
  }
  char *st = read_all(argv[1]), *dt = read_all(argv[2]);
  root_schema = st ? cJSON_Parse(st) : NULL;
  cJSON *doc = dt ? cJSON_Parse(dt) : NULL;
  free(st);
  free(dt);
  if (!root_schema || !doc) {
    fprintf(stderr, "json-schema-check: cannot read or parse %s\n", root_schema ? argv[2] : argv[1]);
    cJSON_Delete(root_schema);
    cJSON_Delete(doc);
    return 2;
  }
  int bad = check(root_schema, doc, "", 1);
  cJSON_Delete(root_schema);
  cJSON_Delete(doc);
  if (schema_error) return 2;
  return bad ? 1 : 0;
}
