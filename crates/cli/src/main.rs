//! `schedlab`: the one binary, a thin layer over the libraries. Each area's commands live in
//! `cmd/<area>.rs` and do three things: parse the command line, call the `lab` function that
//! runs the experiment and returns its section, and hand the section to [`output::emit`]. The
//! signal lifecycle is here, once: commands that run experiments get the stop handler
//! (SIGINT/SIGTERM/SIGHUP set a flag their loops poll), and a command that was stopped exits
//! the way the signal would have ended it (130 for Ctrl-C, 143 for SIGTERM).

#![forbid(unsafe_code)]

mod cmd;
mod host;
mod output;
mod paths;
mod progress;
mod unfinished;
mod units;
mod workload_file;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// What the exit status means, for `--help` and for scripts.
const EXIT_STATUS: &str = "\
Exit status:
  0    success
  1    the run failed: the machine refused it (no root, a CPU held by another run) or something
       broke while it ran (an experiment or a task failed); the error is one line on stderr
  2    the command line is wrong (an unknown option, a value out of range, a file that cannot be
       read or written, options that contradict each other); nothing was started
  130  stopped by Ctrl-C (SIGINT), 143 by SIGTERM, 129 by SIGHUP: what finished was kept and
       everything changed was restored";

/// A laboratory for operating-system scheduling on Linux.
///
/// Take a scheduling mechanism — a CPU policy, a timer queue, a receive strategy, a pinned
/// real-time worker pool — simulate it deterministically, run it for real, measure both, and
/// read the result next to the published numbers of the seed papers.
///
/// Start with `schedlab reproduce --quick` (a few minutes), then explore one area, e.g.
/// `schedlab timers --help`. Live experiments that change scheduling policies, IRQ masks or
/// cgroups need root and restore everything they change on exit.
#[derive(Parser)]
#[command(
    name = "schedlab",
    propagate_version = true,
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Live runs: go on even when another schedlab run holds a CPU this one needs (each run
    /// locks the CPUs it pins work to; sharing one halves both runs' CPU and spoils both
    /// measurements). Without it, such a run is refused up front, naming the holder.
    #[arg(long, global = true)]
    force: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run every seed experiment and write results and the report.
    Reproduce(cmd::reproduce::Args),
    /// Timer queues (seed 000): control list, delta list, heap, timing wheel.
    Timers(cmd::timers::Args),
    /// The scheduling simulator (seeds 003, 004): compare policies on a workload.
    Sim(cmd::sim::Args),
    /// Live Linux policy benchmark (seed 001): processes under OTHER/FIFO/RR/...
    Policies(cmd::policies::Args),
    /// Task manager for exclusive computation (seed 003): pinned RT workers, IRQ steering.
    Taskman(cmd::taskman::Args),
    /// Live weighted round robin (seed 004): a user-space dispatcher for real processes.
    Wrr(cmd::wrr::Args),
    /// Receive livelock (seed 002): interrupt, polling, hybrid and NAPI receive paths.
    Livelock(cmd::livelock::Args),
    /// Record the Linux scheduler's decisions for a program, and turn traces into workloads.
    Trace(cmd::trace::Args),
    /// Check the simulator's Linux model against live traces of small mixes (needs root).
    Validate(cmd::validate::Args),
    /// Built-in workload programs that experiments run as child processes.
    Workload(cmd::workload::Args),
    /// The results database: list, show, compare, export and merge past runs.
    Results(cmd::results::Args),
    /// Undo what live runs killed with SIGKILL left behind (children, cgroups, trace
    /// instances, IRQ masks), from the journal.
    Restore(cmd::restore::Args),
    /// Print a completion script for bash, zsh, fish, elvish or PowerShell.
    Completions(cmd::shell::CompletionsArgs),
    /// Print the manual page, or write one per command with --out DIR.
    Man(cmd::shell::ManArgs),
}

impl Command {
    /// Whether the command polls the stop flag (and so must install the handler instead of
    /// letting SIGINT end it at once). Commands that never poll keep the default dispositions.
    fn polls_stop(&self) -> bool {
        match self {
            Command::Sim(_) | Command::Results(_) | Command::Restore(_) | Command::Completions(_) | Command::Man(_) => {
                false
            }
            Command::Workload(a) => a.polls_stop(),
            _ => true,
        }
    }

