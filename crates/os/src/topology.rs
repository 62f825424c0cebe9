//! CPU topology from sysfs (`/sys/devices/system/cpu`): online CPUs, packages, cores, SMT
//! siblings and caches, as seed 003's task manager reads it at start-up to decide how many
//! workers to start and where to pin them.

use crate::affinity::parse_cpu_list;
use crate::{OsError, OsResult};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The sysfs directory the kernel describes CPUs in.
pub const SYSFS_CPU: &str = "/sys/devices/system/cpu";

/// One cache a CPU sees (`cpuN/cache/indexM`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: u64,
    /// The CPUs sharing this cache.
    pub shared_cpus: Vec<usize>,
}

/// One logical CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    pub id: usize,
    pub package: i64,
    pub core: i64,
    /// SMT siblings, this CPU included (`thread_siblings_list`).
    pub siblings: Vec<usize>,
    pub caches: Vec<Cache>,
}

/// The machine's online CPUs, grouped the way the task manager needs them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    pub cpus: Vec<Cpu>,
}

impl Topology {
    /// Read the live machine's topology.
    pub fn read() -> OsResult<Self> {
        Self::read_from(Path::new(SYSFS_CPU))
    }

    /// Read a topology from a sysfs-shaped directory (tests use a fake tree).
    pub fn read_from(root: &Path) -> OsResult<Self> {
        let online = read_trim(&root.join("online"))?;
        let ids = parse_cpu_list(&online)?;
        let mut cpus = Vec::with_capacity(ids.len());
        for id in ids {
            let dir = root.join(format!("cpu{id}"));
            let topo = dir.join("topology");
            // Missing topology files (some VMs, very old kernels): treat each CPU as its own core.
            let package = read_trim(&topo.join("physical_package_id")).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
            let core = read_trim(&topo.join("core_id")).ok().and_then(|s| s.parse().ok()).unwrap_or(id as i64);
            let siblings = read_trim(&topo.join("thread_siblings_list"))
                .ok()
                .and_then(|s| parse_cpu_list(&s).ok())
                .unwrap_or_else(|| vec![id]);
            cpus.push(Cpu { id, package, core, siblings, caches: read_caches(&dir.join("cache")) });
        }
        if cpus.is_empty() {
            return Err(OsError::unsupported("CPU topology", format!("{} lists no online CPU", root.display())));
        }
        Ok(Topology { cpus })
    }

    /// Online CPU numbers in order.
    pub fn cpu_ids(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.id).collect()
    }

    /// Distinct physical packages.
    pub fn packages(&self) -> Vec<i64> {
        let mut p: Vec<i64> = self.cpus.iter().map(|c| c.package).collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// Physical cores as groups of SMT siblings (each sorted; groups ordered by first CPU).
    pub fn cores(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for c in &self.cpus {
            let mut g: Vec<usize> =
                self.cpus.iter().filter(|o| o.package == c.package && o.core == c.core).map(|o| o.id).collect();
            g.sort_unstable();
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        groups.sort_by_key(|g| g[0]);
        groups
    }

    /// The CPU left to the system (interrupts, the controller, everything else): the first
    /// online CPU, as the seed leaves one core free. All its SMT siblings are reserved too.
    pub fn reserved_core(&self) -> Vec<usize> {
        self.cores().into_iter().next().unwrap_or_default()
    }

    /// CPUs a worker may be pinned to, one per physical core outside the reserved core
    /// (the first thread of each core, so two workers never share a core's pipelines).
    pub fn worker_cpus(&self) -> Vec<usize> {
        self.cores().into_iter().skip(1).map(|g| g[0]).collect()
    }

    /// The same CPUs with every SMT thread counted as a core of its own. Tests of behaviour
    /// (not speed) use it on a machine whose CPUs are threads of one core, where
    /// `worker_cpus()` would be empty: the worker then shares the reserved core's pipelines.
    pub fn threads_as_cores(&self) -> Topology {
        let cpus = self
            .cpus
            .iter()
            .map(|c| Cpu { core: c.id as i64, package: 0, siblings: vec![c.id], ..c.clone() })
            .collect();
        Topology { cpus }
    }

    /// Every CPU outside the reserved core (where unpinned workers may float).
    pub fn non_reserved_cpus(&self) -> Vec<usize> {
        let reserved = self.reserved_core();
        self.cpu_ids().into_iter().filter(|c| !reserved.contains(c)).collect()
    }

    /// Unique caches of the machine (one entry per shared cache), sorted by level.
    pub fn caches(&self) -> Vec<Cache> {
        let mut out: Vec<Cache> = Vec::new();
        for c in self.cpus.iter().flat_map(|c| c.caches.iter()) {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out.sort_by(|a, b| (a.level, &a.kind, &a.shared_cpus).cmp(&(b.level, &b.kind, &b.shared_cpus)));
        out
    }
}

/// The CPU the calling thread is running on right now (sched_getcpu(3), served by the vDSO/rseq
/// without a system call on current kernels); `None` if the kernel cannot say.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a value.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

fn read_trim(path: &Path) -> OsResult<String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| OsError::from_io(format!("reading {}", path.display()), e))
}

