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

/// [`emit`], through the user's pager when the text goes to a terminal, as git does: for
/// output that is often longer than a screen (a review's diff, a transcript). The pager is
/// `BATON_PAGER`, else `PAGER`, else `less` (with `LESS=FRX` unless set: it prints a short
/// text as it is and keeps colour); an empty one, `cat`, or one that cannot start prints
/// directly.
pub fn emit_paged<T: Serialize>(json: bool, value: &T, human: impl FnOnce() -> String) {
    use std::io::IsTerminal;
    if json || !std::io::stdout().is_terminal() {
        return emit(json, value, human);
    }
    let text = human();
    if !page(&text) {
        print(text);
    }
}

/// Writes `text` to the pager; false when there is none to use (nothing was written then).
fn page(text: &str) -> bool {
    let pager = std::env::var("BATON_PAGER")
        .or_else(|_| std::env::var("PAGER"))
        .unwrap_or_else(|_| "less".to_string());
    if pager.trim().is_empty() || pager.trim() == "cat" {
        return false;
    }
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&pager)
        .stdin(std::process::Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        command.env("LESS", "FRX");
    }
    let Ok(mut child) = command.spawn() else {
        return false;
    };
    // Colour as the terminal would get it; nothing else that acts on it.
    let text = baton_core::text::inert_page(text);
    let shown = match anstream::AutoStream::choice(&std::io::stdout()) {
        anstream::ColorChoice::Never => anstream::adapter::strip_str(&text).to_string(),
        _ => text.to_string(),
    };
    if let Some(mut input) = child.stdin.take() {
        // A pager the user quits early closes its input: that is not an error.
        let _ = writeln!(input, "{}", shown.trim_end_matches('\n'));
    }
    let _ = child.wait();
    true
}

/// One result on stdout, flushed (a reader may be waiting for it while the command goes on).
/// Colour (`crate::style`) stays only where it belongs: `anstream` drops it otherwise.
fn print(text: String) {
    // Nothing in it acts on the terminal or reorders what it shows but Baton's own colours.
    let text = baton_core::text::inert_page(&text);
    let text = text.trim_end_matches('\n');
    if !text.contains('\u{1b}') {
        // No colour to keep or strip (JSON never has one): written as it is, rather than
        // looked through for escapes (a board of thousands of tasks is megabytes of JSON).
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.write_all(b"\n");
        let _ = stdout.flush();
        return;
    }
    let mut stdout = anstream::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// Prints a failure on stderr.
pub fn report_error(err: &baton_api::Error, json: bool) {
    let mut stderr = anstream::stderr().lock();
    if json {
        let _ = writeln!(stderr, "{}", err.to_json());
    } else {
        let _ = writeln!(
            stderr,
            "{} {}",
            crate::style::paint(crate::style::BAD, "baton:"),
            baton_core::text::inert(&err.to_string())
        );
    }
}
