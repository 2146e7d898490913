/* elfcheck.h - what an untrusted object file defines, checked before linking */
#ifndef AO_ELFCHECK_H
#define AO_ELFCHECK_H

#include <stddef.h>

/* Check a relocatable ELF64 object: it must define exactly one external
 * symbol, `want` (a function), no constructors or destructors, no IFUNCs,
 * and must not reference the harness's own symbols (ao_*, main).
 * Returns 0 if clean, 1 with reason filled if it breaks a rule, -1 with
 * reason filled if the file cannot be read as such an object. */
int ao_elf_check(const char *path, const char *want, char *reason, size_t len);

#endif
