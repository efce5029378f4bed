# man/: manual pages.
dist_man_MANS += man/fr-dump.1 man/fr-analyze.1 man/fr-tui.1 man/fr-record.1 man/librecorder.7 man/frz.5
