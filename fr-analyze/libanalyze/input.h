/* input.h — which dump formats the analyzer reads: flightrec's own (.frz)
 * and PyTorch Flight Recorder dumps (pickle or JSON, formats/pytorch_fr.h). */
#ifndef FR_ANALYZE_INPUT_H
#define FR_ANALYZE_INPUT_H

#include "frz.h"
#include "pytorch_fr.h"

/* Set the input format for the files read from now on (process-wide;
 * default FRZ_INPUT_AUTO). */
void fa_set_input_format(frz_input_format f);

/* Decode the file at `path` in the input format set, like frz_read_file. */
frz_status fa_read_dump_file(const char *path, frz_dump *out, frz_error *err);

#endif /* FR_ANALYZE_INPUT_H */
