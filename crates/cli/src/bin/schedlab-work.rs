//! `schedlab-work cpu|io|mixed|empty`: the tiny program seed 001's children exec (the code is
//! in crates/work; this file only makes it a binary beside `schedlab`).

#![forbid(unsafe_code)]

fn main() {
    // Rust's runtime ignores SIGPIPE; the seed's C programs kept every default disposition,
    // and so do the children (schedlab_os is the crate that may make the call; only this one
    // function of it is linked).
    schedlab_os::signals::default_sigpipe();
    std::process::exit(schedlab_work::command::main_with(std::env::args_os().skip(1)));
}
