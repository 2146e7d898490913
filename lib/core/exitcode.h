/* exitcode.h - the exit codes every accelopt tool uses (documented in README) */
#ifndef AO_EXITCODE_H
#define AO_EXITCODE_H

enum ao_exit {
    AO_EXIT_OK = 0,      /* all work done */
    AO_EXIT_FAIL = 1,    /* runtime failure: worth a restart */
    AO_EXIT_USAGE = 2,   /* bad flags or config: a restart will not help */
    AO_EXIT_NO_GAIN = 3, /* a run ended, and no task's result beats its baseline */
    AO_EXIT_KERNEL = 3,  /* `accelopt profile`: the kernel was measured and is not ok (the same
                            meaning for one kernel: what was asked did not come out ok) */
    AO_EXIT_SIGNAL = 130 /* stopped by a second SIGINT/SIGTERM */
};

#endif
