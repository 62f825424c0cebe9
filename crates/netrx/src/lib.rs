//! schedlab-netrx: receive livelock strategies and model (seed 002). (Filled in by the livelock work.)
