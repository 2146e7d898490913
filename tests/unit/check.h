/* check.h - a minimal TAP producer for the C unit tests */
#ifndef AO_CHECK_H
#define AO_CHECK_H

#include <stdio.h>

static int check_n, check_failed;

#define CHECK(cond, ...) do {                                            \
        check_n++;                                                       \
        if (cond) {                                                      \
            printf("ok %d - ", check_n);                                 \
        } else {                                                         \
            check_failed++;                                              \
            printf("not ok %d - %s:%d: ", check_n, __FILE__, __LINE__);  \
        }                                                                \
        printf(__VA_ARGS__);                                             \
        printf("\n");                                                    \
    } while (0)

#define CHECK_DONE() (printf("1..%d\n", check_n), check_failed ? 1 : 0)

#endif
