//! What a shell and `man` get: completion scripts that the shells accept and that know every
//! command, one manual page per command, and a release binary shipped without debug info.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The top-level commands, from `--help`'s command list.
fn commands() -> Vec<String> {
    let help = stdout_of(&["--help"]);
    let list = help.split("Commands:").nth(1).unwrap().split("Options:").next().unwrap();
    let names: Vec<String> = list
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 14, "too few commands in --help: {names:?}");
    names
}

#[test]
fn bash_loads_the_completion_script_and_completes_every_command() {
    let script = stdout_of(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("schedlab.bash");
    std::fs::write(&file, &script).unwrap();
    // Ask bash itself what `schedlab <TAB>` offers.
    let probe = format!(
        "source {}; COMP_WORDS=(schedlab ''); COMP_CWORD=1; COMP_LINE='schedlab '; COMP_POINT=9; \
         _schedlab schedlab '' schedlab; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert!(out.status.success(), "bash refused the script: {}", String::from_utf8_lossy(&out.stderr));
    let offered = String::from_utf8_lossy(&out.stdout);
    for c in commands() {
        assert!(offered.lines().any(|l| l == c), "`schedlab <TAB>` does not offer {c}: {offered}");
    }
}

#[test]
fn zsh_and_fish_scripts_name_every_command() {
    let commands = commands();
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        for c in &commands {
            assert!(script.contains(c.as_str()), "the {shell} script lacks {c}");
        }
    }
    let out = Command::new(BIN).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn man_writes_a_page_for_every_command_and_subcommand() {
    let top = stdout_of(&["man"]);
    assert!(top.contains(".TH schedlab 1"), "{}", &top[..top.len().min(300)]);
    assert!(top.contains(env!("CARGO_PKG_VERSION")), "the page names no version");
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    stdout_of(&["man", "--out", pages.to_str().unwrap()]);
    for c in commands() {
        let page = pages.join(format!("schedlab-{c}.1"));
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(text.contains(&format!(".TH schedlab-{c} 1")), "{} has no title line", page.display());
    }
    let run = std::fs::read_to_string(pages.join("schedlab-sim-run.1")).expect("a page for a subcommand");
    assert!(run.contains("policy"), "the sim run page does not describe --policy");
}

#[test]
fn the_release_binary_carries_no_debug_info() {
    if !schedlab_os::test_gate::require(
        "the stripped binary",
        !cfg!(debug_assertions),
        "a debug build keeps debug info by design; run the tests with --release",
    ) {
        return;
    }
    let bytes = std::fs::read(BIN).unwrap();
    let sections = elf64_section_names(&bytes);
    assert!(sections.iter().any(|s| s == ".text"), "the section table was not read: {sections:?}");
    let debug: Vec<&String> = sections.iter().filter(|s| s.starts_with(".debug_")).collect();
    assert!(debug.is_empty(), "{BIN} ({} bytes) still has {debug:?}", bytes.len());
    assert!(sections.iter().any(|s| s == ".symtab"), "symbol names are kept so that backtraces name functions");
}

/// The section names of a little-endian ELF64 file, from its section header table.
fn elf64_section_names(b: &[u8]) -> Vec<String> {
    assert_eq!(&b[..5], b"\x7fELF\x02", "not an ELF64 file");
    let u16_at = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28), u16_at(0x3A), u16_at(0x3C), u16_at(0x3E));
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(header(shstrndx) + 0x18);
    (0..shnum)
        .map(|i| {
            let start = strtab + u32_at(header(i));
            let end = start + b[start..].iter().position(|&c| c == 0).unwrap();
            String::from_utf8_lossy(&b[start..end]).into_owned()
        })
        .collect()
}
