//! Hidden, test-only stand-ins for experiments (`reproduce --test-drill`): they sleep, poll the
//! stop flag and return a section with a table, a figure and a verdict, so the run loop, the
//! database and the report can be exercised in seconds. Each writes a file to the directory an
//! experiment keeps its work in as it goes. Their sections say they are drills.

use anyhow::bail;
use schedlab_lab::{Experiment, RunContext, Scale};
use schedlab_report::section::{Figure, Section, Status, Table, Verdict};
use schedlab_report::svg::{LineChart, Series};
use serde_json::json;
use std::time::{Duration, Instant};

enum Kind {
    Sleep(Duration),
    Fail,
    Panic,
    Unsupported,
}

pub struct Drill {
    name: &'static str,
    seed: &'static str,
    kind: Kind,
}

const SEEDS: [&str; 5] = ["000", "001", "002", "003", "004"];

/// The drills named by `spec`: a duration like 200ms, or fail, panic, unsupported.
pub fn experiments(spec: &[String]) -> anyhow::Result<Vec<Box<dyn Experiment>>> {
    let mut v: Vec<Box<dyn Experiment>> = Vec::new();
    for (i, s) in spec.iter().enumerate() {
        let kind = match s.as_str() {
            "fail" => Kind::Fail,
            "panic" => Kind::Panic,
            "unsupported" => Kind::Unsupported,
            d => match humantime::parse_duration(d) {
                Ok(d) => Kind::Sleep(d),
                Err(_) => schedlab_os::bail_usage!("--test-drill: '{d}' is not a duration, fail, panic or unsupported"),
            },
        };
        let name: &'static str = Box::leak(format!("drill-{}", i + 1).into_boxed_str());
        v.push(Box::new(Drill { name, seed: SEEDS[i % SEEDS.len()], kind }));
    }
    Ok(v)
}

impl Experiment for Drill {
    fn name(&self) -> &'static str {
        self.name
    }
    fn seed(&self) -> &'static str {
        self.seed
    }
    fn title(&self) -> &'static str {
        "Test drill (synthetic, not a measurement)"
    }
    fn scale_of(&self, _scale: Scale) -> String {
        "a drill: no scale".into()
    }
    fn estimate_s(&self, _scale: Scale) -> f64 {
        match self.kind {
            Kind::Sleep(d) => d.as_secs_f64(),
            _ => 0.0,
        }
    }
    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        // As an experiment keeps what it makes as it goes (validate's recordings).
        if let Some(keep) = &ctx.keep_dir {
            std::fs::create_dir_all(keep)?;
            std::fs::write(keep.join("started"), self.name)?;
        }
        let d = match self.kind {
            Kind::Sleep(d) => d,
            Kind::Fail => bail!("the drill was told to fail"),
            Kind::Panic => panic!("the drill was told to panic"),
            Kind::Unsupported => {
                return Ok(Section::unsupported(
                    self.name,
                    self.seed,
                    self.title(),
                    "the drill pretends a facility is missing",
                ))
            }
        };
        let t0 = Instant::now();
        while t0.elapsed() < d {
            if schedlab_os::signals::stop_requested() {
                let mut s = Section::new(self.name, self.seed, self.title());
                s.status = Status::Interrupted;
                return Ok(s);
            }
            ctx.progress.update(t0.elapsed().as_secs_f64() / d.as_secs_f64(), "sleeping");
            std::thread::sleep(Duration::from_millis(20).min(d.saturating_sub(t0.elapsed())));
        }
        let slept = t0.elapsed().as_secs_f64();
        let points: Vec<(f64, f64)> = (0..=10).map(|i| (i as f64, (i * i) as f64)).collect();
        let svg = LineChart {
            title: "Drill: y = x²".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series::new("x²", points.clone())],
            ..Default::default()
        }
        .to_svg();
        let mut s = Section::new(self.name, self.seed, self.title());
        s.summary = format!("A hidden test stand-in that slept {:.3} s; its numbers are synthetic.", d.as_secs_f64());
        let mut t = Table::new("Drill: asked vs slept", &["asked (s)", "slept (s)"]);
        t.row(vec![format!("{:.3}", d.as_secs_f64()), format!("{slept:.3}")]);
        s.tables.push(t);
        s.figures.push(Figure {
            title: "Drill figure".into(),
            file: "drill.svg".into(),
            svg,
            caption: "synthetic".into(),
        });
        s.verdicts.push(Verdict::goal(
            "a sleep lasts at least as long as asked",
            slept >= d.as_secs_f64(),
            format!("asked {:.3} s, slept {slept:.3} s", d.as_secs_f64()),
        ));
        s.parameters = json!({ "sleep_s": d.as_secs_f64() });
        s.results = json!({ "slept_s": slept, "asked_s": d.as_secs_f64(), "points": points });
        Ok(s)
    }
}
