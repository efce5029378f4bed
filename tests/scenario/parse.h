/* parse.h — internals of the scenario parser shared by scenario.c (body
 * ops, faults, job settings, the file as a whole) and comms.c (comm, env,
 * post and watchdog lines).  Every function that reports an error prints
 * "FILE:LINE: message" and returns -1. */
#ifndef FR_SCENARIO_PARSE_H
#define FR_SCENARIO_PARSE_H

#include "scenario.h"

/* Parsing state: where we are, for messages. */
struct sc_ctx {
  struct scenario *sc;
  int line;
  int group_depth;
  int group_line;               /* line of the outermost open 'group begin' */
  /* fault op / swap references by label, resolved at the end */
  char (*fault_op)[SC_NAME_MAX];
  char (*fault_swap)[SC_NAME_MAX];
};

int sc_error(const struct sc_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sc_dtype_parse(const struct sc_ctx *c, const char *s, ncclDataType_t *out);
int sc_redop_parse(const struct sc_ctx *c, const char *s, ncclRedOp_t *out);
int sc_long_parse(const struct sc_ctx *c, const char *what, const char *s, long lo, long hi, long *out);
/* Checks an expression and copies it into dst (SC_EXPR_MAX bytes). */
int sc_expr_copy(const struct sc_ctx *c, const char *what, const char *s, char *dst);
/* A name: a letter, then letters, digits, '_' or '-'; 1 when good. */
int sc_name_ok(const char *s);
/* "5", "3-7", "0,2,4-6", "all", "*", "even", "odd"; values in [0, max). */
int sc_set_parse(const struct sc_ctx *c, const char *what, const char *s, long max, struct sc_set *set);
/* Splits key=value in place; returns 0 for a bare word. */
int sc_kv(char *tok, char **key, char **val);
/* Index of a communicator by name, -1 when unknown. */
int sc_comm_find(const struct scenario *sc, const char *name);
/* Grows an array of n elements to n+1; returns the new element, zeroed. */
void *sc_push(void *arrayp, int *n, size_t size);

/* comms.c */
int sc_parse_comm(struct sc_ctx *c, char **tok, int n);
int sc_parse_env(struct sc_ctx *c, char **tok, int n);
int sc_parse_post(struct sc_ctx *c, char **tok, int n);
int sc_parse_watchdog(struct sc_ctx *c, char **tok, int n);

#endif /* FR_SCENARIO_PARSE_H */
