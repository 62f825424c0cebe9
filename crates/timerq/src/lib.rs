//! schedlab-timerq: timer queues (seed 000). (Filled in by the timer-queue work.)
