/* input.c — the analyzer's input format setting, applied to each file. */
#include "config.h"

#include "input.h"

static frz_input_format input_format = FRZ_INPUT_AUTO;

void fa_set_input_format(frz_input_format f)
{
  input_format = f;
}

frz_status fa_read_dump_file(const char *path, frz_dump *out, frz_error *err)
{
  return frz_read_any_file(path, input_format, out, err);
}
