# samples/: small real dump directories with their expected verdicts.
EXTRA_DIST += samples/README.md $(wildcard $(srcdir)/samples/*.log) \
	$(wildcard $(srcdir)/samples/*.expected.json) \
	$(wildcard $(srcdir)/samples/*/*.frz) \
	$(wildcard $(srcdir)/tests/fixtures/pytorch-fr/*/*) 
