//! The running kernel's build configuration: `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or
//! `/boot/config-<release>`, for facts no other interface gives, such as the tick frequency
//! (CONFIG_HZ) the simulator's Linux model needs.

use std::io::Read;

/// The whole configuration text, if the kernel or /boot has it.
pub fn text() -> Option<String> {
    if let Ok(f) = std::fs::File::open("/proc/config.gz") {
        let mut s = String::new();
        if flate2::read::GzDecoder::new(f).read_to_string(&mut s).is_ok() {
            return Some(s);
        }
    }
    let release = nix::sys::utsname::uname().ok()?.release().to_string_lossy().into_owned();
    std::fs::read_to_string(format!("/boot/config-{release}")).ok()
}

/// The value of one option (`CONFIG_HZ` → `"250"`); None when unset or unknown.
pub fn value(key: &str) -> Option<String> {
    find(&text()?, key)
}

fn find(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=').map(|v| v.trim_matches('"').to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_found_by_exact_name() {
        let t = "# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_LOCALVERSION=\"-x\"\n";
        assert_eq!(find(t, "CONFIG_HZ").as_deref(), Some("250"));
        assert_eq!(find(t, "CONFIG_HZ_250").as_deref(), Some("y"));
        assert_eq!(find(t, "CONFIG_LOCALVERSION").as_deref(), Some("-x"));
        assert_eq!(find(t, "CONFIG_HZ_100"), None);
    }
}
