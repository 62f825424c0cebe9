//! Repeats that were not the case alone: when other tasks (the VM's agent, kernel threads) took
//! a noticeable part of the case's CPUs, the case's verdict says so. They are replayed too, so
//! the comparison stays fair, but such a repeat measures the case beside a guest, and a
//! metric it alone puts outside the tolerance may say more about the guest than the model.

use super::measure::Interference;

/// Others' share of the case's CPUs in a repeat from which the verdict names them.
pub const BUSY_SHARE: f64 = 0.02;

/// "repeat 1: others took 6.2% of the case's CPUs (tokio-rt-worker-69 504 ms); …" for every
/// repeat at or above [`BUSY_SHARE`], or None. `runs`: (repeat from 0, what ran beside it).
pub fn note<'a>(runs: impl IntoIterator<Item = (usize, &'a Interference)>) -> Option<String> {
    let parts: Vec<String> = runs
        .into_iter()
        .filter(|(_, i)| i.share >= BUSY_SHARE)
        .map(|(repeat, i)| {
            let top = i.top.first().map_or(String::new(), |(who, ns)| format!(" ({who} {:.0} ms)", *ns as f64 / 1e6));
            format!("repeat {}: others took {:.1}% of the case's CPUs{top}", repeat + 1, 100.0 * i.share)
        })
        .collect();
    (!parts.is_empty()).then(|| format!("{} — replayed, but not the case alone", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(share: f64, top: &[(&str, u64)]) -> Interference {
        Interference { share, switch_ins_per_s: 0.0, top: top.iter().map(|(w, ns)| (w.to_string(), *ns)).collect() }
    }

    #[test]
    fn only_repeats_past_the_threshold_are_named_with_the_busiest_guest() {
        let quiet = busy(0.0054, &[("tokio-rt-worker-69", 14_391_000)]);
        let loud = busy(0.0615, &[("tokio-rt-worker-69", 504_393_000), ("kdamond.0-77", 22_374_000)]);
        assert_eq!(note([(0, &quiet), (2, &quiet)]), None);
        assert_eq!(
            note([(0, &loud), (1, &quiet)]).as_deref(),
            Some(
                "repeat 1: others took 6.2% of the case's CPUs (tokio-rt-worker-69 504 ms) — replayed, but not the \
                 case alone"
            )
        );
        let two = note([(0, &loud), (2, &busy(0.02, &[]))]).unwrap();
        assert!(
            two.starts_with("repeat 1: ") && two.contains("; repeat 3: others took 2.0% of the case's CPUs —"),
            "{two}"
        );
    }
}
