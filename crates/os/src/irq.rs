//! IRQ affinity: read and steer /proc/irq/N/smp_affinity, remembering old masks and restoring them on every exit path. (Filled in by the task manager work.)
