//! What an experiment hands the report: a section per experiment with the published table
//! or claim beside our measured one, figures, predicted-versus-measured rows and verdicts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A table with named columns; cells are already formatted for reading.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Optional note printed under the table (units, where the published numbers come from).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The columns that name a row (policy, case, repeat), first in its tidy form
    /// ([`crate::tidy::tidy_keyed`]); empty: the columns stay as printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

impl Table {
    /// A table with a title and column names.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Self {
        Table { title: title.into(), columns: columns.iter().map(|c| c.to_string()).collect(), ..Default::default() }
    }

    /// Append a row (panics in debug builds if the width is wrong: that is a programming error).
    pub fn row(&mut self, cells: Vec<String>) -> &mut Self {
        debug_assert_eq!(cells.len(), self.columns.len(), "row width in table {}", self.title);
        self.rows.push(cells);
        self
    }

    /// Set the note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    /// Name the columns that name a row, in the order they lead the tidy form: words before
    /// numbers (`case`, `task`, then `repeat`), so the leading text columns are the labels and
    /// every column after them holds numbers. Panics in debug builds on a name that is no
    /// column: a programming error.
    pub fn keyed(mut self, keys: &[&str]) -> Self {
        debug_assert!(
            keys.iter().all(|k| self.columns.iter().any(|c| c == k)),
            "keys {keys:?} of table {}",
            self.title
        );
        self.keys = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    /// The table as tidy data ([`crate::tidy`]).
    pub fn tidy(&self) -> crate::tidy::TidyTable {
        crate::tidy::tidy_keyed(&self.columns, &self.rows, &self.keys)
    }
}

/// A figure: an SVG document and a caption.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    pub title: String,
    /// File name used when the figure is written to a run directory (e.g. `scale.svg`).
    pub file: String,
    pub svg: String,
    #[serde(default)]
    pub caption: String,
}

/// What kind of claim a verdict judges. Only a seed's claims and published numbers count
/// towards "reproduced"; the others are shown apart (docs/report.md has an example of each).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// A claim made in the seed's text (quoted, with its section).
    #[default]
    SeedClaim,
    /// A number the seed published, beside ours, with the tolerance and our scale factor.
    PublishedNumber,
    /// schedlab's own target (a speed, an overhead): met or not met.
    Goal,
    /// A model fitted to a target and then checked against it: shown, never reproduced.
    Calibration,
    /// Arithmetic that holds by construction: shown as a fact.
    Identity,
}

impl ClaimKind {
    /// Whether verdicts of this kind count in "reproduced N of M".
    pub fn is_reproducible(self) -> bool {
        matches!(self, ClaimKind::SeedClaim | ClaimKind::PublishedNumber)
    }

    /// The kind as written in JSON.
    pub fn word(self) -> &'static str {
        match self {
            ClaimKind::SeedClaim => "seed_claim",
            ClaimKind::PublishedNumber => "published_number",
            ClaimKind::Goal => "goal",
            ClaimKind::Calibration => "calibration",
            ClaimKind::Identity => "identity",
        }
    }
}

/// What a verdict found. A seed's claim or a published number is `reproduced`, `differs` or
/// `inconclusive`; a goal or a calibration is `met` or `not_met`; an identity is a `fact` (or
/// `not_met`: then the code that should make it hold is wrong).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Reproduced,
    Differs,
    /// The run-to-run spread straddles the line, or the quantity could not be measured here:
    /// neither agreement nor a difference can be claimed (the detail says which).
    #[serde(alias = "not_measured")]
    Inconclusive,
    Met,
    NotMet,
    Fact,
}

impl Outcome {
    /// How the outcome is printed.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Reproduced => "reproduced",
            Outcome::Differs => "differs",
            Outcome::Inconclusive => "inconclusive",
            Outcome::Met => "met",
            Outcome::NotMet => "not met",
            Outcome::Fact => "fact",
        }
    }
}

/// One claim and what we found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub claim: String,
    /// Runs written before verdicts had kinds read as seed claims.
    #[serde(default)]
    pub kind: ClaimKind,
    #[serde(rename = "status", alias = "outcome")]
    pub outcome: Outcome,
    /// The numbers behind the verdict, in words.
    pub detail: String,
}

impl Verdict {
    /// A verdict of any kind and outcome.
    pub fn new(kind: ClaimKind, claim: impl Into<String>, outcome: Outcome, detail: impl Into<String>) -> Self {
        Verdict { claim: claim.into(), kind, outcome, detail: detail.into() }
    }

    /// A claim of the seed's text, judged by a check that is beyond the run-to-run spread
    /// (use [`crate::judge`] when it could be inside it).
    pub fn seed_claim(claim: impl Into<String>, held: bool, detail: impl Into<String>) -> Self {
        Self::new(ClaimKind::SeedClaim, claim, if held { Outcome::Reproduced } else { Outcome::Differs }, detail)
    }

    /// A published number beside ours, within a stated tolerance.
    pub fn published(claim: impl Into<String>, held: bool, detail: impl Into<String>) -> Self {
        Self::new(ClaimKind::PublishedNumber, claim, if held { Outcome::Reproduced } else { Outcome::Differs }, detail)
    }

