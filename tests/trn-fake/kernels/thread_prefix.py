"""Put before silu's baseline (tests/cli/99-trn.sh): a module that starts a
thread on the stand-in device, as the kernel that rewrote every trace to 6 us did (issue
46, part 6): the stand-in's device runs the kernel locked down as every
kernel is, so the thread is never made."""
import threading
import time


def _linger():
    while True:
        time.sleep(0.001)


threading.Thread(target=_linger, daemon=True).start()