fn read_caches(dir: &Path) -> Vec<Cache> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut idx: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index")))
        .collect();
    idx.sort();
    idx.iter()
        .filter_map(|p| {
            Some(Cache {
                level: read_trim(&p.join("level")).ok()?.parse().ok()?,
                kind: read_trim(&p.join("type")).ok()?,
                size_bytes: parse_size(&read_trim(&p.join("size")).ok()?)?,
                shared_cpus: parse_cpu_list(&read_trim(&p.join("shared_cpu_list")).ok()?).ok()?,
            })
        })
        .collect()
}

/// sysfs cache sizes look like `48K`, `2048K`, `32M`.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1024 * 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// 1 package, 2 cores with 2 SMT threads each: CPUs 0,2 share core 0 and 1,3 core 1.
    fn fake_smt() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "online", "0-3\n");
        for (cpu, core, sib) in [(0, 0, "0,2"), (1, 1, "1,3"), (2, 0, "0,2"), (3, 1, "1,3")] {
            write(d.path(), &format!("cpu{cpu}/topology/physical_package_id"), "0\n");
            write(d.path(), &format!("cpu{cpu}/topology/core_id"), &format!("{core}\n"));
            write(d.path(), &format!("cpu{cpu}/topology/thread_siblings_list"), &format!("{sib}\n"));
            write(d.path(), &format!("cpu{cpu}/cache/index0/level"), "1");
            write(d.path(), &format!("cpu{cpu}/cache/index0/type"), "Data");
            write(d.path(), &format!("cpu{cpu}/cache/index0/size"), "32K");
            write(d.path(), &format!("cpu{cpu}/cache/index0/shared_cpu_list"), sib);
            write(d.path(), &format!("cpu{cpu}/cache/index3/level"), "3");
            write(d.path(), &format!("cpu{cpu}/cache/index3/type"), "Unified");
            write(d.path(), &format!("cpu{cpu}/cache/index3/size"), "3M");
            write(d.path(), &format!("cpu{cpu}/cache/index3/shared_cpu_list"), "0-3");
        }
        d
    }

    #[test]
    fn smt_machine_reserves_a_whole_core() {
        let d = fake_smt();
        let t = Topology::read_from(d.path()).unwrap();
        assert_eq!(t.cpu_ids(), vec![0, 1, 2, 3]);
        assert_eq!(t.cores(), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(t.reserved_core(), vec![0, 2]);
        assert_eq!(t.worker_cpus(), vec![1]);
        assert_eq!(t.non_reserved_cpus(), vec![1, 3]);
        assert_eq!(t.packages(), vec![0]);
        let caches = t.caches();
        assert_eq!(caches.len(), 3, "{caches:?}"); // two private L1d + one shared L3
        assert_eq!(caches[2].size_bytes, 3 * 1024 * 1024);
    }

    #[test]
    fn threads_as_cores_frees_the_first_cores_sibling() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "online", "0-1");
        for cpu in 0..2 {
            write(d.path(), &format!("cpu{cpu}/topology/core_id"), "0\n");
            write(d.path(), &format!("cpu{cpu}/topology/thread_siblings_list"), "0-1\n");
        }
        let one_core = Topology::read_from(d.path()).unwrap();
        assert_eq!(one_core.worker_cpus(), Vec::<usize>::new(), "two threads of one core: no worker CPU");
        let shared = one_core.threads_as_cores();
        assert_eq!(shared.cores(), vec![vec![0], vec![1]]);
        assert_eq!((shared.reserved_core(), shared.worker_cpus()), (vec![0], vec![1]));
    }

    #[test]
    fn missing_topology_files_mean_one_core_per_cpu() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "online", "0-2");
        std::fs::create_dir_all(d.path().join("cpu1")).unwrap();
        let t = Topology::read_from(d.path()).unwrap();
        assert_eq!(t.cores(), vec![vec![0], vec![1], vec![2]]);
        assert_eq!(t.worker_cpus(), vec![1, 2]);
    }

    #[test]
    fn live_machine_has_a_reserved_cpu() {
        let t = Topology::read().unwrap();
        assert!(!t.cpus.is_empty());
        assert!(t.reserved_core().contains(&t.cpus[0].id));
        assert!(!t.worker_cpus().iter().any(|c| t.reserved_core().contains(c)));
    }

    #[test]
    fn current_cpu_is_an_allowed_cpu() {
        let allowed = crate::affinity::allowed_cpus().unwrap();
        assert!(allowed.contains(&current_cpu().unwrap()));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }
}
