# fr-tui/: the terminal browser of a hang's dumps, on the analyzer library.
bin_PROGRAMS += fr-tui/fr-tui
fr_tui_fr_tui_SOURCES = fr-tui/main.c fr-tui/tui.h fr-tui/grid.c fr-tui/view.c \
	fr-tui/render.c fr-tui/keys.c fr-tui/chooser.c fr-tui/term.c fr-tui/stacks.c
fr_tui_fr_tui_CFLAGS = $(AM_CFLAGS) $(NCURSESW_CFLAGS) -I$(top_srcdir)/fr-analyze/libanalyze
fr_tui_fr_tui_LDADD = fr-analyze/libanalyze.la $(NCURSESW_LIBS)
