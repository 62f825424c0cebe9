//! cgroup v1 (cpu.shares) and v2 (cpu.weight) groups for the live WRR comparison; created and removed by guards. (Filled in by the live WRR work.)
