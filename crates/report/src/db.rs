//! The results database: every run recorded in SQLite (rusqlite, bundled) — experiment,
//! parameters, machine, version and commit, status, the report section and the raw results
//! document, start and end times.
//!
//! Safe for concurrent runs: WAL journal, a busy timeout, and every write in an IMMEDIATE
//! transaction. A run is inserted as `running` (with its [`Owner`], the process identity) before
//! it starts and updated when it ends; opening the database marks `running` rows whose owner is
//! gone (killed with SIGKILL, power loss) as `interrupted`. Who the current process is and
//! whether a recorded one is gone are questions for the machine: the caller answers them
//! through [`Liveness`].
//! Shards' databases are joined with [`Db::merge_from`]; rows keep a globally unique `uid`,
//! so merging the same shard twice adds nothing.

use crate::results::Provenance;
use crate::section::{Section, Status};
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use schedlab_os::usage::OrUsage;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Default location, relative to the working directory.
pub const DEFAULT_PATH: &str = "results/schedlab.db";

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    uid           TEXT NOT NULL UNIQUE,
    experiment    TEXT NOT NULL,
    seed          TEXT NOT NULL,
    title         TEXT NOT NULL,
    scale         TEXT NOT NULL,
    shard         TEXT,
    status        TEXT NOT NULL,
    reason        TEXT,
    host          TEXT NOT NULL,
    boot_id       TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    pid_start     INTEGER NOT NULL,
    version       TEXT NOT NULL,
    commit_id     TEXT NOT NULL,
    started_utc   TEXT NOT NULL,
    finished_utc  TEXT,
    run_dir       TEXT,
    parameters    TEXT NOT NULL,
    machine       TEXT NOT NULL,
    section       TEXT,
    data          TEXT
);
CREATE INDEX IF NOT EXISTS runs_experiment ON runs (experiment, id);
CREATE INDEX IF NOT EXISTS runs_status ON runs (status);
";

/// Column list shared by queries and merge (everything but `id`).
const COLUMNS: &str = "uid, experiment, seed, title, scale, shard, status, reason, host, boot_id, pid, pid_start, \
                       version, commit_id, started_utc, finished_utc, run_dir, parameters, machine, section, data";

/// The process that owns a run row: host, boot id, pid and the pid's start time (in clock ticks
/// since boot), a quadruple that survives pid reuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub boot_id: String,
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (0 if unknown).
    pub start_ticks: u64,
}

/// How the database learns who is running it and whether a recorded owner is gone.
pub trait Liveness: Send {
    /// The current process.
    fn current(&self) -> Owner;
    /// True when `owner` has certainly ended (never for a process on another host).
    fn is_gone(&self, owner: &Owner) -> bool;
}

/// Status of a run as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Completed,
    Failed,
    Unsupported,
    Interrupted,
}

impl RunStatus {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Unsupported => "unsupported",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Parse a stored or typed word.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "failed" => RunStatus::Failed,
            "unsupported" => RunStatus::Unsupported,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }

    /// The status a finished section records, with its reason.
    pub fn of(status: &Status) -> (Self, Option<String>) {
        match status {
            Status::Completed => (RunStatus::Completed, None),
            Status::Unsupported(r) => (RunStatus::Unsupported, Some(r.clone())),
            Status::Failed(r) => (RunStatus::Failed, Some(r.clone())),
            Status::Interrupted => (RunStatus::Interrupted, Some("stopped by a signal".into())),
        }
    }
}

/// What is known when a run starts.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub experiment: String,
    pub seed: String,
    pub title: String,
    /// `quick`, `default` or `full`.
    pub scale: String,
    /// `K/N` when run as a shard.
    pub shard: Option<String>,
    /// Parameters known up front (the scale, the command line); replaced by the results
    /// document's own `parameters` when the run finishes.
    pub parameters: Value,
    /// When it started, for a run recorded only once it ended (default: now).
    pub started_utc: Option<String>,
}

/// One stored run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub id: i64,
    pub uid: String,
    pub experiment: String,
    pub seed: String,
    pub title: String,
    pub scale: String,
    pub shard: Option<String>,
    pub status: RunStatus,
    pub reason: Option<String>,
    pub host: String,
    pub pid: u32,
    pub version: String,
    pub commit: String,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    pub run_dir: Option<String>,
    pub parameters: Value,
    pub machine: Value,
    /// The report section (without its data document), when the run finished.
    pub section: Option<Section>,
    /// The raw results document (the section's `data`).
    pub data: Value,
}

