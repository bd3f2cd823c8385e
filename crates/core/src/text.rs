//! Validation of free text (descriptions, summaries, reasons, notes, prompts): bounded, and free
//! of control characters other than newlines and tabs, so nothing stored can rewrite the
//! terminal or the page that shows it. And the text the user writes for Baton to read: the
//! settings files in `.coordination/` ([`settings_file`]).

use crate::error::{Result, StoreError};

/// The most bytes a long text (hints, a result's output) may hold.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;
/// The most bytes a task's description may hold.
pub const MAX_DESCRIPTION_BYTES: usize = 64 * 1024;

/// Free text: bounded, and free of control characters other than newlines (where allowed)
/// and tabs, so nothing can rewrite a terminal that shows it.
pub fn check_text(field: &'static str, text: &str, max_bytes: usize, required: bool) -> Result<()> {
    let refuse = |reason: String| Err(StoreError::InvalidInput { field, reason });
    if required && text.trim().is_empty() {
        return refuse("it is empty".into());
    }
    if text.len() > max_bytes {
        return refuse(format!(
            "it is {} bytes, more than the {max_bytes} allowed",
            text.len()
        ));
    }
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return refuse(format!("it contains control character U+{:04X}", c as u32));
    }
    Ok(())
}

/// The longest end of `text` of at most `max_bytes` bytes that starts at a character
/// boundary (all of `text` when it is that short).
pub fn suffix(text: &str, max_bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The longest start of `text` of at most `max_bytes` bytes that ends at a character
/// boundary (all of `text` when it is that short).
pub fn prefix(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` trimmed and, past `max_chars` characters, cut there with `…` after it: a note shown
/// in a message, the whole of it kept elsewhere.
pub fn shortened(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    match text.chars().count() > max_chars {
        true => format!("{}…", text.chars().take(max_chars).collect::<String>()),
        false => text.to_string(),
    }
}

/// File names listed in a task's context or result: one line each, no control characters.
pub fn check_paths(paths: &[String]) -> Result<()> {
    for path in paths {
        if path.is_empty() || path.len() > 4096 || path.chars().any(char::is_control) {
            return Err(StoreError::InvalidInput {
                field: "file",
                reason: format!(
                    "{:?} is not a usable file name",
                    path.chars().take(80).collect::<String>()
                ),
            });
        }
    }
    Ok(())
}

/// The settings file the user wrote at `path` (`policy.toml`, `review.toml`), as TOML; `T`'s
/// defaults when there is none. `invalid` says what is wrong with one that does not parse.
pub fn settings_file<T: Default + serde::de::DeserializeOwned>(
    path: &std::path::Path,
    invalid: impl FnOnce(toml::de::Error) -> StoreError,
) -> Result<T> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(invalid),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Whether `c` is a bidirectional override, embedding or isolate: text that shows in another
/// order than it reads (U+202A–U+202E, U+2066–U+2069), which an agent's text or a file name
/// could use to make the lead read something other than what is there.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What a terminal must not be handed raw from text someone else wrote: C0 controls (but what
/// `keep` keeps: a newline and a tab, and ESC for the colours Baton adds itself), DEL, C1
/// controls and bidirectional controls.
fn unsafe_for_terminal(c: char, keep: Keep) -> bool {
    match c {
        '\n' | '\t' => keep == Keep::Nothing,
        '\u{1b}' => keep != Keep::Colours,
        c => c.is_control() || is_bidi_control(c),
    }
}

/// What [`mark`] leaves as it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Newlines and tabs.
    Lines,
    /// Newlines, tabs and ESC (Baton's own colours).
    Colours,
    /// Nothing: one line (a file name).
    Nothing,
}

/// `text` with every character a terminal would act on, or that would reorder what it shows,
/// written out as `\u{…}` (so it is seen, and does nothing): for text from agents and file
/// names, shown to the lead.
pub fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    mark(text, Keep::Lines)
}

/// [`inert`] for what must stay one line (a file name): newlines and tabs written out too.
pub fn inert_line(text: &str) -> std::borrow::Cow<'_, str> {
    mark(text, Keep::Nothing)
}

/// [`inert`] on a whole page of Baton's own output, which may hold its own colours (ESC kept:
/// the fields that come from others are made [`inert`] where they are written, or checked
/// free of control characters when they were stored).
pub fn inert_page(text: &str) -> std::borrow::Cow<'_, str> {
    mark(text, Keep::Colours)
}

fn mark(text: &str, keep: Keep) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| unsafe_for_terminal(c, keep)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match unsafe_for_terminal(c, keep) {
            true => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            false => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text fit for `tasks.json` and a result report: valid UTF-8, terminal escape sequences
/// removed, other control characters (but newlines and tabs) replaced.
pub fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI sequences (colours, cursor moves): ESC [ parameters final-byte.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inert_writes_out_controls_and_bidi_overrides_and_keeps_plain_text() {
        assert!(matches!(
            inert("plain, ünïcode\nand a tab\t"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(inert("a\u{202e}gnp.exe"), "a\\u{202e}gnp.exe");
        assert_eq!(inert("csi\u{9b}31m"), "csi\\u{009b}31m");
        assert_eq!(inert("\u{1b}]0;owned\u{7}"), "\\u{001b}]0;owned\\u{0007}");
        assert_eq!(inert("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        // A page of Baton's own keeps its colours; the rest is written out as above.
        assert_eq!(
            inert_page("\u{1b}[1mbold\u{1b}[0m\u{202e}"),
            "\u{1b}[1mbold\u{1b}[0m\\u{202e}"
        );
        assert_eq!(inert_line("a\nb\tc"), "a\\u{000a}b\\u{0009}c");
    }

    #[test]
    fn printable_strips_colours_and_control_characters() {
        assert_eq!(printable(b"\x1b[32mok\x1b[0m\r\n\x07done\n"), "ok\n?done");
        assert_eq!(printable(b"\xff bytes"), "\u{fffd} bytes");
    }
}
