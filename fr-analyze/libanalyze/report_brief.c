/* report_brief.c — the text report's default sections after the verdict,
 * bounded at any scale: the communicators folded into counts (idle ones
 * counted, not listed; those that are not idle named, a few of them, with
 * their members' states as rank ranges), and the input in a few lines.
 * `fr-analyze --full` prints every communicator and problem instead
 * (report_text.c).  Every line within 80 columns. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define MAX_COMMS 6     /* comms that are not idle, named */
#define MAX_PROBLEMS 3  /* input problems, named */
#define MAX_ALIVE 4     /* announcements of ranks without a dump, named */
#define SET_LEN 48      /* a rank set, folded ("0-2050,2052-4095") */

/* Is comm c worth a line: stuck, mismatched, with links, in flight? */
static int not_idle(const fa_comm *c)
{
  return c->stuck || c->has_mismatch || c->nlinks || c->in_flight || c->unformed;
}

/* "waiting 0-2050,2052-4095; lagging 2051" for c's stuck op, one line. */
static int states_line(FILE *o, const fa_comm *c)
{
  static const fa_member_state order[] = {FA_MEMBER_WAITING, FA_MEMBER_UNFINISHED, FA_MEMBER_PASSED,
                                          FA_MEMBER_AHEAD, FA_MEMBER_LAGGING, FA_MEMBER_NO_DUMP};
  char buf[SET_LEN], line[256];
  int n = 0;
  for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
    fa_ranks r;
    if (fa_comm_ranks(c, order[i], &r)) return -1;
    if (r.n && n < (int)sizeof line)
      n += snprintf(line + n, sizeof line - (size_t)n, "%s%s %s", n ? "; " : "", fa_member_state_name(order[i]),
                    fa_format_ranks(r.v, r.n, buf, sizeof buf));
    fa_ranks_free(&r);
  }
  if (n) {
    if (n > 80 - 6) { /* cut at a blank, the rest said as cut */
      int cut = 80 - 6 - 4;
      while (cut > 0 && line[cut] != ' ') cut--;
      fprintf(o, "      %.*s ...\n", cut, line);
    } else {
      fprintf(o, "      %s\n", line);
    }
  }
  return 0;
}

static int comm_line(FILE *o, const fa_analysis *a, const fa_comm *c)
{
  char hex[17], op[160], nm[FRZ_PT_NAME_MAX];
  fprintf(o, "  comm %s", fa_hex(c->id, hex));
  if (c->pt) fprintf(o, " (pg %s)", fa_sanitize(c->pt->name, nm, sizeof nm));
  fprintf(o, ": %d rank%s", c->size, c->size == 1 ? "" : "s");
  if (c->stuck) {
    const frz_dump *d;
    const frz_record *r = fa_comm_record_in(a, c, c->stuck_seq, &d);
    snprintf(op, sizeof op, "%s", r ? fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm) : "op");
    if (strlen(op) > 24) op[24] = '\0';
    fprintf(o, ", stuck at %s seq %llu\n", op, (unsigned long long)c->stuck_seq);
    return states_line(o, c);
  }
  if (c->has_mismatch) fprintf(o, ", calls differ at seq %llu\n", (unsigned long long)c->mismatch.seq);
  else if (c->in_flight) fprintf(o, ", op in flight at seq %llu\n", (unsigned long long)c->stuck_seq);
  else if (c->nlinks) fprintf(o, ", %u missing link%s\n", c->nlinks, c->nlinks == 1 ? "" : "s");
  else fputs(", never formed\n", o);
  return 0;
}

static int comms_brief(FILE *o, const fa_analysis *a)
{
  uint32_t busy = 0, stuck = 0, shown = 0;
  for (uint32_t i = 0; i < a->ncomms; i++) {
    busy += (uint32_t)not_idle(&a->comms[i]);
    stuck += a->comms[i].stuck;
  }
  fprintf(o, "\ncommunicators: %u (", a->ncomms);
  if (stuck) fprintf(o, "%u stuck, ", stuck);
  if (busy > stuck) fprintf(o, "%u other%s not idle, ", busy - stuck, busy - stuck == 1 ? "" : "s");
  fprintf(o, "%u idle)\n", a->ncomms - busy);
  /* the verdict's comm first, then the others in id order */
  const fa_verdict *v = &a->verdict;
  int32_t first = v->comm >= 0 ? v->comm : v->mismatch_comm;
  if (first >= 0 && not_idle(&a->comms[first])) {
    if (comm_line(o, a, &a->comms[first])) return -1;
    shown++;
  }
  for (uint32_t i = 0; i < a->ncomms && shown < MAX_COMMS; i++) {
    if ((int32_t)i == first || !not_idle(&a->comms[i])) continue;
    if (comm_line(o, a, &a->comms[i])) return -1;
    shown++;
  }
  if (busy > shown) fprintf(o, "  and %u more not idle\n", busy - shown);
  return 0;
}

