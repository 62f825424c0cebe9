//! perf_event_open counters (software and hardware), reporting "not supported" rather than zero. (Filled in by the task manager work.)
