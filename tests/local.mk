# tests/: the NCCL/CUDA simulator, the scenario job and launcher, unit and
# end-to-end tests.

## The simulator: libcuda.so.1 and libnccl.so.2 test doubles (shared libs
## with those sonames, never installed).
noinst_LTLIBRARIES += tests/sim/libcuda.la tests/sim/libnccl.la
tests_sim_libcuda_la_SOURCES = tests/sim/cuda_sim.c tests/sim/graph_sim.c tests/sim/sim.h
tests_sim_libcuda_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_sim_libcuda_la_LIBADD = $(PTHREAD_LIBS)
tests_sim_libcuda_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/sim -version-info 1:0:0 -no-undefined
tests_sim_libnccl_la_SOURCES = tests/sim/nccl_sim.c tests/sim/sim_comm.c tests/sim/sim_shm.c \
	tests/sim/sim_coll.c tests/sim/sim_reduce.c tests/sim/sim_prof.c tests/sim/sim_nccl.h tests/sim/sim.h
tests_sim_libnccl_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_sim_libnccl_la_LIBADD = tests/sim/libcuda.la $(PTHREAD_LIBS) $(RT_LIBS) -lm
tests_sim_libnccl_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/sim -version-info 2:0:0 -no-undefined

## The RCCL/HIP flavour of the simulator: the HIP runtime stand-in
## (libamdhip64.so.6: hip_sim.c on cuda_sim.c's engine, only hip* and sim_*
## exported) and the simulated NCCL built again on it as librccl.so.1, with
## RCCL's own entry points (rccl_sim.c).
noinst_LTLIBRARIES += tests/sim/libamdhip64.la tests/sim/librccl.la
tests_sim_libamdhip64_la_SOURCES = tests/sim/hip_sim.c tests/sim/cuda_sim.c tests/sim/graph_sim.c tests/sim/sim.h
tests_sim_libamdhip64_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_sim_libamdhip64_la_LIBADD = $(PTHREAD_LIBS)
tests_sim_libamdhip64_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/sim -version-info 6:0:0 -no-undefined \
	-export-symbols-regex '^(hip|sim_)'
tests_sim_librccl_la_SOURCES = $(tests_sim_libnccl_la_SOURCES) tests/sim/rccl_sim.c
tests_sim_librccl_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_sim_librccl_la_LIBADD = tests/sim/libamdhip64.la $(PTHREAD_LIBS) $(RT_LIBS) -lm
tests_sim_librccl_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/sim -version-info 1:0:0 -no-undefined

## NCCL errors on demand (FR_SIM_FAIL): preloaded after the recorder by
## tests/e2e/recorder-faults.sh.
noinst_LTLIBRARIES += tests/sim/libsimfault.la
tests_sim_libsimfault_la_SOURCES = tests/sim/fault_sim.c
tests_sim_libsimfault_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir)/tests/sim -module -avoid-version -no-undefined

## The scenario job: a small training loop driven by a scenario file.
noinst_PROGRAMS += tests/scenario/fr-scenario-job
fr_scenario_job_common = tests/scenario/job.c tests/scenario/scenario.c \
	tests/scenario/comms.c tests/scenario/names.c tests/scenario/plan.c tests/scenario/expr.c \
	tests/scenario/boot.c tests/scenario/lifecycle.c tests/scenario/sites.c tests/scenario/model.c \
	tests/scenario/host.c \
	tests/scenario/scenario.h tests/scenario/parse.h tests/scenario/job.h
tests_scenario_fr_scenario_job_SOURCES = $(fr_scenario_job_common) tests/scenario/graph.c
tests_scenario_fr_scenario_job_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_scenario_fr_scenario_job_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/sim
tests_scenario_fr_scenario_job_LDADD = tests/sim/libnccl.la tests/sim/libcuda.la $(PTHREAD_LIBS)
tests_scenario_fr_scenario_job_LDFLAGS = $(AM_LDFLAGS) -no-install -export-dynamic

## The same job on the RCCL/HIP flavour (job_hip.h maps its CUDA calls).
noinst_PROGRAMS += tests/scenario/fr-scenario-job-hip
tests_scenario_fr_scenario_job_hip_SOURCES = $(fr_scenario_job_common) tests/scenario/graph_none.c \
	tests/scenario/job_hip.h
