# fr-analyze/: the analyzer library (shared with fr-tui) and its thin CLI.
noinst_LTLIBRARIES += fr-analyze/libanalyze.la
fr_analyze_libanalyze_la_SOURCES = \
	fr-analyze/libanalyze/analyze.h fr-analyze/libanalyze/internal.h \
	fr-analyze/libanalyze/load.c fr-analyze/libanalyze/model.c \
	fr-analyze/libanalyze/analyze.c fr-analyze/libanalyze/mismatch.c fr-analyze/libanalyze/links.c \
	fr-analyze/libanalyze/p2p.c fr-analyze/libanalyze/verdict.c fr-analyze/libanalyze/consequences.c fr-analyze/libanalyze/proofs.c \
	fr-analyze/libanalyze/summary.c \
	fr-analyze/libanalyze/summary.h fr-analyze/libanalyze/summary_phrase.c fr-analyze/libanalyze/summary_member.c \
	fr-analyze/libanalyze/waitgraph.c fr-analyze/libanalyze/ends.c \
	fr-analyze/libanalyze/absent.c fr-analyze/libanalyze/alive.c fr-analyze/libanalyze/astray.c fr-analyze/libanalyze/rounds.c fr-analyze/libanalyze/outside.c fr-analyze/libanalyze/late.c fr-analyze/libanalyze/instances.c fr-analyze/libanalyze/react.c \
	fr-analyze/libanalyze/straggler.c fr-analyze/libanalyze/splits.c fr-analyze/libanalyze/explain.c fr-analyze/libanalyze/observe.c fr-analyze/libanalyze/faults.c fr-analyze/libanalyze/own.c fr-analyze/libanalyze/counters.c \
	fr-analyze/libanalyze/util.c fr-analyze/libanalyze/report_text.c \
	fr-analyze/libanalyze/report_json.c fr-analyze/libanalyze/salvaged.c \
	fr-analyze/libanalyze/stacks.c fr-analyze/libanalyze/stacks_text.c \
	fr-analyze/libanalyze/stacks_json.c \
	fr-analyze/libanalyze/input.h fr-analyze/libanalyze/input.c \
	fr-analyze/libanalyze/parallel.c \
	fr-analyze/libanalyze/explain.h fr-analyze/libanalyze/next_steps.c \
	fr-analyze/libanalyze/evidence.c fr-analyze/libanalyze/explain_report.c \
	fr-analyze/libanalyze/given.c fr-analyze/libanalyze/report_brief.c
fr_analyze_libanalyze_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(PTHREAD_CFLAGS)
fr_analyze_libanalyze_la_LIBADD = formats/libfrz.la $(CJSON_LIBS) $(PTHREAD_LIBS)

bin_PROGRAMS += fr-analyze/fr-analyze
fr_analyze_fr_analyze_SOURCES = fr-analyze/main.c
fr_analyze_fr_analyze_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
fr_analyze_fr_analyze_LDADD = fr-analyze/libanalyze.la

# Golden outputs of fr-analyze and fr-dump, compared by tests/e2e/cli.sh.
EXTRA_DIST += $(wildcard $(srcdir)/tests/golden/*.txt) $(wildcard $(srcdir)/tests/golden/*.json) \
	$(wildcard $(srcdir)/tests/golden/*.help)