void fa_wrap_text(FILE *o, const char *t, int first, int rest)
{
  int lead = first;
  while (*t) {
    int n = (int)strlen(t), cut = n;
    if (lead + n > 80) {
      cut = 80 - lead;
      while (cut > 0 && t[cut] != ' ') cut--;
      if (cut == 0) cut = (int)strcspn(t, " ");
    }
    fprintf(o, "%*s%.*s\n", lead, "", cut, t);
    t += cut;
    while (*t == ' ') t++;
    lead = rest;
  }
}

static void input_brief(FILE *o, const fa_analysis *a)
{
  char buf[SET_LEN], safe[256];
  fa_ranks found = {NULL, 0};
  uint32_t cap = 0;
  for (uint32_t i = 0; i < a->nranks; i++)
    if (fa_ranks_push(&found, &cap, a->ranks[i].global_rank)) break;
  fprintf(o, "\ninput: %u file%s, %u dump%s", a->nfiles, a->nfiles == 1 ? "" : "s", a->nframes,
          a->nframes == 1 ? "" : "s");
  if (a->nframes) {
    fa_sanitize(a->job_id, safe, sizeof safe);
    if (strlen(safe) > 24) strcpy(safe + 21, "...");
    fprintf(o, " of job \"%s\"", safe);
  }
  if (a->world_size >= 0) fprintf(o, ", world size %d", a->world_size);
  fputc('\n', o);
  fprintf(o, "  ranks found:   %s\n", found.n ? fa_format_ranks(found.v, found.n, buf, sizeof buf) : "none");
  fa_ranks_free(&found);
  fprintf(o, "  ranks missing: %s\n",
          a->ranks_missing.n ? fa_format_ranks(a->ranks_missing.v, a->ranks_missing.n, buf, sizeof buf) : "none");
  if (a->beside.n) {
    fprintf(o, "  not given:     %s (dumps beside the input, in\n",
            fa_format_ranks(a->beside.v, a->beside.n, buf, sizeof buf));
    fprintf(o, "                 %s)\n", fa_sanitize(a->beside_dir ? a->beside_dir : "?", safe, sizeof safe));
  }
  uint32_t said = 0;
  for (uint32_t i = 0; i < a->ranks_missing.n && said < MAX_ALIVE; i++) {
    const frz_alive *x = fa_alive_of(a, a->ranks_missing.v[i]);
    if (!x) continue;
    said++;
    fprintf(o, "    rank %d: announced as pid %u on host %s; no dump\n", x->global_rank, x->pid,
            fa_sanitize(x->host[0] ? x->host : "?", safe, sizeof safe));
  }
  if (!a->nframes) /* announcements only: who was running */
    for (uint32_t i = 0; i < a->nalive && said < MAX_ALIVE; i++, said++)
      fprintf(o, "    rank %d: announced as pid %u on host %s; no dump\n", a->alive[i].global_rank,
              a->alive[i].pid, fa_sanitize(a->alive[i].host[0] ? a->alive[i].host : "?", safe, sizeof safe));
  if (a->note) {
    char note[1024], line[1100];
    snprintf(line, sizeof line, "note:          %s", fa_sanitize(a->note, note, sizeof note));
    if (strlen(line) > 4 * 80) strcpy(line + 4 * 80 - 3, "..."); /* (4 lines at most) */
    fa_wrap_text(o, line, 2, 17);
  }
  if (!a->nproblems) fputs("  problems:      none\n", o);
  else fprintf(o, "  problems:      %u\n", a->nproblems);
  for (uint32_t i = 0; i < a->nproblems && i < MAX_PROBLEMS; i++) {
    const fa_problem *p = &a->problems[i];
    char line[2048], f[1024], m[1024], off[48] = "";
    const char *slash = p->file ? strrchr(p->file, '/') : NULL;
    if (p->has_offset) snprintf(off, sizeof off, "at byte %llu: ", (unsigned long long)p->offset);
    snprintf(line, sizeof line, "%s%s%s%s", p->file ? fa_sanitize(slash && slash[1] ? slash + 1 : p->file, f, sizeof f) : "",
             p->file ? ": " : "", off, fa_sanitize(p->message, m, sizeof m));
    fa_wrap_text(o, line, 4, 6);
  }
  if (a->nproblems > MAX_PROBLEMS) fprintf(o, "    and %u more\n", a->nproblems - MAX_PROBLEMS);
}

int fa_brief_text(FILE *o, const fa_analysis *a)
{
  if (a->ncomms && comms_brief(o, a)) return -1;
  if (fa_stacks_classes_text(o, a)) return -1;
  input_brief(o, a);
  fputs("\n(--full: every communicator and input problem; --why: the rules and records)\n", o);
  return 0;
}
