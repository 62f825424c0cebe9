//! The report as a person sees it: `schedlab reproduce` writes `report/index.html`, headless
//! Chromium (Debian's `chromium`, installed by scripts/setup.sh) loads it, and we check through
//! the DevTools protocol (over `--remote-debugging-pipe`) that there are no console errors,
//! exceptions or failed loads, that every seed section and every figure is there and drawn,
//! that a phone-sized screen needs no sideways page scrolling, and that it prints to PDF.
//! Screenshots and the PDF are saved under `target/tmp/report-browser/<test>/`.
//!
//! Without Chromium the tests say so and pass on a developer machine, but FAIL in CI
//! (`CI=true`): the report test must run there.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCHEDLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Chromium, or `None` to skip on a developer machine; in CI a missing browser is a failure.
fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    let msg = "Chromium not found (looked for chromium, chromium-browser, google-chrome; or set SCHEDLAB_CHROMIUM): \
               install it with `bash scripts/setup.sh` or `apt-get install -y chromium`";
    schedlab_os::test_gate::require(test, found.is_some(), msg);
    found
}

/// A DevTools-protocol session with one headless Chromium over a pipe (no ports, no crates).
struct Browser {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: u64,
    events: Vec<Value>,
    deadline: Instant,
    session: Option<String>,
}

impl Browser {
    fn launch(exe: &Path, profile: &Path, log: &Path) -> Browser {
        // --remote-debugging-pipe talks on fds 3 (commands in) and 4 (replies out): the shell
        // moves our stdin/stdout pipes there before exec'ing the browser.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null"#)
            .arg(exe)
            .args([
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-sync",
                "--mute-audio",
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("starting chromium");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|&b| b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&msg[..msg.len() - 1]) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Browser {
            child,
            stdin,
            rx,
            next_id: 0,
            events: Vec::new(),
            deadline: Instant::now() + Duration::from_secs(90),
            session: None,
        }
    }

    fn recv(&mut self, what: &str) -> Value {
        let left = self.deadline.saturating_duration_since(Instant::now());
        self.rx.recv_timeout(left).unwrap_or_else(|_| panic!("chromium did not answer {what} in time"))
    }

    /// Send a command (to the attached page when there is one) and wait for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            if !method.starts_with("Target.") && !method.starts_with("Browser.") {
                msg["sessionId"] = json!(s);
            }
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.stdin.write_all(&bytes).unwrap();
        self.stdin.flush().unwrap();
        loop {
            let v = self.recv(method);
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn wait_event(&mut self, method: &str) {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            self.events.remove(i);
            return;
        }
        loop {
            let v = self.recv(method);
            if v["method"] == method {
                return;
            }
            self.events.push(v);
        }
    }

