//! Spawning child processes with a scheduling policy set before exec and a start barrier. (Filled in by the policy benchmark work.)
