//! The default time-sharing dispatch table of illumos, `config_ts_dptbl[]` in
//! `usr/src/uts/common/disp/ts_dptbl.c` (illumos-gate, unchanged since the OpenSolaris import,
//! commit 7c478bd9), row for row.
//!
//! Units: `ts_quantum` is in clock ticks (`ts_tick` in `ts.c` decrements `ts_timeleft` once per
//! tick; the ts_dptbl(5) man page: "in ticks (hz)"). `param.c` sets `hz = HZ_DEFAULT` (100) with
//! `hires_tick = 0`, so a tick is 10 ms and the quanta are 200 ms (levels 0–9) down to 20 ms
//! (level 59), as `dispadmin -c TS -g` prints them. (The 2023 man page says newer illumos boots
//! with `hires_tick = 1`, hz 1000, which would make the same table's quanta ten times shorter;
//! [`table_for_tick`] builds it for any tick.) `ts_maxwait` is in seconds (`ts_update` adds one
//! to `ts_dispwait` per second).

use crate::policy::{Dur, MS};

/// One clock tick at the `hz` of 100 the table was written for.
pub const TICK: Dur = 10 * MS;

/// One row of the dispatch table (`tsdpent_t`, `usr/src/uts/common/sys/ts.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispRow {
    /// `ts_globpri`: the global priority of this level (TS levels map to 0–59).
    pub globpri: u8,
    /// `ts_quantum`, converted from ticks to ns.
    pub quantum: Dur,
    /// `ts_tqexp`: the new `ts_cpupri` when the quantum runs out.
    pub tqexp: u8,
    /// `ts_slpret`: the new `ts_cpupri` on return from sleep after waiting too long.
    pub slpret: u8,
    /// `ts_maxwait`: seconds of `ts_dispwait` a thread at this level may reach before the lift.
    pub maxwait: u32,
    /// `ts_lwait`: the new `ts_cpupri` once `ts_dispwait` exceeds `ts_maxwait`.
    pub lwait: u8,
}

/// `config_ts_dptbl[]`: (quantum in ticks, tqexp, slpret, maxwait, lwait); globpri is the index
/// (`TSGPUP0 + i` with `TSGPUP0` 0).
const CONFIG_TS_DPTBL: [(u32, u8, u8, u32, u8); 60] = [
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (20, 0, 50, 0, 50),
    (16, 0, 51, 0, 51),
    (16, 1, 51, 0, 51),
    (16, 2, 51, 0, 51),
    (16, 3, 51, 0, 51),
    (16, 4, 51, 0, 51),
    (16, 5, 51, 0, 51),
    (16, 6, 51, 0, 51),
    (16, 7, 51, 0, 51),
    (16, 8, 51, 0, 51),
    (16, 9, 51, 0, 51),
    (12, 10, 52, 0, 52),
    (12, 11, 52, 0, 52),
    (12, 12, 52, 0, 52),
    (12, 13, 52, 0, 52),
    (12, 14, 52, 0, 52),
    (12, 15, 52, 0, 52),
    (12, 16, 52, 0, 52),
    (12, 17, 52, 0, 52),
    (12, 18, 52, 0, 52),
    (12, 19, 52, 0, 52),
    (8, 20, 53, 0, 53),
    (8, 21, 53, 0, 53),
    (8, 22, 53, 0, 53),
    (8, 23, 53, 0, 53),
    (8, 24, 53, 0, 53),
    (8, 25, 54, 0, 54),
    (8, 26, 54, 0, 54),
    (8, 27, 54, 0, 54),
    (8, 28, 54, 0, 54),
    (8, 29, 54, 0, 54),
    (4, 30, 55, 0, 55),
    (4, 31, 55, 0, 55),
    (4, 32, 55, 0, 55),
    (4, 33, 55, 0, 55),
    (4, 34, 55, 0, 55),
    (4, 35, 56, 0, 56),
    (4, 36, 57, 0, 57),
    (4, 37, 58, 0, 58),
    (4, 38, 58, 0, 58),
    (4, 39, 58, 0, 59),
    (4, 40, 58, 0, 59),
    (4, 41, 58, 0, 59),
    (4, 42, 58, 0, 59),
    (4, 43, 58, 0, 59),
    (4, 44, 58, 0, 59),
    (4, 45, 58, 0, 59),
    (4, 46, 58, 0, 59),
    (4, 47, 58, 0, 59),
    (4, 48, 58, 0, 59),
    (2, 49, 59, 32000, 59),
];

/// The default table with quanta at `tick` ns per clock tick.
pub fn table_for_tick(tick: Dur) -> Vec<DispRow> {
    CONFIG_TS_DPTBL
        .iter()
        .enumerate()
        .map(|(i, &(ticks, tqexp, slpret, maxwait, lwait))| DispRow {
            globpri: i as u8,
            quantum: Dur::from(ticks) * tick,
            tqexp,
            slpret,
            maxwait,
            lwait,
        })
        .collect()
}

/// The default Solaris/illumos TS dispatch table at hz 100 (60 rows, level 59 the best).
pub fn default_table() -> Vec<DispRow> {
    table_for_tick(TICK)
}
