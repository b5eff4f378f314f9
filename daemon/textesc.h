/*
 * textesc: text from xenstore (a guest's name, a job's error) made safe
 * to show a person, shared by the clients and the daemon's log.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at S, 0 if it is not one. */
size_t textesc_utf8_len(const unsigned char *s);
/* IN escaped the way ls -b and systemctl show names: \a \b \t \n \v \f \r
 * as such, every other byte of a control character (C0, DEL, C1, and the
 * Unicode characters that reorder or hide text) and every byte that is
 * not UTF-8 as \xNN, a backslash as \\ unless KEEP_BACKSLASH, printable
 * text as it is.  Into OUT (LEN), cut only between whole characters and
 * escapes, NUL-terminated if LEN > 0.  Returns the full length. */
size_t textesc_escape(char *out, size_t len, const char *in, bool keep_backslash);