    /// Open a page target and attach to it with the domains that report problems enabled.
    fn open_page(&mut self) {
        let target = self.call("Target.createTarget", json!({ "url": "about:blank" }));
        let attached = self.call("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }));
        self.session = Some(attached["sessionId"].as_str().unwrap().to_string());
        for domain in ["Page.enable", "Runtime.enable", "Log.enable", "Network.enable"] {
            self.call(domain, json!({}));
        }
    }

    fn viewport(&mut self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile }),
        );
    }

    fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_event("Page.loadEventFired");
    }

    fn eval(&mut self, js: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({ "expression": js, "returnByValue": true }));
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("evaluating {js}: {ex}");
        }
        r["result"]["value"].clone()
    }

    /// Console errors, uncaught exceptions, failed loads and error log entries seen so far.
    fn problems(&mut self) -> Vec<String> {
        // Drain what has arrived without waiting.
        while let Ok(v) = self.rx.try_recv() {
            self.events.push(v);
        }
        self.events
            .iter()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.consoleAPICalled" if matches!(p["type"].as_str(), Some("error" | "assert")) => {
                        Some(format!("console.{}: {}", p["type"], p["args"]))
                    }
                    "Runtime.exceptionThrown" => Some(format!("exception: {}", p["exceptionDetails"])),
                    "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!("log: {}", p["entry"]["text"])),
                    "Network.loadingFailed" => Some(format!("load failed: {}", p["errorText"])),
                    _ => None,
                }
            })
            .collect()
    }

    /// A PNG of the viewport, or of the page region (x, y, width, height) in page pixels.
    fn screenshot(&mut self, path: &Path, region: Option<(f64, f64, f64, f64)>) {
        let mut params = json!({ "format": "png" });
        if let Some((x, y, w, h)) = region {
            params["captureBeyondViewport"] = json!(true);
            params["clip"] = json!({ "x": x, "y": y, "width": w, "height": h.min(16000.0), "scale": 1 });
        }
        let shot = self.call("Page.captureScreenshot", params);
        let png = base64_decode(shot["data"].as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(path, png).unwrap();
    }

    fn pdf(&mut self, path: &Path) -> usize {
        let r = self.call("Page.printToPDF", json!({ "printBackground": false }));
        let pdf = base64_decode(r["data"].as_str().unwrap());
        assert!(pdf.starts_with(b"%PDF"), "printing gives a PDF");
        std::fs::write(path, &pdf).unwrap();
        pdf.len()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.session = None;
        let _ = self.stdin.write_all(b"{\"id\":999999,\"method\":\"Browser.close\"}\0");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("bad base64 byte {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).map(val).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// What the page holds, measured in the browser.
const INSPECT: &str = r#"JSON.stringify({
  seeds: [...document.querySelectorAll('section.seed[data-seed]:not([data-seed=other])')].map(s => s.dataset.seed),
  verdicts: [...document.querySelectorAll('section.seed > p.verdict')].map(p => p.textContent),
  experiments: [...document.querySelectorAll('article.experiment')].map(a => a.dataset.experiment),
  figures: [...document.querySelectorAll('figure.figure')].map(f => {
    const svg = f.querySelector('svg'); const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return { experiment: f.dataset.experiment, width: r.width, height: r.height, marks: svg ? svg.querySelectorAll('polyline,rect,circle,path').length : 0 };
  }),
  scripts: document.scripts.length,
  external: [...document.querySelectorAll('[src],link[href]')].map(e => e.src || e.href).filter(u => !u.startsWith('data:')),
  overflow_x: document.documentElement.scrollWidth - window.innerWidth
})"#;

fn out_dir(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser").join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Load a report and check it the way a reader would; returns what the page holds.
fn check_report(exe: &Path, html: &Path, test: &str, expected_figures: &[String]) -> Value {
    let dir = out_dir(test);
    let profile = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(exe, profile.path(), &dir.join("chromium.log"));
    b.open_page();
    b.viewport(1280, 900, false);
    b.navigate(&format!("file://{}", html.canonicalize().unwrap().display()));
    let page: Value = serde_json::from_str(b.eval(INSPECT).as_str().unwrap()).unwrap();
    let size: Value = serde_json::from_str(
        b.eval("JSON.stringify([document.documentElement.clientWidth, document.documentElement.scrollHeight])")
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let width = size[0].as_f64().unwrap();
    b.screenshot(&dir.join("desktop.png"), Some((0.0, 0.0, width, size[1].as_f64().unwrap())));
    // One picture per seed section too: easier to read than one very tall page.
    let rects: Value = serde_json::from_str(
        b.eval(
            "JSON.stringify([...document.querySelectorAll('section.seed')].map(s => { const r = s.getBoundingClientRect(); \
             return [s.id, r.top + window.scrollY, r.height]; }))",
        )
        .as_str()
        .unwrap(),
    )
    .unwrap();
    for r in rects.as_array().unwrap() {
        let (id, top, h) = (r[0].as_str().unwrap(), r[1].as_f64().unwrap(), r[2].as_f64().unwrap());
        b.screenshot(&dir.join(format!("{id}.png")), Some((0.0, top, width, h.min(3000.0))));
    }

    assert_eq!(page["seeds"], json!(["000", "001", "002", "003", "004"]), "one section per seed, in order");
    assert_eq!(page["verdicts"].as_array().unwrap().len(), 5, "a verdict line per seed");
    assert_eq!(page["scripts"], 0, "the report needs no JavaScript");
    assert_eq!(page["external"], json!([]), "nothing loaded from elsewhere");
    let figs = page["figures"].as_array().unwrap();
    let got: Vec<String> = figs.iter().map(|f| f["experiment"].as_str().unwrap().to_string()).collect();
    assert_eq!(got, expected_figures, "every figure of every section is in the report");
    for f in figs {
        assert!(f["width"].as_f64().unwrap() > 200.0 && f["height"].as_f64().unwrap() > 100.0, "figure not drawn: {f}");
        assert!(f["marks"].as_u64().unwrap() > 0, "figure has no marks: {f}");
    }
    assert!(page["overflow_x"].as_f64().unwrap() <= 0.0, "desktop page scrolls sideways: {page}");

    // A phone: the page itself must not scroll sideways (wide tables scroll in their own box).
    b.viewport(390, 844, true);
    let phone: Value = serde_json::from_str(b.eval(INSPECT).as_str().unwrap()).unwrap();
    assert!(phone["overflow_x"].as_f64().unwrap() <= 0.0, "phone page scrolls sideways by {}px", phone["overflow_x"]);
    b.screenshot(&dir.join("phone.png"), None);
    b.viewport(1280, 900, false);
    assert!(b.pdf(&dir.join("report.pdf")) > 1000);
    // The print style sheet applies: no contents list, tables not clipped in scroll boxes.
    b.call("Emulation.setEmulatedMedia", json!({ "media": "print" }));
    let print = b.eval(
        "getComputedStyle(document.querySelector('nav')).display + ' ' + \
         (document.querySelector('.scroll') ? getComputedStyle(document.querySelector('.scroll')).overflowX : 'visible')",
    );
    assert_eq!(print, "none visible", "print CSS");
    b.screenshot(&dir.join("print.png"), None);

    let problems = b.problems();
    assert!(problems.is_empty(), "console errors in the report: {problems:#?}");
    eprintln!("{test}: screenshots and PDF in {}", dir.display());
    page
}

fn figures_of(sections: &Value) -> Vec<String> {
    let mut v = Vec::new();
    // The report orders sections by seed, then run order; other seeds come last.
    const SEEDS: [&str; 5] = ["000", "001", "002", "003", "004"];
    let all = sections.as_array().unwrap();
    let other = all.iter().filter(|s| !SEEDS.contains(&s["seed"].as_str().unwrap_or("")));
    for s in SEEDS.iter().flat_map(|seed| all.iter().filter(move |s| s["seed"] == *seed)).chain(other) {
        for _ in s["figures"].as_array().unwrap() {
            v.push(s["experiment"].as_str().unwrap().to_string());
        }
    }
    v
}

/// Run `schedlab` with `args`; its exit status must be `code` (1 = some experiment failed).
fn reproduce(dir: &Path, args: &[&str], code: i32) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).current_dir(dir).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn the_reproduce_report_renders_in_chromium_with_every_section_and_figure() {
    let Some(exe) = chromium_or_skip("report_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    let listed: Value =
        serde_json::from_slice(&reproduce(dir.path(), &["reproduce", "--list", "--quick", "--json"], 0).stdout)
            .unwrap();
    // The registered experiments as `reproduce --quick` runs them: the quickest one when there
    // are any (a test must stay short), none when this build registers none.
    let mut args = vec!["reproduce", "--quick", "--json"];
    let fastest = listed["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .min_by(|a, b| a["estimate_s"].as_f64().partial_cmp(&b["estimate_s"].as_f64()).unwrap())
        .map(|e| e["name"].as_str().unwrap().to_string());
    if let Some(name) = &fastest {
        args.extend(["--only", name]);
    }
    let doc: Value = serde_json::from_slice(&reproduce(dir.path(), &args, 0).stdout).unwrap();
    // Every verdict says what kind of claim it judges, and the summary counts by kind.
    let kinds = ["seed_claim", "published_number", "goal", "calibration", "identity"];
    let statuses = ["reproduced", "differs", "inconclusive", "met", "not_met", "fact"];
    let mut counted = 0;
    for s in doc["sections"].as_array().unwrap() {
        for v in s["verdicts"].as_array().unwrap() {
            let (k, st) = (v["kind"].as_str().unwrap(), v["status"].as_str().unwrap());
            assert!(kinds.contains(&k) && statuses.contains(&st), "{v}");
            counted += 1;
            assert!(doc["summary"]["by_kind"][k][st].as_u64().unwrap() >= 1, "{}", doc["summary"]);
        }
    }
    let summed: u64 = doc["summary"]["by_kind"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|k| k.as_object().unwrap().values().map(|n| n.as_u64().unwrap()))
        .sum();
    assert_eq!(summed, counted, "{}", doc["summary"]);
    let page = check_report(&exe, &dir.path().join("report/index.html"), "registered", &figures_of(&doc["sections"]));
    if let Some(name) = fastest {
        assert!(page["experiments"].as_array().unwrap().contains(&json!(name)));
    }
}

#[test]
fn a_report_with_figures_in_every_seed_renders_cleanly() {
    let Some(exe) = chromium_or_skip("report_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Test drills: one finished section with a figure per seed, plus a not-run and a failed one.
    let out = reproduce(
        dir.path(),
        &["reproduce", "--quick", "--json", "--test-drill", "20ms,20ms,20ms,20ms,20ms,unsupported,fail"],
        1, // the "fail" drill fails on purpose
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected = figures_of(&doc["sections"]);
    assert_eq!(expected.len(), 5);
    let page = check_report(&exe, &dir.path().join("report/index.html"), "drills", &expected);
    let verdicts: Vec<&str> = page["verdicts"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(verdicts[0].contains("goals: 1 of 1 met") && verdicts[0].contains("drill-6 not run"), "{verdicts:?}");
    assert!(verdicts[1].contains("drill-7 failed"), "{verdicts:?}");
}

#[test]
fn the_browser_check_catches_a_broken_page() {
    // The check must be able to fail: a page with a console error, an exception and a
    // missing image is caught.
    let Some(exe) = chromium_or_skip("report_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        r#"<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><img src="missing.png">
<script>console.error("boom"); undefined_function();</script></body></html>"#,
    )
    .unwrap();
    let mut b = Browser::launch(&exe, dir.path(), &dir.path().join("chromium.log"));
    b.open_page();
    b.navigate(&format!("file://{}", page.display()));
    let problems = b.problems().join("\n");
    assert!(problems.contains("boom"), "{problems}");
    assert!(problems.contains("undefined_function"), "{problems}");
    assert!(problems.contains("missing.png") || problems.contains("ERR_FILE_NOT_FOUND"), "{problems}");
}

#[test]
fn base64_decodes() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGk="), b"hi");
    assert_eq!(base64_decode("YWJj"), b"abc");
}

/// Every `<text>` of an SVG file as Chromium lays it out, against the viewBox: the texts whose
/// bounding box leaves it, and how many legend entries there are.
fn svg_layout(exe: &Path, svg: &Path, test: &str) -> (Vec<String>, u64) {
    let dir = out_dir(test);
    let profile = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(exe, profile.path(), &dir.join("chromium.log"));
    b.open_page();
    b.viewport(1400, 900, false);
    b.navigate(&format!("file://{}", svg.canonicalize().unwrap().display()));
    let js = "(() => { const s = document.documentElement; const v = s.viewBox.baseVal; \
              const out = [...s.querySelectorAll('text')].filter(t => { const b = t.getBBox(); \
                return b.x < v.x - 0.5 || b.y < v.y - 0.5 || b.x + b.width > v.x + v.width + 0.5 || b.y + b.height > v.y + v.height + 0.5; }) \
                .map(t => { const b = t.getBBox(); return `${t.textContent} at x ${b.x.toFixed(1)}..${(b.x + b.width).toFixed(1)} of ${v.width}`; }); \
              return JSON.stringify({ outside: out, legend: s.querySelectorAll('.legend').length }); })()";
    let r: Value = serde_json::from_str(b.eval(js).as_str().unwrap()).unwrap();
    b.screenshot(&dir.join("gantt.png"), None);
    let outside = r["outside"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
    (outside, r["legend"].as_u64().unwrap())
}

#[test]
fn gantt_labels_stay_inside_the_chart_and_it_has_a_legend() {
    let Some(exe) = chromium_or_skip("gantt_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.json");
    std::fs::write(
        &w,
        r#"{"tasks":[{"name":"a-task-with-a-long-descriptive-name","bursts":[5,2,3]},{"name":"B","bursts":[4]},{"name":"C","arrival":1,"bursts":[2]}]}"#,
    )
    .unwrap();
    let svg = dir.path().join("g.svg");
    reproduce(
        dir.path(),
        &[
            "sim",
            "run",
            "--workload",
            w.to_str().unwrap(),
            "--cpus",
            "2",
            "--policy",
            "rr:quantum=2ms",
            "--policy",
            "prio-preempt:aging=5ms,quantum=2ms",
            "--gantt",
            svg.to_str().unwrap(),
            "--out",
            "runs",
        ],
        0,
    );
    let (outside, legend) = svg_layout(&exe, &svg, "gantt");
    assert!(outside.is_empty(), "texts outside the chart: {outside:#?}");
    assert!(legend >= 3, "the legend names every task ({legend} entries)");
    // The check can fail: a label drawn off the left edge is caught.
    let bad = dir.path().join("bad.svg");
    std::fs::write(
        &bad,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100"><text x="70" y="50" text-anchor="end">a label much too long for its margin</text></svg>"#,
    )
    .unwrap();
    let (outside, legend) = svg_layout(&exe, &bad, "gantt-bad");
    assert_eq!((outside.len(), legend), (1, 0), "{outside:?}");
}
