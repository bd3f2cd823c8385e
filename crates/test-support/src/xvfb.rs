//! An Xvfb server on a free display, for the desktop end-to-end tests and the desktop
//! benchmark (which includes this file by path). Display numbers whose server died without
//! its clean-up are reused; the server is stopped with SIGTERM so it removes its lock file.

use std::ops::Range;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Xvfb {
    /// `:N`, for `DISPLAY`.
    pub display: String,
    server: Child,
}

impl Xvfb {
    /// Starts Xvfb on the first free display in `numbers`; ready once its socket exists.
    pub fn start(numbers: Range<u32>, patience: Duration) -> Xvfb {
        for n in numbers.clone() {
            let lock = format!("/tmp/.X{n}-lock");
            if let Ok(pid) = std::fs::read_to_string(&lock) {
                // A server killed without its clean-up leaves its lock behind; reuse the number.
                let holder = pid.trim();
                if holder.is_empty() || Path::new(&format!("/proc/{holder}")).exists() {
                    continue;
                }
                let _ = std::fs::remove_file(&lock);
                let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{n}"));
            }
            let display = format!(":{n}");
            let server = Command::new("Xvfb")
                .args([&display, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("Xvfb is missing: run ./scripts/test.sh, which installs xvfb");
            let xvfb = Xvfb { display, server };
            let deadline = Instant::now() + patience;
            while !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                assert!(
                    Instant::now() < deadline,
                    "Xvfb {} did not start",
                    xvfb.display
                );
                std::thread::sleep(Duration::from_millis(20)); // retry until the deadline
            }
            return xvfb;
        }
        panic!("no free X display in {numbers:?}");
    }
}

/// Stops `child` with SIGTERM, then SIGKILL if it is still there after two seconds.
pub fn stop_gently(child: &mut Child) {
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10)); // retry until the deadline
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        stop_gently(&mut self.server);
    }
}
