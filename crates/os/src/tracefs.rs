//! tracefs: mount if needed, capture sched:sched_switch, unmount what we mounted. (Filled in by the policy benchmark work.)
