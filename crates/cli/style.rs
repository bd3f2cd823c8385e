//! Colour for people: task and worker states, errors, a diff's lines. Styles are written as
//! ANSI codes into the text, and everything is printed through `anstream`, which drops them
//! where they do not belong: output that is not a terminal, `NO_COLOR`, `TERM=dumb`, `--color
//! never` (`--color always` keeps them). A state always has its word too: colour is never the
//! only sign.

use anstyle::{AnsiColor, Style};

pub const GOOD: Style = AnsiColor::Green.on_default();
pub const BAD: Style = AnsiColor::Red.on_default().bold();
pub const BUSY: Style = AnsiColor::Yellow.on_default();
pub const READY: Style = AnsiColor::Cyan.on_default();
pub const QUIET: Style = Style::new().dimmed();
pub const HEADING: Style = Style::new().bold();
pub const ADDED: Style = AnsiColor::Green.on_default();
pub const REMOVED: Style = AnsiColor::Red.on_default();
pub const HUNK: Style = AnsiColor::Cyan.on_default();

/// `text` in `style`.
pub fn paint(style: Style, text: &str) -> String {
    match style == Style::new() {
        true => text.to_string(),
        false => format!("{style}{text}{style:#}"),
    }
}

/// The style of a task's state (as `leader status` words it).
pub fn task_state(state: &str) -> Style {
    match state {
        "done" => GOOD,
        "failed" => BAD,
        "claimed" | "in_progress" => BUSY,
        "ready" => READY,
        "cancelled" => QUIET,
        _ => Style::new(),
    }
}

/// The style of one line of a unified diff.
pub fn diff_line(line: &str) -> Style {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
        HEADING
    } else if line.starts_with('+') {
        ADDED
    } else if line.starts_with('-') {
        REMOVED
    } else if line.starts_with("@@") {
        HUNK
    } else {
        Style::new()
    }
}

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    // On a terminal, unless NO_COLOR is set (no doc comment: the values stay on one line of
    // `--help`).
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Makes it the choice of every stream this process prints to.
    pub fn apply(self) {
        let choice = match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_diff_lines_get_their_colour_and_keep_their_words() {
        let done = paint(task_state("done"), "done       ");
        assert!(done.starts_with("\u{1b}["), "{done:?}");
        assert_eq!(
            anstream::adapter::strip_str(&done).to_string(),
            "done       "
        );
        assert_eq!(paint(task_state("available"), "available"), "available");
        assert_eq!(diff_line("+added"), ADDED);
        assert_eq!(diff_line("+++ b/x"), HEADING);
        assert_eq!(diff_line("-gone"), REMOVED);
        assert_eq!(diff_line("@@ -1 +1 @@"), HUNK);
        assert_eq!(diff_line(" same"), Style::new());
    }
}
