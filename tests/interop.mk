# tests/interop.mk: tests of the interoperability parts (issue 7): the
# PyTorch Flight Recorder importer, fr-dump's exports, the JSON Schemas.
check_PROGRAMS += tests/unit/check_pytorch
TESTS += tests/unit/check_pytorch tests/e2e/pytorch-import.sh tests/e2e/pytorch-kinds.sh
tests_unit_check_pytorch_SOURCES = tests/unit/check_pytorch.c
tests_unit_check_pytorch_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_pytorch_LDADD = formats/libfrz.la $(UNIT_LIBS)
EXTRA_DIST += tests/e2e/pytorch-import.sh tests/gen-pytorch-fr.py \
	tests/fixtures/pytorch-fr/c5.expected.json tests/fixtures/pytorch-fr/c1.expected.json \
	tests/fixtures/pytorch-fr/c2.expected.json tests/fixtures/pytorch-fr/README.md \
	$(wildcard $(srcdir)/tests/fixtures/pytorch-fr/*/*)
# the kinds of dumps real jobs write (tests/gen-pytorch-kinds.py, k1 ... k9)
EXTRA_DIST += tests/e2e/pytorch-kinds.sh tests/gen-pytorch-kinds.py \
	$(wildcard $(srcdir)/tests/fixtures/pytorch-fr/k[0-9]-*.expected.json)

## fr-dump's exports and the JSON Schemas in formats/
noinst_PROGRAMS += tests/trace-check tests/json-schema-check
tests_trace_check_SOURCES = tests/trace-check.c
tests_trace_check_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_trace_check_LDADD = $(CJSON_LIBS)
tests_json_schema_check_SOURCES = tests/json-schema-check.c
tests_json_schema_check_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_json_schema_check_LDADD = $(CJSON_LIBS) -lm
TESTS += tests/e2e/interop-exports.sh
EXTRA_DIST += tests/e2e/interop-exports.sh tests/device/torch_fr_hang.py tests/device/run-fr-hang.sh
# real 4-rank PyTorch jobs on one GPU (tests/device/run-multirank.sh): every
# kind of PyTorch dump and the recorder's, each with its verdict
TESTS += tests/e2e/pytorch-h200.sh tests/e2e/pytorch-breakit.sh
EXTRA_DIST += tests/e2e/pytorch-h200.sh tests/device/run-multirank.sh tests/device/torch_multirank.py \
	tests/e2e/pytorch-breakit.sh

## real PyTorch dumps of a 16-rank MoE job with two faulty ranks each (issue 14)
TESTS += tests/e2e/pytorch-real.sh
EXTRA_DIST += tests/e2e/pytorch-real.sh tests/fixtures/pytorch-fr/c9.expected.json \
	tests/fixtures/nvrx/README.md tests/fixtures/nvrx/LICENSE.txt \
	$(wildcard $(srcdir)/tests/fixtures/nvrx/*/*)
# hang kinds from a break-it pass, generated at test time with their truth
TESTS += tests/e2e/pytorch-hard.sh
EXTRA_DIST += tests/e2e/pytorch-hard.sh tests/gen-pytorch-hard.py tests/gen-pytorch-hard2.py