tests_scenario_fr_scenario_job_hip_CFLAGS = $(tests_scenario_fr_scenario_job_CFLAGS)
tests_scenario_fr_scenario_job_hip_CPPFLAGS = $(tests_scenario_fr_scenario_job_CPPFLAGS) \
	-include $(top_srcdir)/tests/scenario/job_hip.h
tests_scenario_fr_scenario_job_hip_LDADD = tests/sim/librccl.la tests/sim/libamdhip64.la $(PTHREAD_LIBS)
tests_scenario_fr_scenario_job_hip_LDFLAGS = $(tests_scenario_fr_scenario_job_LDFLAGS)

## The same job with the simulated NCCL linked in statically: the recorder's
## interposer sees no call, only its profiler plugin does (static-NCCL mode).
noinst_LTLIBRARIES += tests/sim/libnccl-static.la
tests_sim_libnccl_static_la_SOURCES = $(tests_sim_libnccl_la_SOURCES)
tests_sim_libnccl_static_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
noinst_PROGRAMS += tests/scenario/fr-scenario-job-static
tests_scenario_fr_scenario_job_static_SOURCES = $(tests_scenario_fr_scenario_job_SOURCES)
tests_scenario_fr_scenario_job_static_CFLAGS = $(tests_scenario_fr_scenario_job_CFLAGS)
tests_scenario_fr_scenario_job_static_CPPFLAGS = $(tests_scenario_fr_scenario_job_CPPFLAGS)
tests_scenario_fr_scenario_job_static_LDADD = tests/sim/libnccl-static.la tests/sim/libcuda.la \
	$(PTHREAD_LIBS) $(RT_LIBS) -lm
tests_scenario_fr_scenario_job_static_LDFLAGS = $(AM_LDFLAGS) -no-install

## Compare an analysis JSON with an expected subset.
noinst_PROGRAMS += tests/json-expect
tests_json_expect_SOURCES = tests/json-expect.c
tests_json_expect_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_json_expect_LDADD = $(CJSON_LIBS)

## Unit tests (Check)
UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(PTHREAD_CFLAGS)
UNIT_LIBS = $(CHECK_LIBS) $(PTHREAD_LIBS)
check_PROGRAMS += tests/unit/check_frz tests/unit/check_ring tests/unit/check_identity tests/unit/check_analyze \
	tests/unit/check_waits tests/unit/check_explain tests/unit/check_salvaged
TESTS += tests/unit/check_frz tests/unit/check_ring tests/unit/check_identity tests/unit/check_analyze \
	tests/unit/check_waits tests/unit/check_explain tests/unit/check_salvaged
tests_unit_check_frz_SOURCES = tests/unit/check_frz.c
tests_unit_check_frz_CFLAGS = $(UNIT_CFLAGS) $(ZSTD_CFLAGS)
tests_unit_check_frz_LDADD = formats/libfrz.la $(UNIT_LIBS) $(ZSTD_LIBS)
tests_unit_check_ring_SOURCES = tests/unit/check_ring.c librecorder/ring.c librecorder/ring.h
tests_unit_check_ring_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_ring_LDADD = formats/libfrz.la $(UNIT_LIBS)
tests_unit_check_identity_SOURCES = tests/unit/check_identity.c librecorder/identity.c librecorder/identity.h
tests_unit_check_identity_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_identity_LDADD = $(UNIT_LIBS)
tests_unit_check_analyze_SOURCES = tests/unit/check_analyze.c tests/unit/synth_job.c tests/unit/synth_job.h
tests_unit_check_analyze_CFLAGS = $(UNIT_CFLAGS) $(CJSON_CFLAGS) -I$(top_srcdir)/fr-analyze/libanalyze
tests_unit_check_analyze_LDADD = fr-analyze/libanalyze.la formats/libfrz.la $(UNIT_LIBS) $(CJSON_LIBS)
tests_unit_check_waits_SOURCES = tests/unit/check_waits.c tests/unit/synth_job.c tests/unit/synth_job.h
tests_unit_check_waits_CFLAGS = $(tests_unit_check_analyze_CFLAGS)
tests_unit_check_waits_LDADD = $(tests_unit_check_analyze_LDADD)
tests_unit_check_explain_SOURCES = tests/unit/check_explain.c tests/unit/synth_job.c tests/unit/synth_job.h
tests_unit_check_explain_CFLAGS = $(tests_unit_check_analyze_CFLAGS)
tests_unit_check_explain_LDADD = $(tests_unit_check_analyze_LDADD)
tests_unit_check_salvaged_SOURCES = tests/unit/check_salvaged.c tests/unit/synth_job.c tests/unit/synth_job.h
tests_unit_check_salvaged_CFLAGS = $(tests_unit_check_analyze_CFLAGS)
tests_unit_check_salvaged_LDADD = $(tests_unit_check_analyze_LDADD)

