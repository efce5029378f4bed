# tests/bench/: `make bench` — what the recorder costs: added time per
# intercepted call, dump time and size of a full ring, peak memory; and how fast fr-analyze and fr-tui read a big hang
# (BENCHMARKS.md).  Built on demand: neither `make all` nor `make check`
# builds or runs any of it.

## A libnccl.so.2 whose calls return at once (the simulator's do real work).
EXTRA_LTLIBRARIES = tests/bench/libnccl.la
tests_bench_libnccl_la_SOURCES = tests/bench/fake_nccl.c
tests_bench_libnccl_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/bench -version-info 2:0:0 -no-undefined

BENCH_PROGS = tests/bench/fr-bench tests/bench/fr-bench-hip tests/bench/fr-bench-dump tests/bench/fr-synth tests/bench/fr-measure \
	tests/bench/fr-bench-load tests/bench/fr-bench-stacks
# (fr-synth is built by `make check` too: tests/e2e/report-scale.sh reads its dumps)
EXTRA_PROGRAMS = tests/bench/fr-bench tests/bench/fr-bench-hip tests/bench/fr-bench-dump tests/bench/fr-measure \
	tests/bench/fr-bench-load tests/bench/fr-bench-stacks
check_PROGRAMS += tests/bench/fr-synth
tests_bench_fr_bench_SOURCES = tests/bench/fr-bench.c tests/bench/bench.c tests/bench/bench.h tests/bench/bench_graph.c
tests_bench_fr_bench_LDADD = tests/bench/libnccl.la tests/sim/libcuda.la $(PTHREAD_LIBS)
tests_bench_fr_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/sim
tests_bench_fr_bench_LDFLAGS = $(AM_LDFLAGS) -no-install
# the same calls on the HIP path: streams of the simulator's HIP stand-in
# (tests/scenario/job_hip.h maps the CUDA calls), so the recorder tracks
# with HIP events
tests_bench_fr_bench_hip_SOURCES = tests/bench/fr-bench.c tests/bench/bench.c tests/bench/bench.h \
	tests/bench/bench_graph_none.c
tests_bench_fr_bench_hip_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/sim -include $(top_srcdir)/tests/scenario/job_hip.h
tests_bench_fr_bench_hip_LDADD = tests/bench/libnccl.la tests/sim/libamdhip64.la $(PTHREAD_LIBS)
tests_bench_fr_bench_hip_LDFLAGS = $(AM_LDFLAGS) -no-install
tests_bench_fr_bench_dump_SOURCES = tests/bench/fr-bench-dump.c tests/bench/bench.c tests/bench/bench.h
tests_bench_fr_bench_dump_LDADD = tests/bench/libnccl.la tests/sim/libcuda.la formats/libfrz.la \
	$(ZSTD_LIBS) $(PTHREAD_LIBS)
tests_bench_fr_bench_dump_LDFLAGS = $(AM_LDFLAGS) -no-install
## The synthetic hung job whose dumps the analyzer benchmarks read.
tests_bench_fr_synth_SOURCES = tests/bench/fr-synth.c tests/bench/synth.c tests/bench/synth.h \
	tests/bench/synth_pickle.c tests/bench/synth_ring.c
tests_bench_fr_synth_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_bench_fr_synth_LDADD = formats/libfrz.la $(ZSTD_LIBS) $(PTHREAD_LIBS)
tests_bench_fr_measure_SOURCES = tests/bench/fr-measure.c
tests_bench_fr_bench_load_SOURCES = tests/bench/fr-bench-load.c
tests_bench_fr_bench_load_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) -I$(top_srcdir)/fr-analyze/libanalyze
tests_bench_fr_bench_load_LDADD = fr-analyze/libanalyze.la $(ZSTD_LIBS)
# one collection of every thread's stack (librecorder/stacks.c linked in)
tests_bench_fr_bench_stacks_SOURCES = tests/bench/fr-bench-stacks.c librecorder/stacks.c
tests_bench_fr_bench_stacks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/librecorder
tests_bench_fr_bench_stacks_LDADD = $(PTHREAD_LIBS)
CLEANFILES += $(BENCH_PROGS) tests/bench/libnccl.la

EXTRA_DIST += tests/bench/run-bench.sh tests/bench/run-bench-stacks.sh tests/bench/run-bench-analyze.sh \
	tests/bench/run-bench-trigger.sh tests/bench/run-bench-salvage.sh
# `make bench`: the recorder's tables (overhead, one stack collection, how
# long a hang takes to reach every rank), then the analyzer's
# (BENCHMARKS.md), then the salvage of ring files against it; `make
# bench-recorder`, `make bench-trigger`, `make bench-analyze` and `make
# bench-salvage` run one part.
bench: all $(BENCH_PROGS)
	@. $(abs_top_builddir)/tests/testenv.sh; $(SHELL) $(srcdir)/tests/bench/run-bench.sh && \
	  $(SHELL) $(srcdir)/tests/bench/run-bench-stacks.sh && \
	  bash $(srcdir)/tests/bench/run-bench-trigger.sh
	@. $(abs_top_builddir)/tests/testenv.sh; $(SHELL) $(srcdir)/tests/bench/run-bench-analyze.sh
	@. $(abs_top_builddir)/tests/testenv.sh; bash $(srcdir)/tests/bench/run-bench-salvage.sh
bench-recorder: all $(BENCH_PROGS)
	@. $(abs_top_builddir)/tests/testenv.sh; $(SHELL) $(srcdir)/tests/bench/run-bench.sh && \
	  $(SHELL) $(srcdir)/tests/bench/run-bench-stacks.sh
bench-trigger: all tests/scenario/fr-scenario-job
	@. $(abs_top_builddir)/tests/testenv.sh; bash $(srcdir)/tests/bench/run-bench-trigger.sh
bench-analyze: all $(BENCH_PROGS)
	@. $(abs_top_builddir)/tests/testenv.sh; $(SHELL) $(srcdir)/tests/bench/run-bench-analyze.sh
bench-salvage: all $(BENCH_PROGS)
	@. $(abs_top_builddir)/tests/testenv.sh; bash $(srcdir)/tests/bench/run-bench-salvage.sh
.PHONY: bench bench-recorder bench-trigger bench-analyze bench-salvage
clean-local: clean-local-bench
clean-local-bench:
	-rm -rf $(top_builddir)/bench-out $(top_builddir)/tests/bench/.libs
