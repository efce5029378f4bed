# tests/bench/: `make bench` — what the recorder costs: added time per
# intercepted call, dump time and size of a full ring, peak memory (README,
# "Recorder overhead").  Built on demand: neither `make all` nor `make check`
# builds or runs any of it.

## A libnccl.so.2 whose calls return at once (the simulator's do real work).
EXTRA_LTLIBRARIES = tests/bench/libnccl.la
tests_bench_libnccl_la_SOURCES = tests/bench/fake_nccl.c
tests_bench_libnccl_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/bench -version-info 2:0:0 -no-undefined

BENCH_PROGS = tests/bench/fr-bench tests/bench/fr-bench-dump tests/bench/fr-bench-stacks
EXTRA_PROGRAMS = $(BENCH_PROGS)
tests_bench_fr_bench_SOURCES = tests/bench/fr-bench.c tests/bench/bench.c tests/bench/bench.h
tests_bench_fr_bench_LDADD = tests/bench/libnccl.la tests/sim/libcuda.la $(PTHREAD_LIBS)
tests_bench_fr_bench_LDFLAGS = $(AM_LDFLAGS) -no-install
tests_bench_fr_bench_dump_SOURCES = tests/bench/fr-bench-dump.c tests/bench/bench.c tests/bench/bench.h
tests_bench_fr_bench_dump_LDADD = tests/bench/libnccl.la tests/sim/libcuda.la formats/libfrz.la \
	$(ZSTD_LIBS) $(PTHREAD_LIBS)
tests_bench_fr_bench_dump_LDFLAGS = $(AM_LDFLAGS) -no-install
# one collection of every thread's stack (librecorder/stacks.c linked in)
tests_bench_fr_bench_stacks_SOURCES = tests/bench/fr-bench-stacks.c librecorder/stacks.c
tests_bench_fr_bench_stacks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/librecorder
tests_bench_fr_bench_stacks_LDADD = $(PTHREAD_LIBS)
CLEANFILES += $(BENCH_PROGS) tests/bench/libnccl.la

EXTRA_DIST += tests/bench/run-bench.sh tests/bench/run-bench-stacks.sh
bench: all $(BENCH_PROGS)
	@. $(abs_top_builddir)/tests/testenv.sh; $(SHELL) $(srcdir)/tests/bench/run-bench.sh && \
	  $(SHELL) $(srcdir)/tests/bench/run-bench-stacks.sh
.PHONY: bench
clean-local: clean-local-bench
clean-local-bench:
	-rm -rf $(top_builddir)/bench-out $(top_builddir)/tests/bench/.libs
