//! `schedlab-work cpu|io|mixed|empty`: the tiny program seed 001's children exec (the code is
//! in crates/work; this file only makes it a binary beside `schedlab`).

#![forbid(unsafe_code)]

fn main() {
    std::process::exit(schedlab_work::command::main_with(std::env::args_os().skip(1)));
}
