//! The self-contained HTML report (`report/index.html`): one section per seed document, each
//! with what was run, the seed's published table or claim, our measured tables, the figures
//! (inline SVG), predicted-versus-measured tables, the machine facts and a verdict line.
//! No scripts, no network: inline CSS that reads on a phone (tables scroll sideways) and prints.

use crate::section::{ClaimKind, Figure, Outcome, Section, Status, Table, Verdict};
use crate::seeds::{self, Seed, SEEDS};
use crate::svg::escape;
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// Facts about the invocation that produced the report.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub created_utc: String,
    /// The command line, e.g. `schedlab reproduce --quick`.
    pub command: String,
    /// `quick`, `default` or `full`.
    pub scale: String,
    pub version: String,
    pub commit: String,
    /// Machine facts of the machine writing the report (`MachineFacts` as JSON).
    pub machine: Value,
    /// `K/N` when this is one shard.
    pub shard: Option<String>,
    /// Where the results database is.
    pub db_path: Option<String>,
}

impl RunInfo {
    /// Facts about this invocation: now, the command line, and the build and machine of `prov`.
    pub fn new(
        prov: &crate::results::Provenance,
        scale: String,
        shard: Option<String>,
        db_path: Option<String>,
    ) -> Self {
        RunInfo {
            created_utc: crate::results::now_utc(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            scale,
            version: prov.version.clone(),
            commit: prov.commit.clone(),
            machine: prov.machine.clone(),
            shard,
            db_path,
        }
    }
}

/// An experiment that was not run, and why.
#[derive(Debug, Clone)]
pub struct NotRun {
    pub experiment: String,
    pub seed: String,
    pub title: String,
    pub reason: String,
}

/// Everything the report shows.
pub struct Report<'a> {
    pub info: RunInfo,
    /// Finished sections (completed, unsupported, failed or interrupted), in run order.
    pub sections: &'a [Section],
    /// Registered experiments that did not run (not selected, another shard, interrupted).
    pub not_run: &'a [NotRun],
    /// The parsed `data/seed_numbers.json`.
    pub seed_numbers: &'a Value,
}

/// The one-line verdict of a seed, from its sections' verdicts.
#[derive(Debug, Clone, PartialEq)]
struct SeedVerdict {
    /// `reproduced`, `differs`, `partial`, `not-run`, `failed` or `measured` (CSS class too).
    pub kind: &'static str,
    pub text: String,
}

