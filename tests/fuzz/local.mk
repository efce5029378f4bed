# tests/fuzz/: one fuzz target per reader.  Each is built twice: here, with
# the configured compiler and tests/fuzz/driver.c, as a reproducer program
# that `make check` runs over the seed corpora and tests/fuzz/regressions/
# (tests/fuzz/corpus.sh); and by `make fuzz`, with clang's libFuzzer
# (tests/fuzz/run-fuzz.sh), for FUZZ_SECONDS seconds per target.
FUZZ_TARGETS = frz pytorch scenario analyze ring
FUZZ_FRZ_SRCS = $(filter %.c,$(formats_libfrz_la_SOURCES))
FUZZ_SC_SRCS = tests/scenario/scenario.c tests/scenario/comms.c tests/scenario/names.c \
	tests/scenario/plan.c tests/scenario/expr.c
FUZZ_AN_SRCS = $(filter %.c,$(fr_analyze_libanalyze_la_SOURCES))

check_PROGRAMS += tests/fuzz/fuzz_frz tests/fuzz/fuzz_pytorch tests/fuzz/fuzz_scenario \
	tests/fuzz/fuzz_analyze tests/fuzz/fuzz_ring
tests_fuzz_fuzz_ring_SOURCES = tests/fuzz/fuzz_ring.c tests/fuzz/driver.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_ring_LDADD = formats/libfrz.la
tests_fuzz_fuzz_frz_SOURCES = tests/fuzz/fuzz_frz.c tests/fuzz/driver.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_frz_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_fuzz_fuzz_frz_LDADD = formats/libfrz.la $(ZSTD_LIBS)
tests_fuzz_fuzz_pytorch_SOURCES = tests/fuzz/fuzz_pytorch.c tests/fuzz/driver.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_pytorch_LDADD = formats/libfrz.la
tests_fuzz_fuzz_scenario_SOURCES = tests/fuzz/fuzz_scenario.c tests/fuzz/driver.c tests/fuzz/fuzz.h \
	$(FUZZ_SC_SRCS)
tests_fuzz_fuzz_scenario_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/scenario
tests_fuzz_fuzz_analyze_SOURCES = tests/fuzz/fuzz_analyze.c tests/fuzz/driver.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_analyze_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fr-analyze/libanalyze
tests_fuzz_fuzz_analyze_LDADD = fr-analyze/libanalyze.la formats/libfrz.la $(CJSON_LIBS)

TESTS += tests/fuzz/corpus.sh
EXTRA_DIST += tests/fuzz/corpus.sh tests/fuzz/run-fuzz.sh tests/fuzz/seeds.sh \
	tests/fuzz/regressions/README.md $(wildcard $(srcdir)/tests/fuzz/regressions/*/*)

# `make fuzz`: the libFuzzer builds (clang -fsanitize=fuzzer,address,undefined),
# each run for FUZZ_SECONDS seconds; new corpus entries go to
# tests/fuzz/corpus-TARGET/ and any crash to tests/fuzz/crash-TARGET-*.
FUZZ_SECONDS = 60
FUZZ_CLANG = clang
FUZZ_CFLAGS = -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CPP = -include $(top_builddir)/config.h -I$(top_srcdir)/formats -I$(top_srcdir)/librecorder/nccl \
	-I$(top_builddir) -I$(top_srcdir)/tests/fuzz -I$(top_srcdir)/tests/scenario \
	-I$(top_srcdir)/fr-analyze/libanalyze $(ZSTD_CFLAGS) $(CJSON_CFLAGS)
FUZZ_BINS = $(FUZZ_TARGETS:%=tests/fuzz/lf-%)

fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash $(top_srcdir)/tests/fuzz/run-fuzz.sh \
	  $(top_srcdir) $(top_builddir)/tests/fuzz $(FUZZ_TARGETS)
.PHONY: fuzz fuzz-build

tests/fuzz/lf-frz: tests/fuzz/fuzz_frz.c $(FUZZ_FRZ_SRCS:%=$(top_srcdir)/%)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) $(FUZZ_CPP) -o $@ $(filter %.c,$^) $(ZSTD_LIBS)
tests/fuzz/lf-pytorch: tests/fuzz/fuzz_pytorch.c $(FUZZ_FRZ_SRCS:%=$(top_srcdir)/%)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) $(FUZZ_CPP) -o $@ $(filter %.c,$^) $(ZSTD_LIBS)
tests/fuzz/lf-ring: tests/fuzz/fuzz_ring.c $(FUZZ_FRZ_SRCS:%=$(top_srcdir)/%)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) $(FUZZ_CPP) -o $@ $(filter %.c,$^) $(ZSTD_LIBS)
tests/fuzz/lf-scenario: tests/fuzz/fuzz_scenario.c $(FUZZ_SC_SRCS:%=$(top_srcdir)/%)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) $(FUZZ_CPP) -o $@ $(filter %.c,$^)
tests/fuzz/lf-analyze: tests/fuzz/fuzz_analyze.c $(FUZZ_AN_SRCS:%=$(top_srcdir)/%) \
		$(FUZZ_FRZ_SRCS:%=$(top_srcdir)/%)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) $(FUZZ_CPP) -o $@ $(filter %.c,$^) $(CJSON_LIBS) $(ZSTD_LIBS)
CLEANFILES += $(FUZZ_BINS)
clean-local: clean-local-fuzz
clean-local-fuzz:
	-rm -rf $(top_builddir)/tests/fuzz/corpus-* $(top_builddir)/tests/fuzz/crash-* \
	  $(top_builddir)/tests/fuzz/seeds-analyze
