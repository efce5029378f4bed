# formats/: the dump format spec and the one codec every part uses.
noinst_LTLIBRARIES += formats/libfrz.la
formats_libfrz_la_SOURCES = formats/frz.h formats/frz.c formats/frz_names.c formats/text.c \
	formats/pytorch_fr.h formats/pytorch_fr.c formats/pytorch_io.c \
	formats/pyval.h formats/pyval.c formats/pickle.c formats/pyjson.c \
	formats/idmap.h formats/idmap.c
formats_libfrz_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
formats_libfrz_la_LIBADD = $(ZSTD_LIBS)
dist_doc_DATA = formats/frz.md formats/analysis-json.md formats/dump-json.md \
	formats/analysis.schema.json formats/dump.schema.json