/// Summarise the sections of one seed into a verdict line.
fn seed_verdict(sections: &[&Section], not_run: &[&NotRun]) -> SeedVerdict {
    let ran: Vec<&&Section> = sections.iter().filter(|s| s.status == Status::Completed).collect();
    let all: Vec<&Verdict> = ran.iter().flat_map(|s| s.verdicts.iter()).collect();
    // Only a seed's claims and published numbers count as reproduced; goals are listed apart.
    let verdicts: Vec<&Verdict> = all.iter().copied().filter(|v| v.counts()).collect();
    let count = |o: Outcome| verdicts.iter().filter(|v| v.outcome == o).count();
    let (rep, dif, inc) = (count(Outcome::Reproduced), count(Outcome::Differs), count(Outcome::Inconclusive));
    let goals: Vec<&&Verdict> = all.iter().filter(|v| v.kind == ClaimKind::Goal).collect();
    let goals_met = goals.iter().filter(|v| v.outcome == Outcome::Met).count();
    if ran.is_empty() {
        let mut reasons: Vec<String> = sections
            .iter()
            .map(|s| match &s.status {
                Status::Unsupported(r) => format!("{}: {r}", s.experiment),
                Status::Failed(r) => format!("{} failed: {r}", s.experiment),
                Status::Interrupted => format!("{}: interrupted", s.experiment),
                Status::Completed => unreachable!(),
            })
            .collect();
        reasons.extend(not_run.iter().map(|n| format!("{}: {}", n.experiment, n.reason)));
        if reasons.is_empty() {
            reasons.push("no experiment for this seed is registered in this build".into());
        }
        let failed = sections.iter().any(|s| matches!(s.status, Status::Failed(_)));
        return SeedVerdict {
            kind: if failed { "failed" } else { "not-run" },
            text: format!("not run: {}", reasons.join("; ")),
        };
    }
    let judged = rep + dif;
    let first_diff = verdicts.iter().find(|v| v.outcome == Outcome::Differs);
    let mut v = match (judged, first_diff) {
        (0, _) => SeedVerdict { kind: "measured", text: "measured; no published claim was judged".into() },
        (_, None) if inc > 0 => SeedVerdict {
            kind: "partial",
            text: format!("reproduced: {rep} of {judged} claims held, {inc} more inconclusive (within the spread)"),
        },
        (_, None) => SeedVerdict { kind: "reproduced", text: format!("reproduced: {rep} of {judged} claims held") },
        (_, Some(v)) => SeedVerdict {
            kind: if rep == 0 { "differs" } else { "partial" },
            text: format!(
                "differs: {dif} of {judged} claims did not hold (first: {} — {})",
                v.claim,
                clip(&v.detail, 160)
            ),
        },
    };
    if inc > 0 && first_diff.is_some() {
        v.text += &format!("; {inc} inconclusive");
    }
    if !goals.is_empty() {
        v.text += &format!("; schedlab's goals: {goals_met} of {} met", goals.len());
    }
    // Experiments of this seed that did not complete are named on the same line.
    let missing: Vec<String> = sections
        .iter()
        .filter_map(|s| match &s.status {
            Status::Completed => None,
            Status::Unsupported(r) => Some(format!("{} not run: {r}", s.experiment)),
            Status::Failed(r) => Some(format!("{} failed: {r}", s.experiment)),
            Status::Interrupted => Some(format!("{} interrupted", s.experiment)),
        })
        .chain(not_run.iter().map(|n| format!("{} not run: {}", n.experiment, n.reason)))
        .collect();
    if !missing.is_empty() {
        v.text += &format!("; also {}", missing.join("; "));
        if v.kind == "reproduced" || v.kind == "measured" {
            v.kind = "partial";
        }
    }
    v
}

/// At most `n` characters, with "…" when cut (the full text is in the verdict list below).
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>().trim_end())
    }
}

