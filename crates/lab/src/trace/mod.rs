//! Where the live kernel meets the simulator: recording what the scheduler did
//! ([`recorder`], with the policy and affinity of each task in [`meta`]), running a simulator
//! workload for real ([`live`]), `schedlab trace record` ([`record`]), `schedlab trace
//! import` ([`import`]) and `schedlab trace shadow` ([`shadow`]). The parsing, timelines,
//! import, comparison and the shadow itself are `schedlab_trace`'s.

pub mod import;
pub mod live;
pub mod meta;
pub mod perfetto;
pub mod record;
pub mod recorder;
pub mod shadow;
