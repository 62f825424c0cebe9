//! What the user asks the live WRR host to run: `WEIGHT:CMD` task specifications and the
//! checks that reject bad input (weight 0, weight out of range, empty or missing command)
//! before anything is started.

use anyhow::Result;

/// The seed's weight range (10 ms × 1..=20).
pub const SEED_MAX_WEIGHT: u32 = 20;
/// The widest range `--allow-wide-weights` permits.
pub const WIDE_MAX_WEIGHT: u32 = 10_000;

/// One task: a weight and the command line it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WrrTask {
    pub weight: u32,
    pub argv: Vec<String>,
}

impl WrrTask {
    /// Parse `WEIGHT:CMD ARGS...`. The command is split into words as a POSIX shell would
    /// (quotes and backslashes group words: `4:sh -c 'echo hi; sleep 1'` runs `sh` with two
    /// arguments), but nothing is expanded. Weights are checked against `max_weight`.
    pub fn parse(text: &str, max_weight: u32) -> Result<Self> {
        let Some((w, cmd)) = text.split_once(':') else {
            schedlab_os::bail_usage!("task '{text}' is not WEIGHT:CMD (e.g. 4:'schedlab workload crypt --forever')");
        };
        let weight: u32 = match w.trim().parse() {
            Ok(v) => v,
            Err(_) => schedlab_os::bail_usage!("task '{text}': weight '{}' is not a whole number", w.trim()),
        };
        check_weight(weight, max_weight)?;
        let Some(argv) = shlex::split(cmd) else {
            schedlab_os::bail_usage!("task '{text}': the command has an unterminated quote or a trailing backslash");
        };
        if argv.is_empty() {
            schedlab_os::bail_usage!("task '{text}' has no command after the weight");
        }
        Ok(WrrTask { weight, argv })
    }

    /// A short label for tables and charts: `w4 crypt`.
    pub fn label(&self) -> String {
        let prog = self.argv.first().map(|p| p.rsplit('/').next().unwrap_or(p)).unwrap_or("?");
        let word = if prog == "schedlab" && self.argv.len() > 2 { self.argv[2].as_str() } else { prog };
        format!("w{} {word}", self.weight)
    }

    /// The command line as one string, quoted so that parsing it again gives the same words.
    pub fn command(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str)).unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// Reject a weight outside 1..=max_weight, naming it.
pub fn check_weight(weight: u32, max_weight: u32) -> Result<()> {
    if weight == 0 {
        schedlab_os::bail_usage!("weight 0 is not allowed: weights start at 1 (a task's slice is quantum × weight)");
    }
    if weight > max_weight {
        if max_weight == SEED_MAX_WEIGHT {
            schedlab_os::bail_usage!(
                "weight {weight} is outside the seed's range 1..={SEED_MAX_WEIGHT}; pass --allow-wide-weights to \
                 allow up to {WIDE_MAX_WEIGHT}"
            );
        }
        schedlab_os::bail_usage!("weight {weight} is outside 1..={max_weight}");
    }
    Ok(())
}

/// Check a whole task list before anything starts: at least one task, every program found.
pub fn check_tasks(tasks: &[WrrTask]) -> Result<()> {
    if tasks.is_empty() {
        schedlab_os::bail_usage!(
            "no tasks: give at least one --task WEIGHT:CMD, e.g. --task 4:'schedlab workload crypt --forever'"
        );
    }
    for t in tasks {
        if let Err(e) = schedlab_os::child::resolve_program(std::path::Path::new(&t.argv[0])) {
            schedlab_os::bail_usage!("task '{}:{}': {e}", t.weight, t.command());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_with_the_value_named() {
        let t = WrrTask::parse("4:sleep 1", SEED_MAX_WEIGHT).unwrap();
        assert_eq!(t.weight, 4);
        assert_eq!(t.argv, vec!["sleep", "1"]);
        assert_eq!(t.label(), "w4 sleep");
        assert!(WrrTask::parse("0:sleep 1", 20).unwrap_err().to_string().contains("weight 0"));
        let e = WrrTask::parse("21:sleep 1", 20).unwrap_err().to_string();
        assert!(e.contains("21") && e.contains("--allow-wide-weights"), "{e}");
        assert!(WrrTask::parse("21:sleep 1", WIDE_MAX_WEIGHT).is_ok());
        assert!(WrrTask::parse("x:sleep", 20).unwrap_err().to_string().contains("'x'"));
        assert!(WrrTask::parse("3:", 20).unwrap_err().to_string().contains("no command"));
        assert!(WrrTask::parse("sleep", 20).is_err());
    }

    #[test]
    fn the_command_is_split_into_words_as_a_shell_would() {
        let t = WrrTask::parse("1:sh -c 'echo hi; sleep 1'", 20).unwrap();
        assert_eq!(t.argv, vec!["sh", "-c", "echo hi; sleep 1"]);
        assert_eq!(t.command(), "sh -c 'echo hi; sleep 1'");
        assert_eq!(WrrTask::parse(&format!("1:{}", t.command()), 20).unwrap().argv, t.argv, "round trip");
        let t = WrrTask::parse(r#"2:printf "%s\n" a\ b $HOME"#, 20).unwrap();
        assert_eq!(t.argv, vec!["printf", "%s\\n", "a b", "$HOME"], "quotes group, nothing expands");
        let e = WrrTask::parse("1:sh -c 'echo hi", 20).unwrap_err().to_string();
        assert!(e.contains("unterminated quote") && e.contains("'echo hi"), "{e}");
    }

    #[test]
    fn missing_programs_and_empty_lists_are_rejected() {
        assert!(check_tasks(&[]).unwrap_err().to_string().contains("no tasks"));
        let bad = WrrTask { weight: 1, argv: vec!["no-such-cmd-xyz".into()] };
        assert!(check_tasks(&[bad]).unwrap_err().to_string().contains("no-such-cmd-xyz"));
    }
}