    /// Whether the command changes the machine, and so first undoes what runs killed without
    /// cleaning up left (the journal), so the machine heals itself on the next live use.
    fn changes_machine(&self) -> bool {
        match self {
            Command::Reproduce(_) => true,
            Command::Timers(a) => a.changes_machine(),
            Command::Policies(a) => a.changes_machine(),
            Command::Taskman(a) => a.changes_machine(),
            Command::Wrr(a) => a.changes_machine(),
            Command::Livelock(a) => a.changes_machine(),
            Command::Trace(a) => a.changes_machine(),
            Command::Validate(a) => a.changes_machine(),
            Command::Sim(_)
            | Command::Workload(_)
            | Command::Results(_)
            | Command::Restore(_)
            | Command::Completions(_)
            | Command::Man(_) => false,
        }
    }
}

/// The command-line definition, with `--version` naming the commit the binary was built from.
fn command_line() -> clap::Command {
    // clap takes a 'static version; the line lives as long as the process anyway.
    let version: &'static str =
        Box::leak(format!("{} ({})", schedlab_report::VERSION, schedlab_report::GIT_COMMIT).into_boxed_str());
    Cli::command().version(version)
}

fn main() {
    output::mark_start();
    let cli = Cli::from_arg_matches(&command_line().get_matches()).unwrap_or_else(|e| e.exit());
    if !cli.command.polls_stop() && !cli.command.changes_machine() {
        // Nothing to clean up: `schedlab results list | head` ends quietly, like any filter.
        schedlab_os::signals::default_sigpipe();
    }
    if cli.command.polls_stop() {
        schedlab_os::signals::install_stop_handler();
    }
    schedlab_os::cpulock::set_force(cli.force);
    if cli.command.changes_machine() {
        cmd::restore::heal_before_live_run();
        cmd::restore::start_guardian();
    }
    // A workload is a child its parent stops with a signal when done with it: that is its
    // normal end, and it changed nothing, so it ends without the notice.
    let quiet_stop = matches!(cli.command, Command::Workload(_));
    let result = match cli.command {
        Command::Reproduce(a) => cmd::reproduce::run(a),
        Command::Timers(a) => cmd::timers::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Policies(a) => cmd::policies::run(a),
        Command::Taskman(a) => cmd::taskman::run(a),
        Command::Wrr(a) => cmd::wrr::run(a),
        Command::Livelock(a) => cmd::livelock::run(a),
        Command::Trace(a) => cmd::trace::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Workload(a) => cmd::workload::run(a),
        Command::Results(a) => cmd::results::run(a),
        Command::Restore(a) => cmd::restore::run(a),
        Command::Completions(a) => cmd::shell::completions(a, command_line()),
        Command::Man(a) => cmd::shell::man(a, command_line()),
    };
    if schedlab_os::signals::stop_requested() {
        if let Err(e) = &result {
            eprintln!("schedlab: {}", output::one_sentence(e));
        }
        if !quiet_stop {
            eprintln!("schedlab: stopped by a signal; what finished was kept and everything changed was restored");
        }
        schedlab_os::signals::exit_like_signal();
    }
    if let Err(e) = result {
        eprintln!("schedlab: {}", output::one_sentence(&e));
        let usage = e.chain().any(schedlab_os::usage::is_usage);
        std::process::exit(if usage { 2 } else { 1 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's options have distinct names and ids, flattened groups (the output
    /// options every command shares) included. clap checks this only in debug builds; a clash
    /// in a release build surfaces as a panic when the command runs.
    #[test]
    fn no_two_options_of_a_command_share_a_name() {
        fn walk(cmd: &clap::Command, path: &str, clashes: &mut Vec<String>) {
            let mut ids = std::collections::HashSet::new();
            let mut longs = std::collections::HashSet::new();
            for a in cmd.get_arguments() {
                if !ids.insert(a.get_id().to_string()) {
                    clashes.push(format!("{path}: id {}", a.get_id()));
                }
                if let Some(l) = a.get_long() {
                    if !longs.insert(l.to_string()) {
                        clashes.push(format!("{path}: --{l}"));
                    }
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), clashes);
            }
        }
        let mut cmd = command_line();
        cmd.build();
        let mut clashes = Vec::new();
        walk(&cmd, "schedlab", &mut clashes);
        assert!(clashes.is_empty(), "options that share a name: {clashes:?}");
    }
}