## The simulator's data path: 4 forked ranks check every collective's result.
check_PROGRAMS += tests/sim/check_sim
TESTS += tests/sim/check_sim
tests_sim_check_sim_SOURCES = tests/sim/check_sim.c
tests_sim_check_sim_CFLAGS = $(UNIT_CFLAGS)
tests_sim_check_sim_LDADD = tests/sim/libnccl.la tests/sim/libcuda.la $(UNIT_LIBS)
tests_sim_check_sim_LDFLAGS = $(AM_LDFLAGS) -no-install

## The thread-stack collection under stress (run by tests/e2e/stacks-stress.sh).
check_PROGRAMS += tests/unit/stacks-stress
tests_unit_stacks_stress_SOURCES = tests/unit/stacks_stress.c
tests_unit_stacks_stress_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_unit_stacks_stress_LDADD = formats/libfrz.la tests/sim/libnccl.la tests/sim/libcuda.la $(PTHREAD_LIBS)
tests_unit_stacks_stress_LDFLAGS = $(AM_LDFLAGS) -no-install -export-dynamic

## The recorder in one process on the simulator (run by tests/e2e/recorder-api.sh).
check_PROGRAMS += tests/unit/check_recorder
tests_unit_check_recorder_SOURCES = tests/unit/check_recorder.c tests/unit/recorder_probe.c tests/unit/recorder_probe.h
tests_unit_check_recorder_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_recorder_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/sim
tests_unit_check_recorder_LDADD = formats/libfrz.la tests/sim/libnccl.la tests/sim/libcuda.la $(UNIT_LIBS)
tests_unit_check_recorder_LDFLAGS = $(AM_LDFLAGS) -no-install -export-dynamic

## Our declaration of NCCL's profiler plugin ABI against its documented
## layout (compile time), and the recorder loaded as NCCL loads a plugin.
check_PROGRAMS += tests/unit/check_profiler_abi tests/e2e/profiler-load
TESTS += tests/unit/check_profiler_abi tests/e2e/profiler-plugin.sh
tests_unit_check_profiler_abi_SOURCES = tests/unit/check_profiler_abi.c
tests_e2e_profiler_load_SOURCES = tests/e2e/profiler-load.c
EXTRA_DIST += tests/e2e/profiler-plugin.sh
## The recorder under hostile use: destroyed comms, odd counts, NCCL errors
## from every wrapped call, fork/exec storms (run by tests/e2e/recorder-faults.sh).
check_PROGRAMS += tests/unit/check_recorder_faults
tests_unit_check_recorder_faults_SOURCES = tests/unit/check_recorder_faults.c tests/unit/recorder_probe.c \
	tests/unit/recorder_probe.h
tests_unit_check_recorder_faults_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_recorder_faults_LDADD = formats/libfrz.la tests/sim/libnccl.la tests/sim/libcuda.la $(UNIT_LIBS)
tests_unit_check_recorder_faults_LDFLAGS = $(AM_LDFLAGS) -no-install

