/* diag.h - why a kernel failed, as the fixer's model is shown it */
#ifndef AO_DIAG_H
#define AO_DIAG_H

/* The failure's status and reason, then the compiler's messages about the
 * kernel's own file (kernel.c) only: a message located in any other file,
 * an "In file included from" line and the source lines quoted under them
 * are left out (a kernel that includes a file must not get its contents
 * read back), and any absolute path left is shown as <path>.  Capped at
 * max bytes.  The caller frees. */
char *ao_diag_for_model(const char *status, const char *reason, const char *diagnostics,
                        size_t max);

#endif
