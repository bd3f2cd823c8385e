//! The UI's text files gzipped for a browser that takes gzip: its script and styles are 1.74 MB
//! as built and 0.52 MB compressed, which a phone on a mobile link (through a tunnel to the
//! lead's machine) feels on the first load. Each file is compressed once and
//! kept in memory until it changes (a new build), so a page load costs no compression.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

/// The compressed files: a folder's by path, the binary's own build by name.
#[derive(Default)]
pub struct Gzipped {
    files: Mutex<HashMap<PathBuf, Compressed>>,
    built: Mutex<HashMap<&'static str, Bytes>>,
}

/// One file compressed, and the modification time and length it had when it was read.
struct Compressed {
    stamp: (Option<SystemTime>, u64),
    bytes: Bytes,
}

/// Whether a file of this kind is worth compressing (text; images and fonts already are).
pub fn compressible(file: &str) -> bool {
    matches!(
        Path::new(file).extension().and_then(|e| e.to_str()),
        Some("html" | "js" | "mjs" | "css" | "json" | "webmanifest" | "svg" | "txt")
    )
}

/// Whether the request's `Accept-Encoding` takes gzip (not refused with `q=0`).
pub fn accepted(accept_encoding: Option<&str>) -> bool {
    accept_encoding.is_some_and(|header| {
        header.split(',').any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            // `q=0` (or `q=0.0`, `q = 0.000`) refuses it.
            let refused = parts.any(|p| {
                p.split_once('=').is_some_and(|(key, q)| {
                    key.trim().eq_ignore_ascii_case("q") && q.trim().parse::<f32>() == Ok(0.0)
                })
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
    })
}

impl Gzipped {
    /// `file`'s bytes gzipped: compressed now if it is new or changed since, else as kept.
    pub fn of(&self, file: &Path) -> std::io::Result<Bytes> {
        let meta = std::fs::metadata(file)?;
        let stamp = (meta.modified().ok(), meta.len());
        if let Some(kept) = self.files.lock().expect("gzip cache").get(file)
            && kept.stamp == stamp
        {
            return Ok(kept.bytes.clone());
        }
        let bytes = gzip(&std::fs::read(file)?)?;
        let mut files = self.files.lock().expect("gzip cache");
        // A new build names its files anew: what the last one left is let go.
        files.retain(|path, _| path.exists());
        files.insert(
            file.to_path_buf(),
            Compressed {
                stamp,
                bytes: bytes.clone(),
            },
        );
        Ok(bytes)
    }
}

impl Gzipped {
    /// File `name` of the binary's own build gzipped: compressed the first time it is asked
    /// for, then kept (it never changes).
    pub fn of_built(&self, name: &'static str, plain: &'static [u8]) -> std::io::Result<Bytes> {
        if let Some(kept) = self.built.lock().expect("gzip cache").get(name) {
            return Ok(kept.clone());
        }
        let bytes = gzip(plain)?;
        self.built
            .lock()
            .expect("gzip cache")
            .insert(name, bytes.clone());
        Ok(bytes)
    }
}

fn gzip(plain: &[u8]) -> std::io::Result<Bytes> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(plain)?;
    Ok(Bytes::from(encoder.finish()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn gunzip(bytes: &[u8]) -> String {
        let mut text = String::new();
        GzDecoder::new(bytes).read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn a_file_is_compressed_once_and_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("app.js");
        std::fs::write(&file, "let x = 1;\n".repeat(1000)).unwrap();
        let cache = Gzipped::default();
        let first = cache.of(&file).unwrap();
        assert!(first.len() < 1000, "{} bytes", first.len());
        assert_eq!(gunzip(&first), "let x = 1;\n".repeat(1000));
        assert_eq!(cache.of(&file).unwrap().as_ptr(), first.as_ptr(), "kept");
        // A new build writes the file again (another length here, so no clock is needed).
        std::fs::write(&file, "let y = 2;\n".repeat(900)).unwrap();
        assert_eq!(
            gunzip(&cache.of(&file).unwrap()),
            "let y = 2;\n".repeat(900)
        );
        // The next build's file replaces it: the gone one is not kept.
        let next = dir.path().join("app-next.js");
        std::fs::write(&next, "let z = 3;\n").unwrap();
        std::fs::remove_file(&file).unwrap();
        cache.of(&next).unwrap();
        let kept: Vec<PathBuf> = cache.files.lock().unwrap().keys().cloned().collect();
        assert_eq!(kept, vec![next]);
    }

    #[test]
    fn a_built_in_file_is_compressed_once_and_kept() {
        static PLAIN: &[u8] = b"body { color: red }\n";
        let cache = Gzipped::default();
        let first = cache.of_built("assets/a.css", PLAIN).unwrap();
        assert_eq!(gunzip(&first), "body { color: red }\n");
        let again = cache.of_built("assets/a.css", PLAIN).unwrap();
        assert_eq!(again.as_ptr(), first.as_ptr(), "kept");
    }

    #[test]
    fn gzip_is_sent_only_to_a_browser_that_takes_it() {
        for taken in [
            "gzip",
            "gzip, deflate, br, zstd",
            "br;q=1.0, GZIP;q=0.5",
            "*",
        ] {
            assert!(accepted(Some(taken)), "{taken}");
        }
        for refused in [
            "",
            "br",
            "identity",
            "gzip;q=0",
            "gzip; q=0.0",
            "br, gzip; Q = 0.000",
            "gzipx",
        ] {
            assert!(!accepted(Some(refused)), "{refused}");
        }
        assert!(!accepted(None));
        assert!(compressible("assets/index-abc.js"));
        assert!(!compressible("icon.png"));
    }
}