impl Run {
    /// Wall time in seconds, when finished.
    pub fn duration_s(&self) -> Option<f64> {
        let parse = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
        let (a, b) = (parse(&self.started_utc)?, parse(self.finished_utc.as_deref()?)?);
        Some((b - a).num_milliseconds() as f64 / 1000.0)
    }
}

/// Which runs to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub experiment: Option<String>,
    pub status: Option<RunStatus>,
    /// Most recent N (0 = all).
    pub limit: usize,
}

/// What a merge did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Merged {
    pub added: usize,
    pub already_present: usize,
}

/// An open results database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
    liveness: Box<dyn Liveness>,
}

/// Is this SQLite's "database is busy/locked"?
fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}

impl Db {
    /// Open (creating it and its directory if needed), then mark runs whose process is gone.
    pub fn open(path: &Path, liveness: Box<dyn Liveness>) -> Result<Db> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let conn = Connection::open(path).with_context(|| format!("opening results database {}", path.display()))?;
        let mut db = Db { conn, path: path.to_path_buf(), liveness };
        db.setup().with_context(|| format!("preparing results database {}", path.display()))?;
        db.reap_stale()?;
        Ok(db)
    }

    /// Open a database that must already exist (for `results list/show/...`).
    pub fn open_existing(path: &Path, liveness: Box<dyn Liveness>) -> Result<Db> {
        if !path.is_file() {
            schedlab_os::bail_usage!(
                "no results database at {} (run `schedlab reproduce` first, or pass --db PATH)",
                path.display()
            );
        }
        Db::open(path, liveness)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set the database up, retrying while another process holds it: SQLite reports a busy
    /// database without calling the busy handler when several processes switch a fresh file to
    /// WAL at the same moment.
    fn setup(&mut self) -> Result<()> {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match self.setup_once() {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    fn setup_once(&mut self) -> Result<()> {
        // The timeout first: switching to WAL and creating tables may wait for another writer.
        self.conn.busy_timeout(Duration::from_secs(30))?;
        let mode: String = self.conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!("SQLite refused WAL mode (got {mode}); is the file on a network filesystem?");
        }
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(SCHEMA)?;
        let found: Option<String> =
            tx.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).optional()?;
        match found {
            None => {
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION.to_string()],
                )?;
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(v) => bail!("schema version {v} is not the {SCHEMA_VERSION} this schedlab understands"),
        }
        tx.commit()?;
        Ok(())
    }

    /// Record a run as `running` before it starts; returns its id.
    pub fn start(&mut self, run: &NewRun, prov: &Provenance) -> Result<i64> {
        let me = self.liveness.current();
        let machine = serde_json::to_string(&prov.machine)?;
        let uid = new_uid(&me);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO runs (uid, experiment, seed, title, scale, shard, status, host, boot_id, pid, pid_start,
                               version, commit_id, started_utc, parameters, machine)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                uid,
                run.experiment,
                run.seed,
                run.title,
                run.scale,
                run.shard,
                me.host,
                me.boot_id,
                me.pid,
                me.start_ticks as i64,
                prov.version,
                prov.commit,
                run.started_utc.clone().unwrap_or_else(now_utc),
                run.parameters.to_string(),
                machine
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Record how a run ended: its status, section, raw data, run directory and parameters
    /// and machine facts from the results document when it has them.
    pub fn finish(&mut self, id: i64, section: &Section) -> Result<()> {
        let (status, reason) = RunStatus::of(&section.status);
        let mut light = section.clone();
        light.data = Value::Null;
        let data = &section.data;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE runs SET status = ?2, reason = ?3, finished_utc = ?4, run_dir = ?5, section = ?6, data = ?7,
                    parameters = CASE WHEN ?8 IS NULL THEN parameters ELSE ?8 END,
                    machine = CASE WHEN ?9 IS NULL THEN machine ELSE ?9 END
             WHERE id = ?1",
            params![
                id,
                status.as_str(),
                reason,
                now_utc(),
                section.run_dir,
                serde_json::to_string(&light)?,
                data.to_string(),
                data.get("parameters").map(Value::to_string),
                data.get("machine").filter(|m| m.is_object()).map(Value::to_string),
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Mark `running` rows whose process is gone as `interrupted`; returns how many.
    fn reap_stale(&mut self) -> Result<usize> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let running: Vec<(i64, Owner)> = {
            let mut st = tx.prepare("SELECT id, host, boot_id, pid, pid_start FROM runs WHERE status = 'running'")?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Owner {
                        host: r.get(1)?,
                        boot_id: r.get(2)?,
                        pid: r.get(3)?,
                        start_ticks: r.get::<_, i64>(4)? as u64,
                    },
                ))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut n = 0;
        for (id, p) in running.iter().filter(|(_, p)| self.liveness.is_gone(p)) {
            n += tx.execute(
                "UPDATE runs SET status = 'interrupted', reason = ?2 WHERE id = ?1",
                params![id, format!("process {} ended without finishing the run (killed?)", p.pid)],
            )?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Runs, oldest first (the most recent `limit` when a limit is given).
    pub fn list(&self, filter: &Filter) -> Result<Vec<Run>> {
        let mut sql = format!("SELECT id, {COLUMNS} FROM runs WHERE 1=1");
        let mut args: Vec<String> = Vec::new();
        if let Some(e) = &filter.experiment {
            args.push(e.clone());
            sql += &format!(" AND experiment = ?{}", args.len());
        }
        if let Some(s) = filter.status {
            args.push(s.as_str().to_string());
            sql += &format!(" AND status = ?{}", args.len());
        }
        sql += " ORDER BY id DESC";
        if filter.limit > 0 {
            sql += &format!(" LIMIT {}", filter.limit);
        }
        let mut st = self.conn.prepare(&sql)?;
        let mut runs =
            st.query_map(rusqlite::params_from_iter(args.iter()), row_to_run)?.collect::<rusqlite::Result<Vec<_>>>()?;
        runs.reverse();
        Ok(runs)
    }

    /// One run by id.
    pub fn get(&self, id: i64) -> Result<Run> {
        self.conn
            .query_row(&format!("SELECT id, {COLUMNS} FROM runs WHERE id = ?1"), [id], row_to_run)
            .optional()?
            .with_context(|| format!("no run with id {id} in {} (see `schedlab results list`)", self.path.display()))
    }

    /// The most recent finished section of each experiment, in the order experiments first
    /// appear (to rebuild a report from a merged database).
    pub fn latest_sections(&self) -> Result<Vec<(Run, Section)>> {
        let runs = self.list(&Filter::default())?;
        let mut latest: Vec<(Run, Section)> = Vec::new();
        for run in runs {
            let Some(mut section) = run.section.clone() else { continue };
            section.data = run.data.clone();
            match latest.iter_mut().find(|(r, _)| r.experiment == run.experiment) {
                Some(slot) => *slot = (run, section),
                None => latest.push((run, section)),
            }
        }
        Ok(latest)
    }

    /// Copy every run of another schedlab database into this one (rows already here, by uid,
    /// are skipped). The other file is only read.
    pub fn merge_from(&mut self, other: &Path) -> Result<Merged> {
        if !other.is_file() {
            schedlab_os::bail_usage!("{} is not a file", other.display());
        }
        if let (Ok(a), Ok(b)) = (other.canonicalize(), self.path.canonicalize()) {
            if a == b {
                schedlab_os::bail_usage!("cannot merge {} into itself", other.display());
            }
        }
        let uri = format!("file:{}?mode=ro", other.display());
        self.conn
            .execute("ATTACH DATABASE ?1 AS src", [&uri])
            .with_context(|| format!("opening {}", other.display()))
            .or_usage()?;
        let result = (|| -> Result<Merged> {
            let has_runs: i64 = self
                .conn
                .query_row("SELECT count(*) FROM src.sqlite_master WHERE type = 'table' AND name = 'runs'", [], |r| {
                    r.get(0)
                })
                .with_context(|| format!("{} is not an SQLite database", other.display()))
                .or_usage()?;
            if has_runs == 0 {
                schedlab_os::bail_usage!("{} is not a schedlab results database (no runs table)", other.display());
            }
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let total: i64 = tx.query_row("SELECT count(*) FROM src.runs", [], |r| r.get(0))?;
            let added = tx.execute(
                &format!(
                    "INSERT INTO main.runs ({COLUMNS}) SELECT {COLUMNS} FROM src.runs
                     WHERE uid NOT IN (SELECT uid FROM main.runs) ORDER BY started_utc, id"
                ),
                [],
            )?;
            tx.commit()?;
            Ok(Merged { added, already_present: total as usize - added })
        })();
        self.conn.execute("DETACH DATABASE src", [])?;
        result
    }

    /// SQLite's own consistency check ("ok" when sound).
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

fn row_to_run(r: &rusqlite::Row) -> rusqlite::Result<Run> {
    let json = |i: usize| -> rusqlite::Result<Value> {
        let s: Option<String> = r.get(i)?;
        Ok(s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(Value::Null))
    };
    let status: String = r.get(7)?;
    let section: Option<String> = r.get(20)?;
    Ok(Run {
        id: r.get(0)?,
        uid: r.get(1)?,
        experiment: r.get(2)?,
        seed: r.get(3)?,
        title: r.get(4)?,
        scale: r.get(5)?,
        shard: r.get(6)?,
        status: RunStatus::parse(&status).unwrap_or(RunStatus::Failed),
        reason: r.get(8)?,
        host: r.get(9)?,
        pid: r.get(11)?,
        version: r.get(13)?,
        commit: r.get(14)?,
        started_utc: r.get(15)?,
        finished_utc: r.get(16)?,
        run_dir: r.get(17)?,
        parameters: json(18)?,
        machine: json(19)?,
        section: section.and_then(|s| serde_json::from_str(&s).ok()),
        data: json(21)?,
    })
}

/// Now, as the database writes times (RFC 3339, milliseconds, UTC).
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A run id unique across machines and processes (kept through merges).
fn new_uid(me: &Owner) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let boot: String = me.boot_id.chars().take(8).collect();
    format!("{}-{boot}-{}-{nanos}-{}", me.host, me.pid, COUNTER.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::Table;
    use serde_json::json;

    /// The test process is alive; pids listed as dead are gone.
    struct Fake {
        dead: Vec<u32>,
    }

    impl Liveness for Fake {
        fn current(&self) -> Owner {
            Owner { host: "box".into(), boot_id: "b".into(), pid: std::process::id(), start_ticks: 7 }
        }
        fn is_gone(&self, o: &Owner) -> bool {
            self.dead.contains(&o.pid)
        }
    }

    fn open(path: &Path) -> Db {
        open_with(path, vec![])
    }

    fn open_with(path: &Path, dead: Vec<u32>) -> Db {
        Db::open(path, Box::new(Fake { dead })).unwrap()
    }

    fn prov() -> Provenance {
        Provenance::new(json!({"kernel": "6.18"}))
    }

    fn new_run(name: &str) -> NewRun {
        NewRun {
            experiment: name.into(),
            seed: "000".into(),
            title: "t".into(),
            scale: "quick".into(),
            shard: None,
            parameters: json!({"scale": "quick"}),
            started_utc: None,
        }
    }

    fn section(name: &str, status: Status) -> Section {
        let mut s = Section::new(name, "000", "t");
        s.status = status;
        let mut t = Table::new("x", &["a"]);
        t.row(vec!["1".into()]);
        s.tables.push(t);
        s.data = json!({"parameters": {"n": 5}, "ops": {"delta": 10, "control": 100}});
        s
    }

    #[test]
    fn a_run_goes_from_running_to_completed() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("r/s.db"));
        let id = db.start(&new_run("timers"), &prov()).unwrap();
        assert_eq!(db.get(id).unwrap().status, RunStatus::Running);
        assert!(db.get(id).unwrap().machine["kernel"].is_string());
        db.finish(id, &section("timers", Status::Completed)).unwrap();
        let run = db.get(id).unwrap();
        assert_eq!(run.status, RunStatus::Completed);
        assert_eq!(run.parameters, json!({"n": 5}));
        assert_eq!(run.data["ops"]["control"], 100);
        assert_eq!(run.section.as_ref().unwrap().tables[0].rows[0][0], "1");
        assert_eq!(run.section.as_ref().unwrap().data, Value::Null); // stored once, in `data`
        let took = run.duration_s().unwrap();
        assert!((0.0..60.0).contains(&took), "a run of a few milliseconds took {took} s");
        let mut timed = run;
        (timed.started_utc, timed.finished_utc) =
            ("2026-01-01T23:59:00Z".into(), Some("2026-01-02T00:00:30.250Z".into()));
        assert_eq!(timed.duration_s(), Some(90.25), "across midnight, to the millisecond");
        timed.finished_utc = None;
        assert_eq!(timed.duration_s(), None, "an unfinished run has no duration");
        let id2 = db.start(&new_run("wrr"), &prov()).unwrap();
        db.finish(id2, &section("wrr", Status::Unsupported("needs root".into()))).unwrap();
        let r2 = db.get(id2).unwrap();
        assert_eq!((r2.status, r2.reason.as_deref()), (RunStatus::Unsupported, Some("needs root")));
        assert!(db.get(999).is_err());
        assert_eq!(db.integrity_check().unwrap(), "ok");
    }

    #[test]
    fn a_running_row_whose_process_died_becomes_interrupted_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut db = open(&path);
        let mine = db.start(&new_run("alive"), &prov()).unwrap();
        let dead = db.start(&new_run("dead"), &prov()).unwrap();
        let pid = 4_000_001; // above any pid_max: the fake says it is gone
        db.conn.execute("UPDATE runs SET pid = ?1 WHERE id = ?2", params![pid, dead]).unwrap();
        drop(db);
        let db = open_with(&path, vec![pid]);
        assert_eq!(db.get(mine).unwrap().status, RunStatus::Running, "our own process is alive");
        let d = db.get(dead).unwrap();
        assert_eq!(d.status, RunStatus::Interrupted);
        assert!(d.reason.unwrap().contains(&pid.to_string()));
    }

    #[test]
    fn filters_and_latest_sections() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("s.db"));
        for name in ["a", "b", "a"] {
            let id = db.start(&new_run(name), &prov()).unwrap();
            db.finish(id, &section(name, Status::Completed)).unwrap();
        }
        db.start(&new_run("c"), &prov()).unwrap(); // still running: not a section yet
        assert_eq!(db.list(&Filter::default()).unwrap().len(), 4);
        let only_a = db.list(&Filter { experiment: Some("a".into()), ..Default::default() }).unwrap();
        assert_eq!(only_a.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 3]);
        let last = db.list(&Filter { limit: 1, ..Default::default() }).unwrap();
        assert_eq!(last[0].id, 4);
        let running = db.list(&Filter { status: Some(RunStatus::Running), ..Default::default() }).unwrap();
        assert_eq!(running.len(), 1);
        let latest = db.latest_sections().unwrap();
        assert_eq!(latest.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), vec![3, 2]);
        assert_eq!(latest[0].1.data["ops"]["delta"], 10);
    }

    #[test]
    fn merge_joins_shards_once() {
        let dir = tempfile::tempdir().unwrap();
        let (p1, p2, into) = (dir.path().join("1.db"), dir.path().join("2.db"), dir.path().join("all.db"));
        for (p, names) in [(&p1, vec!["a", "b"]), (&p2, vec!["c"])] {
            let mut db = open(p);
            for n in names {
                let id = db.start(&new_run(n), &prov()).unwrap();
                db.finish(id, &section(n, Status::Completed)).unwrap();
            }
        }
        let mut all = open(&into);
        assert_eq!(all.merge_from(&p1).unwrap(), Merged { added: 2, already_present: 0 });
        assert_eq!(all.merge_from(&p2).unwrap(), Merged { added: 1, already_present: 0 });
        assert_eq!(all.merge_from(&p1).unwrap(), Merged { added: 0, already_present: 2 });
        let names: Vec<String> = all.list(&Filter::default()).unwrap().into_iter().map(|r| r.experiment).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(all.get(3).unwrap().data["ops"]["control"], 100);
        assert!(all.merge_from(&into).is_err(), "merging into itself is refused");
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, "not a database at all, just text").unwrap();
        assert!(all.merge_from(&junk).is_err());
        assert!(all.merge_from(&dir.path().join("missing.db")).is_err());
    }

    #[test]
    fn concurrent_writers_do_not_corrupt_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        open(&path);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut db = open(&path);
                    for i in 0..25 {
                        let name = format!("t{t}-{i}");
                        let id = db.start(&new_run(&name), &prov()).unwrap();
                        db.finish(id, &section(&name, Status::Completed)).unwrap();
                        db.list(&Filter { limit: 5, ..Default::default() }).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let db = open(&path);
        let runs = db.list(&Filter::default()).unwrap();
        assert_eq!(runs.len(), 100);
        assert!(runs.iter().all(|r| r.status == RunStatus::Completed));
        assert_eq!(db.integrity_check().unwrap(), "ok");
    }
}
