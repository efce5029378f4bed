# formats/: the dump format spec and the one codec every part uses.
noinst_LTLIBRARIES += formats/libfrz.la
formats_libfrz_la_SOURCES = formats/frz.h formats/nccl_api.def formats/frz_internal.h \
	formats/frz_common.c formats/frz_write.c formats/frz_read.c formats/frz_names.c formats/text.c formats/alive.c formats/trigger_line.c \
	formats/frz_ring.h formats/frz_ring.c \
	formats/pytorch_fr.h formats/pytorch_fr.c formats/pytorch_io.c \
	formats/pytorch_int.h formats/pytorch_pg.c formats/pytorch_ops.c formats/pytorch_coal.c \
	formats/pyval.h formats/pyval.c formats/pickle.c formats/pyjson.c \
	formats/idmap.h formats/idmap.c
# formats/ depends on no other part: its sources see only formats/ and the
# build directory, not the other -I paths of AM_CPPFLAGS.
formats_libfrz_la_CPPFLAGS = -include $(top_builddir)/config.h -I$(top_srcdir)/formats -I$(top_builddir)
formats_libfrz_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
formats_libfrz_la_LIBADD = $(ZSTD_LIBS)
dist_doc_DATA = formats/frz.md formats/analysis-json.md formats/dump-json.md \
	formats/analysis.schema.json formats/dump.schema.json
