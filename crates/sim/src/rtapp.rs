//! rt-app workloads (scheduler-tools/rt-app, doc/tutorial.txt) read into and written from
//! schedlab's workload format. Being written: see the module's tests for what holds.
