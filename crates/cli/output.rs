//! What a command prints: its result as JSON with `--json` (exactly the operation's result
//! type, the same JSON the MCP tool and the desktop get), or text for people; and its error,
//! as `{"error": {kind, message}}` or one line.

use std::io::Write;

use serde::Serialize;

/// Prints `value` as JSON when asked, otherwise the human text `human` produces.
pub fn emit<T: Serialize>(json: bool, value: &T, human: impl FnOnce() -> String) {
    print(if json {
        serde_json::to_string_pretty(value).expect("serialisable output")
    } else {
        human()
    });
}

/// Prints `value` as one line of JSON (`--json`) or the human text: for commands that report
/// more than once while they run (one JSON document per line).
pub fn emit_line<T: Serialize>(json: bool, value: &T, human: impl FnOnce() -> String) {
    print(if json {
        serde_json::to_string(value).expect("serialisable output")
    } else {
        human()
    });
}

/// One result on stdout, flushed (a reader may be waiting for it while the command goes on).
fn print(text: String) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", text.trim_end_matches('\n'));
    let _ = stdout.flush();
}

/// Prints a failure on stderr.
pub fn report_error(err: &baton_api::Error, json: bool) {
    let mut stderr = std::io::stderr().lock();
    if json {
        let _ = writeln!(stderr, "{}", err.to_json());
    } else {
        let _ = writeln!(stderr, "baton: {err}");
    }
}