    /// schedlab's own target.
    pub fn goal(claim: impl Into<String>, met: bool, detail: impl Into<String>) -> Self {
        Self::new(ClaimKind::Goal, claim, if met { Outcome::Met } else { Outcome::NotMet }, detail)
    }

    /// A fitted model checked against the target it was fitted to.
    pub fn calibration(claim: impl Into<String>, met: bool, detail: impl Into<String>) -> Self {
        Self::new(ClaimKind::Calibration, claim, if met { Outcome::Met } else { Outcome::NotMet }, detail)
    }

    /// Arithmetic that holds by construction; `not_met` if it does not (a bug).
    pub fn identity(claim: impl Into<String>, holds: bool, detail: impl Into<String>) -> Self {
        Self::new(ClaimKind::Identity, claim, if holds { Outcome::Fact } else { Outcome::NotMet }, detail)
    }

    /// A claim of `kind` the spread does not let us judge.
    pub fn inconclusive(kind: ClaimKind, claim: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(kind, claim, Outcome::Inconclusive, detail)
    }

    /// A claim of `kind` this run could not measure: inconclusive, saying why.
    pub fn not_measured(kind: ClaimKind, claim: impl Into<String>, why: impl Into<String>) -> Self {
        Self::new(kind, claim, Outcome::Inconclusive, format!("not measured: {}", why.into()))
    }

    /// Whether this verdict counts in "reproduced N of M" (a seed claim or published number).
    pub fn counts(&self) -> bool {
        self.kind.is_reproducible()
    }
}

/// How the experiment ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum Status {
    Completed,
    /// Could not run here (not root, no tracefs, ...): the reason says what is missing.
    Unsupported(String),
    Failed(String),
    Interrupted,
}

/// One experiment's contribution to the report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Section {
    /// Registry name, e.g. `timers`.
    pub experiment: String,
    /// The seed document it reproduces, e.g. `000`.
    pub seed: String,
    pub title: String,
    /// What was run, in a sentence or two (scale, parameters that matter).
    pub summary: String,
    /// The scale the run was made at against the seed's own (`reproduce` fills it in from the
    /// experiment: "… the seed's scale" when it ran at it); empty when not said.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scale: String,
    pub status: Status,
    pub tables: Vec<Table>,
    pub figures: Vec<Figure>,
    pub verdicts: Vec<Verdict>,
    /// What the run was asked to do (results.json `parameters`).
    #[serde(default)]
    pub parameters: Value,
    /// The experiment's raw data, until [`crate::results::RunDir::write`] moves it into `data`
    /// (results.json `results`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub results: Value,
    /// Files for the run directory besides results.json, the tables and the figures (raw
    /// per-run rows, the seed's text layout). Written to disk only.
    #[serde(skip)]
    pub files: Vec<DataFile>,
    /// Where the run's files are (results.json etc.), once written.
    #[serde(default)]
    pub run_dir: Option<String>,
    /// The run's results document — the envelope of results.json — once written.
    #[serde(default)]
    pub data: Value,
}

/// A file of the run directory that is data, not a report table or figure.
#[derive(Debug, Clone, PartialEq)]
pub enum DataFile {
    /// A CSV table: a header row and rows of cells.
    Csv { name: String, columns: Vec<String>, rows: Vec<Vec<String>> },
    /// Any text.
    Text { name: String, text: String },
    /// Any bytes (a compressed file). The name may hold a subdirectory (`recordings/a.json.gz`).
    Bytes { name: String, bytes: Vec<u8> },
}

impl DataFile {
    /// A CSV file.
    pub fn csv(name: impl Into<String>, columns: &[&str], rows: Vec<Vec<String>>) -> Self {
        DataFile::Csv { name: name.into(), columns: columns.iter().map(|c| c.to_string()).collect(), rows }
    }

    /// A text file.
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        DataFile::Text { name: name.into(), text: text.into() }
    }

    /// A file of bytes.
    pub fn bytes(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        DataFile::Bytes { name: name.into(), bytes }
    }
}

impl Section {
    /// An empty, completed section.
    pub fn new(experiment: &str, seed: &str, title: &str) -> Self {
        Section {
            experiment: experiment.into(),
            seed: seed.into(),
            title: title.into(),
            summary: String::new(),
            scale: String::new(),
            status: Status::Completed,
            tables: vec![],
            figures: vec![],
            verdicts: vec![],
            parameters: Value::Null,
            results: Value::Null,
            files: vec![],
            run_dir: None,
            data: Value::Null,
        }
    }

    /// A section for an experiment that could not run here, with the reason.
    pub fn unsupported(experiment: &str, seed: &str, title: &str, why: impl Into<String>) -> Self {
        Section { status: Status::Unsupported(why.into()), ..Section::new(experiment, seed, title) }
    }

    /// Whether the run produced something to keep in a run directory: it completed or was
    /// interrupted part-way (an unsupported or failed experiment has no results).
    pub fn has_results(&self) -> bool {
        matches!(self.status, Status::Completed | Status::Interrupted)
    }
}
