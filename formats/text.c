/* text.c — strings from dumps made safe for a terminal or a JSON document.
 * Every tool prints host names, symbols, trigger texts and file names that a
 * dying (or hostile) process wrote; none of them may move the cursor, clear
 * the screen or reorder what is shown. */
#include <string.h>

#include "frz.h"

/* Is code point cp a bidirectional control or a line/paragraph separator
 * (U+061C, U+200E-F, U+2028-2E, U+2066-9)?  They reorder or break the
 * line a terminal shows without being control characters. */
static int invisible_layout(unsigned cp)
{
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

/* Length of the character at s (n bytes available) if it may be shown:
 * valid UTF-8, not a C0/C1 control or DEL, not a layout control; else 0. */
static size_t shown_len(const unsigned char *s, size_t n)
{
  unsigned c = s[0], cp;
  size_t k;
  if (c < 0x20 || c == 0x7f) return 0;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) { k = 2; cp = c & 0x1f; }
  else if (c >= 0xe0 && c <= 0xef) { k = 3; cp = c & 0x0f; }
  else if (c >= 0xf0 && c <= 0xf4) { k = 4; cp = c & 0x07; }
  else return 0;
  if (k > n) return 0;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) || invisible_layout(cp))
    return 0;
  return k;
}

char *frz_sanitize(const char *in, size_t inlen, char *out, size_t outlen)
{
  if (!outlen) return out;
  const unsigned char *s = (const unsigned char *)(in ? in : "");
  size_t i = 0, o = 0;
  while (i < inlen && s[i]) {
    size_t avail = 0;
    while (avail < 4 && i + avail < inlen && s[i + avail]) avail++;
    size_t k = shown_len(s + i, avail);
    if (!k) {
      if (o + 2 > outlen) break;
      out[o++] = '?';
      i++;
      continue;
    }
    if (o + k + 1 > outlen) break;
    memcpy(out + o, s + i, k);
    o += k;
    i += k;
  }
  out[o] = '\0';
  return out;
}
