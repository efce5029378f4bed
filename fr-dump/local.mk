# fr-dump/: decode dumps (text, JSON, Chrome trace), check them; --trigger
# asks a live job to dump.
bin_PROGRAMS += fr-dump/fr-dump
fr_dump_fr_dump_SOURCES = fr-dump/main.c fr-dump/listeners.c fr-dump/dump_text.c fr-dump/dump_json.c \
	fr-dump/chrome_trace.c fr-dump/check.c fr-dump/listdir.c fr-dump/pyframes.c \
	fr-dump/trigger.c fr-dump/salvage.c fr-dump/fr_dump.h
fr_dump_fr_dump_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(PTHREAD_CFLAGS)
fr_dump_fr_dump_LDADD = formats/libfrz.la $(CJSON_LIBS) $(PTHREAD_LIBS)
