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

/* The same checks under a target's rules: an object from nvcc registers
 * its device code from one constructor of its own, and links against a
 * runtime whose calls are listed. */
struct ao_elf_rules {
    const char *want;                 /* the one external function */
    const char *const *also_defined;  /* other external symbols allowed (NULL-ended) */
    const char *const *undefined;     /* the only symbols it may use (NULL: any but ours) */
    const char *const *undefined_prefixes; /* and those starting so */
    const char *init_fn;              /* the one constructor allowed (NULL: none); it
                                         may not reach `want` (a renamed symbol) */
    int no_raw_syscalls;              /* no syscall, sysenter or int 0x80 bytes in code */
};
int ao_elf_check_rules(const char *path, const struct ao_elf_rules *r, char *reason, size_t len);

#endif