## Our NCCL/CUDA declarations against the real headers, at compile time.
if HAVE_REAL_NCCL_H
check_PROGRAMS += tests/unit/check_nccl_decls
TESTS += tests/unit/check_nccl_decls
tests_unit_check_nccl_decls_SOURCES = tests/unit/check_nccl_decls.c
tests_unit_check_nccl_decls_CPPFLAGS = $(AM_CPPFLAGS) -isystem $(CUDA_DIR)/include
endif
if HAVE_REAL_CUDA_H
check_PROGRAMS += tests/unit/check_cuda_decls
TESTS += tests/unit/check_cuda_decls
tests_unit_check_cuda_decls_SOURCES = tests/unit/check_cuda_decls.c
tests_unit_check_cuda_decls_CPPFLAGS = $(AM_CPPFLAGS) -isystem $(CUDA_DIR)/include
endif
if HAVE_REAL_PMIX_H
check_PROGRAMS += tests/unit/check_pmix_decls
TESTS += tests/unit/check_pmix_decls
tests_unit_check_pmix_decls_SOURCES = tests/unit/check_pmix_decls.c
tests_unit_check_pmix_decls_CPPFLAGS = $(AM_CPPFLAGS) $(PMIX_CFLAGS)
endif
EXTRA_DIST += tests/unit/check_nccl_decls.c tests/unit/check_cuda_decls.c tests/unit/check_pmix_decls.c
## Our HIP declarations against Debian's libamdhip64-dev headers; without
## them the test says SKIP.
check_PROGRAMS += tests/unit/check_hip_decls
TESTS += tests/unit/check_hip_decls
tests_unit_check_hip_decls_SOURCES = tests/unit/check_hip_decls.c
if HAVE_REAL_HIP_H
tests_unit_check_hip_decls_CPPFLAGS = $(AM_CPPFLAGS) $(HIP_CPPFLAGS) -DFR_REAL_HIP_H=1
endif

## Pass-through against the real libnccl.so.2 (works without a GPU).
if HAVE_REAL_LIBNCCL
check_PROGRAMS += tests/e2e/real-nccl-prog
tests_e2e_real_nccl_prog_SOURCES = tests/e2e/real-nccl-prog.c
tests_e2e_real_nccl_prog_CPPFLAGS = $(AM_CPPFLAGS) -isystem $(CUDA_DIR)/include
tests_e2e_real_nccl_prog_LDADD = -L$(REAL_NCCL_LIBDIR) -lnccl
tests_e2e_real_nccl_prog_LDFLAGS = $(AM_LDFLAGS) -Wl,-rpath,$(REAL_NCCL_LIBDIR)
TESTS += tests/e2e/passthrough-real-nccl.sh
endif
EXTRA_DIST += tests/e2e/real-nccl-prog.c tests/e2e/passthrough-real-nccl.sh
## Pass-through with Debian's real HIP runtime (libamdhip64) and no GPU; the
## real libnccl.so.2 stands in for RCCL, which Debian does not ship.  SKIP
## where either is missing.
if HAVE_REAL_LIBHIP
check_PROGRAMS += tests/e2e/real-hip-prog
tests_e2e_real_hip_prog_SOURCES = tests/e2e/real-hip-prog.c
tests_e2e_real_hip_prog_CPPFLAGS = $(AM_CPPFLAGS) -isystem $(CUDA_DIR)/include -I$(top_srcdir)/tests/e2e
tests_e2e_real_hip_prog_LDADD = $(REAL_HIP_LIB) -L$(REAL_NCCL_LIBDIR) -lnccl
tests_e2e_real_hip_prog_LDFLAGS = $(AM_LDFLAGS) -Wl,-rpath,$(REAL_NCCL_LIBDIR)
endif
TESTS += tests/e2e/passthrough-real-hip.sh
EXTRA_DIST += tests/e2e/real-hip-prog.c tests/e2e/passthrough-real-hip.sh

