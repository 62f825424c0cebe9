//! crypt(3), the password hash seed 004's workload called, from the system's libcrypt
//! (`libcrypt.so.1`: libxcrypt on current distributions, glibc's own on older ones). The library
//! is loaded at run time with dlopen, so building schedlab needs no libcrypt headers, and a
//! machine without the library gets an error that names it instead of a binary that will not
//! start. Each [`Crypt`] owns its scratch area and calls the re-entrant `crypt_rn` (or
//! `crypt_r`), so hashing in several threads at once is safe.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

type CryptRn = unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void, c_int) -> *mut c_char;
type CryptR = unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_char;

/// The library's re-entrant entry point.
#[derive(Clone, Copy)]
enum Entry {
    /// libxcrypt: the scratch area's size is passed.
    Rn(CryptRn),
    /// glibc: `struct crypt_data` (at most 128 KiB there; ours is larger).
    R(CryptR),
}

/// A loaded crypt(3) with its scratch area.
pub struct Crypt {
    entry: Entry,
    scratch: Vec<u8>,
    /// Which library and entry point, for reports.
    pub source: String,
}

/// Larger than any `struct crypt_data` (libxcrypt: 32,768 bytes; glibc: 131,232).
const SCRATCH: usize = 256 * 1024;

impl Crypt {
    /// Load crypt(3) from `libcrypt.so.1`.
    pub fn load() -> Result<Crypt, String> {
        const LIB: &CStr = c"libcrypt.so.1";
        // SAFETY: dlopen with a valid C string; the handle is never closed (the library stays
        // loaded for the life of the process, as a linked one would).
        let handle = unsafe { libc::dlopen(LIB.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!(
                "cannot load libcrypt.so.1 (crypt(3)): {} — install it (Debian: apt-get install libcrypt1)",
                dl_error()
            ));
        }
        // SAFETY: dlsym on a live handle with valid C strings; the symbols have the documented
        // signatures of libxcrypt's crypt_rn and glibc's crypt_r.
        let entry = unsafe {
            let rn = libc::dlsym(handle, c"crypt_rn".as_ptr());
            if !rn.is_null() {
                Entry::Rn(std::mem::transmute::<*mut c_void, CryptRn>(rn))
            } else {
                let r = libc::dlsym(handle, c"crypt_r".as_ptr());
                if r.is_null() {
                    return Err(format!("libcrypt.so.1 has neither crypt_rn nor crypt_r: {}", dl_error()));
                }
                Entry::R(std::mem::transmute::<*mut c_void, CryptR>(r))
            }
        };
        let source = match entry {
            Entry::Rn(_) => "libcrypt.so.1 crypt_rn (libxcrypt)",
            Entry::R(_) => "libcrypt.so.1 crypt_r",
        };
        Ok(Crypt { entry, scratch: vec![0u8; SCRATCH], source: source.into() })
    }

    /// Hash `phrase` with `setting` (a salt such as `ab` for traditional DES, `$5$salt$` for
    /// SHA-256-crypt); the result is the hashed string crypt(3) returns.
    pub fn hash(&mut self, phrase: &CStr, setting: &CStr) -> Result<&CStr, String> {
        let data = self.scratch.as_mut_ptr() as *mut c_void;
        // SAFETY: valid C strings, a zeroed-then-reused scratch area larger than the library's
        // struct, owned by &mut self so no other call uses it meanwhile.
        let out = unsafe {
            match self.entry {
                Entry::Rn(f) => f(phrase.as_ptr(), setting.as_ptr(), data, SCRATCH as c_int),
                Entry::R(f) => f(phrase.as_ptr(), setting.as_ptr(), data),
            }
        };
        // libxcrypt returns NULL, or a string starting with `*`, for a setting it refuses.
        // SAFETY: a non-null result points into the scratch area, NUL-terminated.
        let s = (!out.is_null()).then(|| unsafe { CStr::from_ptr(out) });
        match s {
            Some(s) if !s.to_bytes().starts_with(b"*") => Ok(s),
            _ => Err(format!("crypt(3) refused the setting {setting:?} (its hash method is not built in)")),
        }
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by the loader.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// A C string from Rust text without NUL bytes (what passwords and salts are).
pub fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "")).expect("no NUL left")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_for_des_and_sha256_crypt() {
        let mut c = Crypt::load().expect("libcrypt.so.1 is installed (scripts/setup.sh)");
        // The classic example, the same as Python's crypt.crypt("password", "ab").
        assert_eq!(c.hash(c"password", c"ab").unwrap().to_str().unwrap(), "abJnggxhB/yWI");
        let sha = c.hash(c"password", c"$5$schedlab$").unwrap().to_str().unwrap().to_string();
        assert!(sha.starts_with("$5$schedlab$") && sha.len() > 40, "{sha}");
        assert!(c.hash(c"password", c"$9$nonsense").is_err(), "an unknown method is an error, not a hash");
    }
}
