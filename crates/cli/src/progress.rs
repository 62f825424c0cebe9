//! Progress on stderr, for `schedlab reproduce` and every single command alike: an overall bar
//! and one bar per experiment with an estimate of the time left (indicatif) when stderr is a
//! terminal; otherwise plain lines — one when an experiment starts, one per new step it
//! reports, one when it ends. The estimate starts from `Experiment::estimate_s` and is
//! corrected by how fast the finished experiments actually ran. A single command uses a
//! [`CommandProgress`], a one-experiment [`Reporter`].

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use schedlab_lab::Progress;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the estimate is computed from.
#[derive(Debug, Clone, Default)]
struct State {
    /// Estimated seconds of each experiment, in run order.
    estimates: Vec<f64>,
    /// Actual seconds of the finished ones.
    actual: Vec<f64>,
    /// The running one: index, start, last reported fraction.
    current: Option<(usize, Instant, f64)>,
}

impl State {
    /// Seconds left: the running experiment's remainder (from its reported fraction, or its
    /// estimate) plus the estimates of those not started, all scaled by how the finished
    /// experiments compared with their estimates.
    fn left(&self) -> f64 {
        let done = self.actual.len();
        let est_done: f64 = self.estimates[..done].iter().sum();
        let act_done: f64 = self.actual.iter().sum();
        let speed = if est_done > 1.0 { (act_done / est_done).clamp(0.2, 5.0) } else { 1.0 };
        let next = self.current.map_or(done, |(i, ..)| i + 1);
        let rest: f64 = self.estimates.get(next..).map_or(0.0, |r| r.iter().sum());
        let current = match self.current {
            None => 0.0,
            Some((i, t0, f)) => {
                let elapsed = t0.elapsed().as_secs_f64();
                if f > 0.02 {
                    elapsed * (1.0 - f) / f
                } else {
                    (self.estimates[i] * speed - elapsed).max(0.0)
                }
            }
        };
        current + rest * speed
    }

    /// Fraction of all estimated work done.
    fn fraction(&self) -> f64 {
        let total: f64 = self.estimates.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        let done: f64 = self.estimates[..self.actual.len()].iter().sum();
        let cur = self.current.map_or(0.0, |(i, t0, f)| {
            let by_time = (t0.elapsed().as_secs_f64() / self.estimates[i].max(0.1)).min(0.95);
            self.estimates[i] * if f > 0.0 { f } else { by_time }
        });
        ((done + cur) / total).clamp(0.0, 1.0)
    }
}

/// Progress of a whole `reproduce` run.
pub struct Reporter {
    names: Vec<String>,
    state: Arc<Mutex<State>>,
    bars: Option<Bars>,
}

struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

const SCALE: u64 = 1000;

impl Reporter {
    /// Progress for these experiments (name, estimated seconds). Bars are drawn only when
    /// stderr is a terminal.
    pub fn new(experiments: &[(String, f64)]) -> Self {
        let state = Arc::new(Mutex::new(State {
            estimates: experiments.iter().map(|e| e.1.max(0.0)).collect(),
            ..Default::default()
        }));
        let names = experiments.iter().map(|e| e.0.clone()).collect();
        let bars = std::io::stderr().is_terminal().then(|| Bars::new(experiments.len(), state.clone()));
        Reporter { names, state, bars }
    }

    /// Experiment `i` starts; the returned handle receives its progress.
    pub fn start(&self, i: usize, title: &str) -> ExperimentProgress {
        self.state.lock().unwrap().current = Some((i, Instant::now(), 0.0));
        let n = self.names.len();
        let bar = match &self.bars {
            Some(b) => {
                let bar = b.multi.add(ProgressBar::new(SCALE));
                bar.set_style(
                    ProgressStyle::with_template("{prefix:>12.bold} [{bar:24.green/white}] {percent:>3}% {wide_msg}")
                        .unwrap()
                        .progress_chars("=> "),
                );
                bar.set_prefix(self.names[i].clone());
                bar.set_message(title.to_string());
                bar.enable_steady_tick(Duration::from_millis(250));
                Some(bar)
            }
            None => {
                let est = self.state.lock().unwrap().estimates[i];
                eprintln!("schedlab: [{}/{n}] {} — {title} (about {})", i + 1, self.names[i], short(est));
                None
            }
        };
        ExperimentProgress { bar, state: self.state.clone(), last: Mutex::new(String::new()) }
    }

    /// Experiment `i` ended with this status word.
    pub fn finish(&self, i: usize, progress: ExperimentProgress, status: &str) {
        let left = {
            let mut st = self.state.lock().unwrap();
            let t = st.current.take().map_or(0.0, |(_, t0, _)| t0.elapsed().as_secs_f64());
            st.actual.push(t);
            st.left()
        };
        let took = self.state.lock().unwrap().actual.last().copied().unwrap_or(0.0);
        match (progress.bar, &self.bars) {
            (Some(bar), Some(b)) => {
                bar.finish_and_clear();
                b.multi.remove(&bar);
                let _ = b.multi.println(format!("{:>12} {status} in {}", self.names[i], short(took)));
            }
            _ => {
                let more =
                    if i + 1 < self.names.len() { format!("; about {} left", short(left)) } else { String::new() };
                eprintln!("schedlab: {} {status} in {}{more}", self.names[i], short(took));
            }
        }
    }