## End-to-end: scenarios run live on the simulator, compared with their
## expected verdicts; the committed samples analysed again.
E2E_TESTS = tests/e2e/scenario-c1.sh tests/e2e/scenario-c2.sh tests/e2e/scenario-c3.sh \
	tests/e2e/scenario-c4.sh tests/e2e/scenario-c5.sh tests/e2e/scenario-c6.sh tests/e2e/scenario-c7.sh \
	tests/e2e/scenario-c8.sh tests/e2e/scenario-c9.sh tests/e2e/scenario-c10.sh tests/e2e/scenario-c11.sh \
	tests/e2e/scenario-c12.sh tests/e2e/scenario-c13.sh tests/e2e/scenario-variants.sh \
	tests/e2e/corrupt-input.sh tests/e2e/analyze-options.sh tests/e2e/scenario-splits.sh tests/e2e/samples.sh \
	tests/e2e/recorder-inert.sh tests/e2e/stale-trigger.sh tests/e2e/recorder-api.sh tests/e2e/recorder-frames.sh \
	tests/e2e/recorder-dump-failures.sh tests/e2e/hostile-trigger.sh tests/e2e/recorder-faults.sh \
	tests/e2e/recorder-sigstop.sh tests/e2e/ring-salvage.sh tests/e2e/record-salvage.sh tests/e2e/recorder-dump-dir.sh tests/e2e/valgrind-tools.sh \
	tests/e2e/cli.sh tests/e2e/tui.sh tests/e2e/tui-tmux.sh tests/e2e/static-nccl.sh \
	tests/e2e/scenario-lifecycle.sh tests/e2e/scenario-init-waits.sh tests/e2e/scenario-breakit.sh \
	tests/e2e/random-hangs.sh tests/e2e/scenario-reactions.sh tests/e2e/trigger-relay.sh \
	tests/e2e/scenario-breakit2.sh tests/e2e/scenario-breakit3.sh tests/e2e/scenario-breakit4.sh \
	tests/e2e/scenario-breakit5.sh tests/e2e/scenario-breakit6.sh tests/e2e/scenario-breakit7.sh \
	tests/e2e/scenario-breakit8.sh tests/e2e/scenario-breakit9.sh tests/e2e/scenario-model.sh tests/e2e/report-scale.sh \
	tests/e2e/torchrun.sh tests/e2e/scenario-rocm.sh tests/e2e/scenario-graphs.sh
TESTS += $(E2E_TESTS)
EXTRA_DIST += tests/store-server.py tests/torch-store.py tests/relay-rank.sh tests/torchrun-rank.sh
# Thread stacks in the dumps: a rank blocked in read(2); the collection under
# stress (blocked, masked and many threads, hundreds of dumps); Python stacks
# of a ctypes job on the simulator.
E2E_STACK_TESTS = tests/e2e/scenario-blocked-read.sh tests/e2e/stacks-stress.sh tests/e2e/py-stacks.sh
TESTS += $(E2E_STACK_TESTS)
EXTRA_DIST += $(E2E_STACK_TESTS) tests/scenario/py_job.py
EXTRA_DIST += $(E2E_TESTS) tests/e2e/lib.sh tests/e2e/golden-lib.sh
EXTRA_DIST += tests/run-scenario.in tests/fr-launch.in tests/testenv.sh.in \
	tests/scenarios/README.md $(wildcard $(srcdir)/tests/scenarios/*.scn) \
	$(wildcard $(srcdir)/tests/scenarios/*.expected.json)
AM_TESTS_ENVIRONMENT = . $(abs_top_builddir)/tests/testenv.sh;
# `make check-random`: more random hung jobs than make check runs
# (FR_RANDOM_HANGS_N cases, default 200, from seed FR_RANDOM_HANGS_SEED;
# FR_RANDOM_HANGS_KINDS=model|classic to draw only some kinds;
# FR_RANDOM_HANGS_FLAVOUR=hip: on the RCCL/HIP flavour of the simulator).
EXTRA_DIST += tests/random-hangs tests/random-hangs.md
EXTRA_DIST += tests/device/run-gpu-check.sh tests/device/torch_job.py
check-random: all tests/run-scenario tests/json-expect
	FR_RUN_SCENARIO=$(abs_top_builddir)/tests/run-scenario python3 $(top_srcdir)/tests/random-hangs \
	  -n $${FR_RANDOM_HANGS_N:-200} -s $${FR_RANDOM_HANGS_SEED:-1} --kinds $${FR_RANDOM_HANGS_KINDS:-all} \
	  --flavour $${FR_RANDOM_HANGS_FLAVOUR:-cuda} \
	  $${FR_RANDOM_HANGS_KEEP:+--keep $$FR_RANDOM_HANGS_KEEP}
.PHONY: check-random
DISTCLEANFILES += tests/run-scenario tests/fr-launch tests/testenv.sh
CLEANFILES += tests/.e2e.lock

## Sanitizer builds (--enable-sanitizers[=thread]): each test runs under
## tests/sanitizer-run.sh, which collects the sanitizer reports of every
## process the test starts and fails the test when there are any.
if SANITIZERS
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/sanitizer-run.sh
endif
EXTRA_DIST += tests/sanitizer-run.sh tests/tsan.supp