/// Render the whole report.
pub fn render(r: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>schedlab report</title>
<style>{CSS}</style></head>
<body><main>
<header><h1>schedlab report</h1>
<p class="lede">The five seed documents re-run on this machine: the published numbers beside ours, figures, and whether each claim held.</p>
"#
    );
    header(&mut out, &r.info);
    let by_seed = |id: &str| -> (Vec<&Section>, Vec<&NotRun>) {
        (r.sections.iter().filter(|s| s.seed == id).collect(), r.not_run.iter().filter(|n| n.seed == id).collect())
    };
    out.push_str(r#"<nav aria-label="seeds"><h2>Contents</h2><ol class="toc">"#);
    for seed in &SEEDS {
        let (s, n) = by_seed(seed.id);
        let v = seed_verdict(&s, &n);
        let _ = write!(
            out,
            r##"<li><a href="#seed-{id}">{id} — {t}</a> <span class="badge {k}">{kw}</span></li>"##,
            id = seed.id,
            t = escape(seed.title),
            k = v.kind,
            kw = v.kind.replace('-', " ")
        );
    }
    let others: Vec<&Section> = r.sections.iter().filter(|s| seeds::find(&s.seed).is_none()).collect();
    if !others.is_empty() {
        out.push_str(r##"<li><a href="#other">Other experiments</a></li>"##);
    }
    out.push_str("</ol></nav></header>\n");
    let mut fig_no = 0;
    for seed in &SEEDS {
        let (s, n) = by_seed(seed.id);
        seed_section(&mut out, seed, &s, &n, r.seed_numbers, &mut fig_no);
    }
    if !others.is_empty() {
        out.push_str(r#"<section class="seed" id="other" data-seed="other"><h2>Other experiments</h2>"#);
        for s in others {
            experiment(&mut out, s, &mut fig_no);
        }
        out.push_str("</section>");
    }
    let _ = write!(
        out,
        r#"<footer><p>Written by schedlab {v} ({c}) at {t}. Raw results: <code>results.json</code> in each run directory{db}.</p></footer>
</main></body></html>
"#,
        v = escape(&r.info.version),
        c = escape(&r.info.commit),
        t = escape(&r.info.created_utc),
        db = r
            .info
            .db_path
            .as_ref()
            .map(|p| format!(" and the database <code>{}</code>", escape(p)))
            .unwrap_or_default()
    );
    out
}

/// Write the report atomically (a reader never sees half a file), creating the directory.
pub fn write(path: &Path, html: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("html.tmp");
    std::fs::write(&tmp, html).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn header(out: &mut String, info: &RunInfo) {
    out.push_str(r#"<dl class="facts run">"#);
    let mut fact = |k: &str, v: &str| {
        if !v.is_empty() {
            let _ = write!(out, "<div><dt>{}</dt><dd>{}</dd></div>", escape(k), escape(v));
        }
    };
    fact("command", &info.command);
    fact("scale", &info.scale);
    fact("written", &info.created_utc);
    fact("schedlab", &format!("{} ({})", info.version, info.commit));
    if let Some(s) = &info.shard {
        fact("shard", &format!("{s} — this report shows only this shard's experiments"));
    }
    out.push_str("</dl>");
    if info.machine.is_object() {
        out.push_str("<h2 class=\"small\">This machine</h2>");
        machine(out, &info.machine);
    }
}

fn machine(out: &mut String, m: &Value) {
    let s = |k: &str| m[k].as_str().map(str::to_string).or_else(|| m[k].as_u64().map(|n| n.to_string()));
    let rt = match (m["rt_runtime_us"].as_i64(), m["rt_period_us"].as_i64()) {
        (Some(r), Some(p)) if r < 0 => format!("off ({r} of {p} µs)"),
        (Some(r), Some(p)) => format!("{r} of {p} µs"),
        _ => String::new(),
    };
    let cpus = match (s("cpus_online"), s("cpus_allowed")) {
        (Some(a), Some(b)) if a != b => format!("{a} online, {b} allowed"),
        (Some(a), _) => a,
        _ => String::new(),
    };
    let mem = m["memory_kb"].as_u64().map(|k| format!("{:.1} GiB", k as f64 / 1048576.0)).unwrap_or_default();
    out.push_str(r#"<dl class="facts machine">"#);
    for (k, v) in [
        ("host", s("hostname").unwrap_or_default()),
        ("kernel", s("kernel").unwrap_or_default()),
        ("CPU", s("cpu_model").unwrap_or_default()),
        ("CPUs", cpus),
        ("memory", mem),
        ("clocksource", s("clocksource").unwrap_or_default()),
        ("preemption", s("preempt").unwrap_or_default()),
        ("RT throttling", rt),
        ("root", m["is_root"].as_bool().map(|b| if b { "yes" } else { "no" }.to_string()).unwrap_or_default()),
    ] {
        if !v.is_empty() {
            let _ = write!(out, "<div><dt>{k}</dt><dd>{}</dd></div>", escape(&v));
        }
    }
    out.push_str("</dl>");
}

fn seed_section(
    out: &mut String,
    seed: &Seed,
    sections: &[&Section],
    not_run: &[&NotRun],
    numbers: &Value,
    fig_no: &mut usize,
) {
    let v = seed_verdict(sections, not_run);
    let _ = write!(
        out,
        r#"<section class="seed" id="seed-{id}" data-seed="{id}" data-verdict="{k}">
<h2><span class="seedno">{id}</span> {t}</h2>
<p class="verdict {k}"><strong>Verdict:</strong> {vt}</p>
<p class="source">{src}</p>
<p class="what"><strong>What schedlab runs:</strong> {what}</p>
<div class="published"><h3>Published</h3><p class="claim">{claim}</p>"#,
        id = seed.id,
        t = escape(seed.title),
        k = v.kind,
        vt = escape(&v.text),
        src = escape(seed.source),
        what = escape(seed.experiments),
        claim = escape(seed.claim)
    );
    for t in seeds::published_tables(seed, numbers) {
        table(out, &t, "published");
    }
    out.push_str("</div>");
    for s in sections {
        experiment(out, s, fig_no);
    }
    for n in not_run {
        let _ = write!(
            out,
            r#"<article class="experiment notrun" data-experiment="{e}"><h3>{t} <code>{e}</code></h3><p class="status not-run">not run: {r}</p></article>"#,
            e = escape(&n.experiment),
            t = escape(&n.title),
            r = escape(&n.reason)
        );
    }
    if sections.is_empty() && not_run.is_empty() {
        out.push_str(
            r#"<p class="status not-run">not run: no experiment for this seed is registered in this build — the published numbers above stand alone.</p>"#,
        );
    }
    out.push_str("</section>\n");
}

fn experiment(out: &mut String, s: &Section, fig_no: &mut usize) {
    let _ = write!(
        out,
        r#"<article class="experiment" data-experiment="{e}"><h3>{t} <code>{e}</code></h3>"#,
        e = escape(&s.experiment),
        t = escape(&s.title)
    );
    match &s.status {
        Status::Completed => {}
        Status::Unsupported(r) => {
            let _ = write!(out, r#"<p class="status not-run">not run: {}</p>"#, escape(r));
        }
        Status::Failed(r) => {
            let _ = write!(out, r#"<p class="status failed">failed: {}</p>"#, escape(r));
        }
        Status::Interrupted => out.push_str(r#"<p class="status not-run">interrupted before the end</p>"#),
    }
    if !s.summary.is_empty() {
        let _ = write!(out, r#"<p class="summary"><strong>What was run:</strong> {}</p>"#, escape(&s.summary));
    }
    if !s.scale.is_empty() {
        let _ = write!(out, r#"<p class="scale"><strong>Scale:</strong> {}</p>"#, escape(&s.scale));
    }
    if !s.verdicts.is_empty() {
        out.push_str(r#"<ul class="verdicts">"#);
        for v in &s.verdicts {
            let k = match v.outcome {
                Outcome::Reproduced | Outcome::Met | Outcome::Fact => "reproduced",
                Outcome::Differs | Outcome::NotMet => "differs",
                Outcome::Inconclusive => "partial",
            };
            let _ = write!(
                out,
                r#"<li class="{k}"><span class="badge {k}">{w}</span> <span class="kind">{kind}</span> {c} — <span class="detail">{d}</span></li>"#,
                w = v.outcome.word(),
                kind = v.kind.word().replace('_', " "),
                c = escape(&v.claim),
                d = escape(&v.detail)
            );
        }
        out.push_str("</ul>");
    }
    let (pvm, measured): (Vec<&Table>, Vec<&Table>) = s.tables.iter().partition(|t| is_predicted_vs_measured(t));
    for t in measured {
        table(out, t, "measured");
    }
    if !pvm.is_empty() {
        out.push_str(r#"<h4>Predicted (simulator) vs measured (live)</h4>"#);
        for t in pvm {
            table(out, t, "pvm");
        }
    }
    for f in &s.figures {
        *fig_no += 1;
        figure(out, f, &s.experiment, *fig_no);
    }
    if s.data["machine"].is_object() {
        out.push_str(r#"<h4 class="small">Measured on</h4>"#);
        machine(out, &s.data["machine"]);
    }
    if let Some(dir) = &s.run_dir {
        let _ = write!(out, r#"<p class="rundir">Results: <code>{}</code></p>"#, escape(dir));
    }
    out.push_str("</article>\n");
}

/// Tables that put the simulator's prediction beside a live measurement, by their wording
/// ("predicted", "simulated" in the title or a column).
fn is_predicted_vs_measured(t: &Table) -> bool {
    let has = |s: &str| {
        let s = s.to_lowercase();
        s.contains("predict") || s.contains("simulated")
    };
    has(&t.title) || t.columns.iter().any(|c| has(c))
}

fn table(out: &mut String, t: &Table, class: &str) {
    let _ = write!(out, r#"<div class="scroll"><table class="{class}">"#);
    if !t.title.is_empty() {
        let _ = write!(out, "<caption>{}</caption>", escape(&t.title));
    }
    out.push_str("<thead><tr>");
    for c in &t.columns {
        let _ = write!(out, r#"<th scope="col">{}</th>"#, escape(c));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for c in row {
            let cls = if looks_numeric(c) { r#" class="num""# } else { "" };
            let _ = write!(out, "<td{cls}>{}</td>", escape(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    if !t.note.is_empty() {
        let _ = write!(out, r#"<p class="note">{}</p>"#, escape(&t.note));
    }
}

fn looks_numeric(s: &str) -> bool {
    let s = s.trim().trim_start_matches(['−', '-', '+', '≈', '~']).trim_end_matches(['%', '×', 'x', '*', 's']);
    let s = s.replace([',', ' ', '±', '.'], "");
    s.chars().any(|c| c.is_ascii_digit()) && s.chars().all(|c| c.is_ascii_digit() || c == 'e')
}

fn figure(out: &mut String, f: &Figure, experiment: &str, n: usize) {
    let id = format!("fig{n}");
    let body = if f.svg.trim_start().starts_with("<svg") && !f.svg.to_lowercase().contains("<script") {
        uniquify_ids(&f.svg, &id)
    } else {
        format!(
            r#"<p class="status failed">figure {} is not a plain SVG document; see the run directory.</p>"#,
            escape(&f.file)
        )
    };
    let _ = write!(
        out,
        r#"<figure class="figure" id="{id}" data-experiment="{e}" data-file="{file}"><div class="svg">{body}</div><figcaption><strong>Figure {n}.</strong> {t}{sep}{c}</figcaption></figure>"#,
        e = escape(experiment),
        file = escape(&f.file),
        t = escape(&f.title),
        sep = if f.caption.is_empty() { "" } else { " — " },
        c = escape(&f.caption)
    );
}

/// Give every `id="x"` in an inline SVG (and its `url(#x)`/`href="#x"` uses) a per-figure
/// prefix: two Gantt charts on one page would otherwise share the id of their hatch pattern.
fn uniquify_ids(svg: &str, prefix: &str) -> String {
    let mut ids = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(" id=\"") {
        let after = &rest[i + 5..];
        let Some(end) = after.find('"') else { break };
        ids.push(after[..end].to_string());
        rest = &after[end..];
    }
    let mut s = svg.to_string();
    for id in ids {
        let new = format!("{prefix}-{id}");
        s = s
            .replace(&format!(" id=\"{id}\""), &format!(" id=\"{new}\""))
            .replace(&format!("url(#{id})"), &format!("url(#{new})"))
            .replace(&format!("href=\"#{id}\""), &format!("href=\"#{new}\""));
    }
    s
}

const CSS: &str = r#"
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--na:#6e7781}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:var(--bg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:64rem;margin:0 auto;padding:1rem}
h1{font-size:1.8rem;margin:.5rem 0}
h2{font-size:1.4rem;margin:1.2rem 0 .4rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h2.small,h4.small{font-size:1rem;border:0;margin:.8rem 0 .2rem}
h3{font-size:1.15rem;margin:1rem 0 .4rem}
h4{font-size:1rem;margin:.8rem 0 .3rem}
.lede{color:var(--muted)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;background:var(--soft);padding:0 .2em;border-radius:3px;word-break:break-all}
.seedno{display:inline-block;background:var(--fg);color:#fff;border-radius:4px;padding:0 .4em;margin-right:.3em;font-variant-numeric:tabular-nums}
.facts{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:.3rem 0;font-size:.9rem}
.facts div{display:flex;gap:.4rem}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
nav .toc{padding-left:1.2rem}
nav .toc li{margin:.15rem 0}
.badge{display:inline-block;font-size:.75rem;font-weight:600;border-radius:1em;padding:0 .6em;color:#fff;background:var(--na);white-space:nowrap;vertical-align:middle}
.badge.reproduced{background:var(--ok)}.badge.differs,.badge.failed{background:var(--bad)}.badge.partial{background:var(--warn)}.badge.measured{background:#0969da}
.verdicts .kind{font-size:.75rem;color:var(--na);text-transform:uppercase;letter-spacing:.03em}
.verdict{border-left:4px solid var(--na);background:var(--soft);padding:.4rem .7rem;margin:.5rem 0}
.verdict.reproduced{border-color:var(--ok)}.verdict.differs,.verdict.failed{border-color:var(--bad)}.verdict.partial{border-color:var(--warn)}.verdict.measured{border-color:#0969da}
.status{font-weight:600}.status.not-run{color:var(--na)}.status.failed{color:var(--bad)}
.source{color:var(--muted);font-size:.9rem;margin:.2rem 0}
.published{border:1px solid var(--line);border-radius:6px;padding:.2rem .8rem .6rem;margin:.6rem 0;background:#fbfcfd}
.claim{font-style:italic}
.experiment{border-top:1px dashed var(--line);margin-top:1rem}
.verdicts{padding-left:1.1rem}.verdicts li{margin:.2rem 0}
.detail{color:var(--muted)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.5rem 0;max-width:100%}
table{border-collapse:collapse;font-size:.88rem;min-width:50%}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid var(--line);padding:.25rem .5rem;vertical-align:top}
th{background:var(--soft);text-align:left;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.published th{background:#eef1f4}
table.pvm th{background:#fff8c5}
.note{font-size:.85rem;color:var(--muted);margin:.1rem 0 .6rem}
figure{margin:1rem 0}
figure .svg svg{width:100%;height:auto;max-width:760px;display:block;border:1px solid var(--line)}
figcaption{font-size:.9rem;color:var(--muted);margin-top:.3rem}
.rundir{font-size:.85rem;color:var(--muted)}
footer{margin-top:2rem;border-top:1px solid var(--line);color:var(--muted);font-size:.85rem}
@media (max-width:600px){body{font-size:15px}main{padding:.6rem}h1{font-size:1.45rem}h2{font-size:1.2rem}table{font-size:.8rem}}
@media print{
 body{font-size:10pt}main{max-width:none;padding:0}nav{display:none}
 .seed{break-before:page}.seed:first-of-type{break-before:auto}
 figure,table,.verdict,.published{break-inside:avoid}
 .scroll{overflow:visible}table{font-size:8pt}
 .badge{color:#000;border:1px solid #000;background:none!important}
 a{color:inherit;text-decoration:none}
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{Figure, Table, Verdict};
    use crate::svg::{Gantt, GanttBar};
    use serde_json::json;

    fn numbers() -> Value {
        serde_json::from_str(include_str!("../../../data/seed_numbers.json")).unwrap()
    }

    fn gantt() -> String {
        Gantt {
            title: "g".into(),
            time_label: "ms".into(),
            lanes: vec!["CPU0".into()],
            bars: vec![GanttBar { lane: 0, start: 0.0, end: 5.0, label: "P1".into(), colour_key: 0 }],
            ..Gantt::default()
        }
        .to_svg()
    }

    fn section(seed: &str, name: &str) -> Section {
        let mut s = Section::new(name, seed, "A <test> experiment");
        s.summary = "three runs".into();
        let mut t = Table::new("Ours", &["queue", "ops"]);
        t.row(vec!["delta".into(), "12".into()]);
        s.tables.push(t);
        let mut p = Table::new("Sim vs live", &["weight", "predicted share", "measured share"]);
        p.row(vec!["1".into(), "0.05".into(), "0.06".into()]);
        s.tables.push(p);
        s.figures.push(Figure { title: "Gantt".into(), file: "g.svg".into(), svg: gantt(), caption: "cap".into() });
        s.figures.push(Figure { title: "Gantt 2".into(), file: "g2.svg".into(), svg: gantt(), caption: String::new() });
        s.verdicts.push(Verdict::seed_claim("delta does less work", true, "12 vs 100 ops"));
        s.data = json!({"machine": {"hostname": "box", "kernel": "6.18", "cpus_online": 2, "cpus_allowed": 2}});
        s.run_dir = Some("results/x/1".into());
        s
    }

    fn report(sections: &[Section], not_run: &[NotRun]) -> String {
        let n = numbers();
        render(&Report {
            info: RunInfo {
                command: "schedlab reproduce".into(),
                machine: json!({"hostname": "box"}),
                ..Default::default()
            },
            sections,
            not_run,
            seed_numbers: &n,
        })
    }

    #[test]
    fn every_seed_has_a_section_even_with_nothing_run() {
        let html = report(&[], &[]);
        for s in &SEEDS {
            assert!(html.contains(&format!(r#"id="seed-{}""#, s.id)), "seed {}", s.id);
        }
        assert_eq!(html.matches("not run: no experiment for this seed is registered").count(), 10); // verdict + note
        assert!(html.contains("9.77"), "published Table 1 average");
        assert!(!html.contains("<script"));
        assert!(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("@import"));
    }

    #[test]
    fn a_run_section_shows_tables_figures_verdicts_and_machine() {
        let html = report(&[section("004", "wrr")], &[]);
        let seed = &html[html.find(r#"id="seed-004""#).unwrap()..];
        assert!(seed.contains("A &lt;test&gt; experiment"));
        assert!(seed.contains("reproduced: 1 of 1 claims held"));
        assert!(seed.contains("Predicted (simulator) vs measured"));
        assert!(seed.contains(r#"<td class="num">12</td>"#));
        assert_eq!(seed.matches("<figure").count(), 2);
        // Both Gantt charts had a pattern id "idle"; they must not collide on one page.
        assert!(seed.contains(r#"id="fig1-idle""#) && seed.contains(r#"id="fig2-idle""#));
        assert!(seed.contains("url(#fig2-idle)"));
        assert!(seed.contains("<dt>host</dt><dd>box</dd>"));
        assert!(seed.contains("results/x/1"));
    }

    #[test]
    fn verdict_lines_say_what_happened() {
        let mut a = section("004", "wrr");
        let nr =
            NotRun { experiment: "x".into(), seed: "004".into(), title: "X".into(), reason: "in shard 2/2".into() };
        assert_eq!(seed_verdict(&[], &[&nr]).text, "not run: x: in shard 2/2");
        a.verdicts.push(Verdict::seed_claim("finish time ∝ weight", false, "w1 took 1.8× w20"));
        let v = seed_verdict(&[&a], &[]);
        assert_eq!(v.kind, "partial");
        assert!(v.text.contains("1 of 2") && v.text.contains("1.8×"));
        let mut u = section("001", "policies");
        u.status = Status::Unsupported("needs root".into());
        assert_eq!(seed_verdict(&[&u], &[]).text, "not run: policies: needs root");
        u.status = Status::Failed("boom".into());
        assert_eq!(seed_verdict(&[&u], &[]).kind, "failed");
        let mut m = section("001", "policies");
        m.verdicts.clear();
        assert_eq!(seed_verdict(&[&m], &[]).kind, "measured");
        m.verdicts.push(Verdict::seed_claim("c", false, "x".repeat(300)));
        assert!(seed_verdict(&[&m], &[]).text.ends_with(&format!("{}…)", "x".repeat(159))));
        let ok = section("000", "timers");
        let v = seed_verdict(&[&ok, &u], &[]);
        assert_eq!(v.kind, "partial");
        assert_eq!(v.text, "reproduced: 1 of 1 claims held; also policies failed: boom");
    }

    #[test]
    fn only_seed_claims_and_published_numbers_count_as_reproduced() {
        let mut a = section("002", "livelock");
        a.verdicts.push(Verdict::goal("napi delivers ≥ 90%", true, "96%"));
        a.verdicts.push(Verdict::goal("dispatcher ≤ 1% CPU", false, "3%"));
        a.verdicts.push(Verdict::calibration("model peak 4,700 pkt/s", true, "fitted"));
        a.verdicts.push(Verdict::identity("switches = 2 × fills", true, "by construction"));
        a.verdicts.push(Verdict::inconclusive(ClaimKind::SeedClaim, "delta uses less CPU", "0.514 vs 0.516"));
        let v = seed_verdict(&[&a], &[]);
        assert_eq!(v.kind, "partial");
        assert_eq!(
            v.text,
            "reproduced: 1 of 1 claims held, 1 more inconclusive (within the spread); schedlab's goals: 1 of 2 met"
        );
        let html = report(&[a], &[]);
        assert!(html.contains(r#"<span class="badge reproduced">fact</span> <span class="kind">identity</span>"#));
        assert!(html.contains(r#"<span class="badge differs">not met</span> <span class="kind">goal</span>"#));
    }

    #[test]
    fn unknown_seeds_go_to_other_and_numbers_align_right() {
        let html = report(&[section("xyz", "drill")], &[]);
        assert!(html.contains(r#"id="other""#));
        let mut sim = Table::new("Test 1", &["weight", "live fold", "simulated fold"]);
        sim.row(vec!["1".into(), "1".into(), "1".into()]);
        assert!(is_predicted_vs_measured(&sim) && !is_predicted_vs_measured(&Table::new("Ours", &["ops"])));
        assert!(looks_numeric("1,234.5") && looks_numeric("-3%") && looks_numeric("4.09×") && looks_numeric("12 ± 3"));
        assert!(!looks_numeric("delta") && !looks_numeric("SCHED_RR") && !looks_numeric("") && !looks_numeric("es"));
    }
}
