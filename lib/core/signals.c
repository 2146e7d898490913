/* signals.c - graceful stop on SIGINT/SIGTERM, immediate exit on the second */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/exitcode.h"
#include "core/signals.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    if (stop_flag)
        _exit(AO_EXIT_SIGNAL);
    stop_flag = 1;
}

void ao_signals_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int ao_stop_requested(void)
{
    return stop_flag != 0;
}
