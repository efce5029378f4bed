# librecorder/: the in-process recorder, preloaded into every rank.
pkglib_LTLIBRARIES += librecorder/librecorder.la
librecorder_librecorder_la_SOURCES = \
	librecorder/nccl/fr_nccl.h librecorder/nccl/fr_cuda.h librecorder/nccl/fr_hip.h \
	librecorder/recorder.h librecorder/log.c librecorder/config.c \
	librecorder/identity.h librecorder/identity.c \
	librecorder/ring.h librecorder/ring.c \
	librecorder/comms.c librecorder/device.h librecorder/device.c librecorder/cuda_events.c \
	librecorder/hip_events.c librecorder/graphs.c librecorder/wrappers.c \
	librecorder/lifecycle.c librecorder/derive.c librecorder/teardown.c librecorder/groups.c \
	librecorder/watchdog.c librecorder/crash.c librecorder/dump.c librecorder/announce.c \
	librecorder/relay.h librecorder/relay.c librecorder/relay_pmix.c librecorder/relay_store.c librecorder/nccl/fr_pmix.h \
	librecorder/nccl/fr_profiler.h librecorder/profiler.h librecorder/plugin.c librecorder/plugin_ops.c \
	librecorder/progress.c \
	librecorder/stacks.h librecorder/stacks.c librecorder/pystacks.c \
	librecorder/ringfile.c librecorder/recorder.c
librecorder_librecorder_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(PTHREAD_CFLAGS)
librecorder_librecorder_la_LIBADD = formats/libfrz.la $(PTHREAD_LIBS) $(RT_LIBS)
librecorder_librecorder_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^(nccl|cuGraph|cuGetProcAddress)'

bin_SCRIPTS += librecorder/fr-record
CLEANFILES += librecorder/fr-record
EXTRA_DIST += librecorder/fr-record.in
# what fr-record leaves in front of the command: passes signals on, returns
# its status, salvages its ring file when it dies by a signal
pkglibexec_PROGRAMS = librecorder/fr-record-run
librecorder_fr_record_run_SOURCES = librecorder/fr-record-run.c
librecorder_fr_record_run_LDADD = formats/libfrz.la $(ZSTD_LIBS)
librecorder/fr-record: librecorder/fr-record.in Makefile
	$(AM_V_GEN)mkdir -p librecorder && sed -e 's|@pkglibdir[@]|$(pkglibdir)|g' \
	  -e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' $(srcdir)/librecorder/fr-record.in > $@ && chmod +x $@