    /// All done (or stopped): remove the bars.
    pub fn done(mut self) {
        if let Some(mut b) = self.bars.take() {
            b.stop.store(true, Ordering::SeqCst);
            if let Some(t) = b.ticker.take() {
                let _ = t.join();
            }
            b.overall.finish_and_clear();
        }
    }
}

impl Bars {
    fn new(n: usize, state: Arc<Mutex<State>>) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let overall = multi.add(ProgressBar::new(SCALE));
        overall.set_style(
            ProgressStyle::with_template("{prefix:>12.bold} [{bar:24.cyan/blue}] {percent:>3}% {wide_msg}")
                .unwrap()
                .progress_chars("=> "),
        );
        overall.set_prefix("reproduce");
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let ticker = {
            let (overall, stop) = (overall.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let (frac, left, done) = {
                        let st = state.lock().unwrap();
                        (st.fraction(), st.left(), st.actual.len())
                    };
                    overall.set_position((frac * SCALE as f64) as u64);
                    overall.set_message(format!(
                        "{done}/{n} done · {} · ~{} left",
                        short(started.elapsed().as_secs_f64()),
                        short(left)
                    ));
                    std::thread::sleep(Duration::from_millis(250));
                }
            })
        };
        Bars { multi, overall, stop, ticker: Some(ticker) }
    }
}

/// Receives one experiment's progress.
pub struct ExperimentProgress {
    bar: Option<ProgressBar>,
    state: Arc<Mutex<State>>,
    /// The last step printed as a line (no bar): repeats are not printed again.
    last: Mutex<String>,
}

impl Progress for ExperimentProgress {
    fn update(&self, fraction: f64, what: &str) {
        let f = if fraction.is_finite() { fraction.clamp(0.0, 1.0) } else { 0.0 };
        if let Some((_, _, cur)) = self.state.lock().unwrap().current.as_mut() {
            *cur = f;
        }
        match &self.bar {
            Some(bar) => {
                bar.set_position((f * SCALE as f64) as u64);
                bar.set_message(what.to_string());
            }
            None => {
                let mut last = self.last.lock().unwrap();
                if !what.is_empty() && *last != what {
                    eprintln!("schedlab:   {what}");
                    *last = what.to_string();
                }
            }
        }
    }
}

/// The progress of a single command (one experiment).
pub struct CommandProgress {
    reporter: Option<Reporter>,
    handle: Option<ExperimentProgress>,
}

impl CommandProgress {
    /// Start showing progress of `name` (estimated `estimate_s` seconds) on stderr.
    pub fn start(name: &str, title: &str, estimate_s: f64) -> Self {
        let reporter = Reporter::new(&[(name.to_string(), estimate_s)]);
        let handle = reporter.start(0, title);
        CommandProgress { reporter: Some(reporter), handle: Some(handle) }
    }
}

impl Progress for CommandProgress {
    fn update(&self, fraction: f64, what: &str) {
        if let Some(h) = &self.handle {
            h.update(fraction, what);
        }
    }
}

impl Drop for CommandProgress {
    fn drop(&mut self) {
        if let (Some(r), Some(h)) = (self.reporter.take(), self.handle.take()) {
            let word = if std::thread::panicking() { "failed" } else { "ended" };
            r.finish(0, h, word);
            r.done();
        }
    }
}

/// "0.4 s", "42 s", "3 min 05 s", "1 h 02 min".
pub fn short(seconds: f64) -> String {
    if seconds < 9.95 {
        return format!("{:.1} s", seconds.max(0.0));
    }
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_before_anything_ran_is_the_sum_of_estimates() {
        let st = State { estimates: vec![10.0, 20.0, 30.0], ..Default::default() };
        assert_eq!(st.left(), 60.0);
        assert_eq!(st.fraction(), 0.0);
    }

    #[test]
    fn estimate_is_scaled_by_observed_speed() {
        // The first experiment took twice its estimate: the rest probably will too.
        let st = State { estimates: vec![10.0, 20.0, 30.0], actual: vec![20.0], current: None };
        assert_eq!(st.left(), 100.0);
        assert!((st.fraction() - 10.0 / 60.0).abs() < 1e-9);
    }

    #[test]
    fn reported_fraction_drives_the_running_experiment() {
        let t0 = Instant::now() - Duration::from_secs(10);
        let st = State { estimates: vec![100.0, 20.0], actual: vec![], current: Some((0, t0, 0.5)) };
        // 10 s for half: 10 s more, plus the 20 s not started.
        assert!((st.left() - 30.0).abs() < 0.5, "{}", st.left());
        assert!((st.fraction() - 50.0 / 120.0).abs() < 1e-9);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(short(42.4), "42 s");
        assert_eq!(short(185.0), "3 min 05 s");
        assert_eq!(short(3720.0), "1 h 02 min");
        assert_eq!(short(-3.0), "0.0 s");
        assert_eq!(short(0.44), "0.4 s");
    }
}
