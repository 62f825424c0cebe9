//! CPU topology from sysfs: online CPUs, packages, cores, SMT siblings, caches. (Filled in by the task manager work.)
