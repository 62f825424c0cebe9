//! Output paths checked when the command line is parsed, before anything runs: a results
//! directory or output file that cannot be written is refused up front (exit 2) instead of after
//! a long experiment whose results would then be lost.
//!
//! Checking means trying: missing directories are created, a probe file is written in the
//! innermost and removed, and the directories this check created are removed again, so a
//! command refused later leaves nothing behind. Permission bits alone would not do: root passes
//! every `access(2)` check, yet cannot write into `/proc`.

use std::path::{Path, PathBuf};

/// A directory that exists or could be created, and can be written to (clap value parser).
pub fn writable_dir(s: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(s);
    probe_dir(&dir)?;
    Ok(dir)
}

/// A file whose directory is writable and which is not a directory (clap value parser). The
/// file itself is not created.
pub fn writable_file(s: &str) -> Result<PathBuf, String> {
    let file = PathBuf::from(s);
    if s.is_empty() || file.is_dir() {
        return Err(format!("{s:?} is a directory, not a file name"));
    }
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    probe_dir(parent)?;
    Ok(file)
}

fn probe_dir(dir: &Path) -> Result<(), String> {
    // Another schedlab started in the same directory may be probing the same path and remove a
    // directory it created between our creating and our writing: try again a few times.
    let mut last = Ok(());
    for _ in 0..5 {
        last = probe_once(dir);
        match &last {
            Err((kind, _)) if *kind == std::io::ErrorKind::NotFound => continue,
            _ => break,
        }
    }
    last.map_err(|(_, message)| message)
}

/// Create what is missing of `dir`, write and remove a probe file in it, and remove again the
/// directories this call created. One that another process's probe is in at that moment cannot
/// be removed and stays, empty.
fn probe_once(dir: &Path) -> Result<(), (std::io::ErrorKind, String)> {
    // The directories that do not exist yet, outermost first.
    let mut missing: Vec<&Path> = dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).collect();
    missing.reverse();
    let mut created = Vec::new();
    let mut result = Ok(());
    for d in missing {
        match std::fs::create_dir(d) {
            Ok(()) => created.push(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                result = Err((e.kind(), format!("cannot create directory {}: {e}", dir.display())));
                break;
            }
        }
    }
    if result.is_ok() {
        let probe = dir.join(format!(".schedlab-write-probe-{}", std::process::id()));
        result = std::fs::File::create(&probe)
            .map(|_| ())
            .map_err(|e| (e.kind(), format!("cannot write in {}: {e}", dir.display())));
        let _ = std::fs::remove_file(&probe);
    }
    for d in created.into_iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_of_one_new_directory_at_once_all_succeed_and_leave_nothing() {
        // Tests of the command line run schedlab side by side in one directory, each probing
        // the default `results`: one removing the directory it created must not fail another.
        let d = tempfile::tempdir().unwrap();
        let new = d.path().join("results");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = new.to_str().unwrap().to_string();
                std::thread::spawn(move || (0..200).all(|_| writable_dir(&path).is_ok()))
            })
            .collect();
        assert!(threads.into_iter().all(|t| t.join().unwrap()), "a probe failed");
        // A directory one probe created while another's probe file was in it cannot be removed
        // by the first, and the second did not create it: at most it stays, empty.
        assert!(!new.exists() || std::fs::read_dir(&new).unwrap().next().is_none(), "a probe file stayed");
    }

    #[test]
    fn a_creatable_directory_is_accepted_and_left_as_it_was_and_an_unwritable_one_refused() {
        let d = tempfile::tempdir().unwrap();
        let new = d.path().join("a/b");
        assert_eq!(writable_dir(new.to_str().unwrap()).unwrap(), new);
        assert!(!d.path().join("a").exists(), "the check left the directories it created");
        assert_eq!(writable_dir(d.path().to_str().unwrap()).unwrap(), d.path());
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none(), "the probe file stayed");
        let e = writable_dir("/proc/schedlab-nope").unwrap_err();
        assert!(e.contains("/proc/schedlab-nope"), "{e}");
    }

    #[test]
    fn a_file_needs_a_writable_directory_and_must_not_be_one() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x/g.svg");
        assert_eq!(writable_file(f.to_str().unwrap()).unwrap(), f);
        assert!(!f.exists(), "the file itself is not created");
        assert!(writable_file(d.path().to_str().unwrap()).unwrap_err().contains("is a directory"));
        assert!(writable_file("/proc/nope/g.svg").unwrap_err().contains("/proc/nope"));
    }
}
