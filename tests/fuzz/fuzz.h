/* tests/fuzz/fuzz.h: the entry point every fuzz target defines.  Built with
 * clang -fsanitize=fuzzer it is driven by libFuzzer; built with driver.c it
 * is a plain program that runs each file of the corpora it is given. */
#ifndef FR_FUZZ_H
#define FR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
