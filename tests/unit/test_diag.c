/* test_diag.c - what a fixer's model is shown of a failure */
#include <stdlib.h>
#include <string.h>

#include "agents/diag.h"
#include "check.h"

int main(void)
{
    const char *gcc =
        "In file included from kernel.c:2:\n"
        "/etc/passwd:1:5: error: expected identifier before ':' token\n"
        "    1 | root:x:0:0:root:/root:/bin/bash\n"
        "      |     ^\n"
        "kernel.c: In function 'kernel':\n"
        "kernel.c:9:13: error: 'acc' undeclared (first use in this function)\n"
        "    9 |     out[i] = acc / n;\n"
        "      |             ^~~\n"
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:42:1: note: declared here\n"
        "   42 | secret_line_from_a_header();\n"
        "/usr/bin/ld: kernel.o: in function `kernel': undefined reference to `helper'\n"
        "collect2: error: ld returned 1 exit status\n";
    char *d = ao_diag_for_model("compile_error", "the compiler or linker failed", gcc, 4000);

    CHECK(d && strncmp(d, "compile_error: the compiler or linker failed\n", 45) == 0,
          "the status and reason come first");
    CHECK(d && strstr(d, "kernel.c:9:13: error: 'acc' undeclared") && strstr(d, "out[i] = acc / n;"),
          "the kernel's own errors and quoted lines are kept (a division stays)");
    CHECK(d && !strstr(d, "root:x") && !strstr(d, "/etc/passwd") && !strstr(d, "In file included"),
          "an included file's name and contents are left out");
    CHECK(d && !strstr(d, "secret_line_from_a_header") && !strstr(d, "avx512fintrin"),
          "messages located in a system header are left out, with their quoted lines");
    CHECK(d && strstr(d, "<path>: kernel.o: in function `kernel': undefined reference to `helper'") &&
              strstr(d, "collect2: error: ld returned 1"),
          "the linker's words are kept, its path shown as <path>");
    free(d);

    d = ao_diag_for_model("incorrect", "input set 2: relative L2 error 0.41 over the tolerance 0.0001 "
                          "(work dir /var/lib/accelopt/work/j17/kernel.c)", NULL, 4000);
    CHECK(d && strstr(d, "input set 2: relative L2 error 0.41") && strstr(d, "(work dir <path>)") &&
              !strstr(d, "/var/lib"),
          "a reason keeps its figures and loses its host paths (%s)", d ? d : "");
    free(d);

    {
        char big[9000];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        d = ao_diag_for_model("crash", big, NULL, 1000);
        CHECK(d && strlen(d) < 1100 && strstr(d, "[cut at"), "capped, and says so");
        free(d);
    }
    /* the trn build's lines about the kernel's own Python */
    d = ao_diag_for_model("compile_error", "the compiler or linker failed",
                          "build.py:40: error: internal\n"
                          "kernel.py:20: error: NKIError: [GCA035] Instruction: I-1 couldn't be "
                          "allocated in SB. Total SB Partition Size: 196608\n", 4000);
    CHECK(d && strstr(d, "kernel.py:20: error: NKIError: [GCA035]") && !strstr(d, "build.py"),
          "an NKI kernel's error located in kernel.py is kept; the harness's are not (%s)", d ? d : "");
    free(d);
    return CHECK_DONE();
}
