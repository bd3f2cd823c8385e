//! Documents made from the clap tree itself, so they cannot say something `--help` does not:
//! the man pages the .deb installs (`baton manpages --dir DIR`) and the user guide's command
//! reference (`baton reference --dir DIR`, which `tests/readme.rs` compares with the pages
//! checked in under `docs/guide/src/reference/`). Both are hidden commands: they are for the
//! package and the guide, not for users.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use baton_core::{ErrorKind, StoreError};
use clap::CommandFactory;

use crate::args::Cli;

/// Writes `baton.1` and one page per command (`baton-team-up.1`, …) into `man/man1/`, where
/// `man` looks for section 1; the folder written. The exit codes are the main page's last
/// section; each page's NAME is its command's first sentence (a line, as `man -k` lists it).
pub fn manpages(man: &Path) -> Result<PathBuf, StoreError> {
    let dir = man.join("man1");
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let command = every_command(
        Cli::command().after_long_help(baton_api::exit::help_text()),
        with_short_about,
    );
    clap_mangen::generate_to(command, &dir).map_err(|e| StoreError::io(&dir, e))?;
    Ok(dir)
}

/// `command` and each of its subcommands, at every depth, made over by `change`.
fn every_command(
    command: clap::Command,
    change: fn(clap::Command) -> clap::Command,
) -> clap::Command {
    let mut command = change(command);
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |sub| every_command(sub, change));
    }
    command
}

/// The command with its `about` cut to its first sentence (the derive makes it the doc
/// comment's first paragraph); the long description keeps the rest.
fn with_short_about(command: clap::Command) -> clap::Command {
    let Some(about) = command.get_about().map(|a| a.to_string()) else {
        return command;
    };
    let long = command
        .get_long_about()
        .map(|a| a.to_string())
        .unwrap_or_else(|| about.clone());
    command.about(first_sentence(&about)).long_about(long)
}

/// The text up to its first full stop that ends a sentence (followed by a space or the end),
/// on one line.
fn first_sentence(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.find(". ") {
        Some(at) => line[..at].to_string(),
        None => line.trim_end_matches('.').to_string(),
    }
}

/// The command tree a shell's completion is made from: the commands `--help` lists (not the
/// hidden ones, which are an agent's or the package's), and file names offered only for values
/// that are paths (a profile, a task id or a goal completes to nothing rather than to the files
/// of the folder).
pub fn completion_tree(command: &clap::Command) -> clap::Command {
    let mut tree = clap::Command::new(command.get_name().to_string());
    if let Some(about) = command.get_about() {
        tree = tree.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        tree = tree.version(version.to_string());
    }
    for alias in command.get_visible_aliases() {
        tree = tree.visible_alias(alias.to_string());
    }
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let mut arg = arg.clone();
        // `FILE`, `FILES`, `NEW_PATH`, `DIR`; not `PROFILE`.
        let names_a_path = arg.get_value_names().is_some_and(|names| {
            names.iter().any(|name| {
                name.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|word| {
                        ["FILE", "FILES", "PATH", "PATHS", "DIR", "FOLDER"]
                            .contains(&word.to_ascii_uppercase().as_str())
                    })
            })
        });
        let takes_values =
            arg.get_num_args().is_none_or(|n| n.takes_values()) && arg.get_action().takes_values();
        if takes_values && arg.get_value_hint() == clap::ValueHint::Unknown && !names_a_path {
            arg = arg.value_hint(clap::ValueHint::Other);
        }
        tree = tree.arg(arg);
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        tree = tree.subcommand(completion_tree(sub));
    }
    tree
}

/// One page of the reference: its file name and its Markdown.
pub struct Page {
    pub file: String,
    pub text: String,
}

/// The guide's command reference: an index of the commands a user sees in `baton --help`,
/// one page per command with every subcommand, argument and option, and the errors page
/// (exit codes and error kinds, with what to do).
pub fn pages() -> Vec<Page> {
    // Unbuilt, so the global options stay on the index instead of on every command; each
    // command is renamed `baton NAME` so its headings and usage lines read as typed.
    let root = Cli::command();
    let mut pages = vec![index(&root)];
    for command in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = command.get_name().to_string();
        let options = clap_markdown::MarkdownOptions::new()
            .title(format!("baton {name}"))
            .show_footer(false)
            .show_table_of_contents(false);
        let command = every_command(
            command.clone().name(format!("baton {name}")),
            without_repeated_summary,
        );
        let text = clap_markdown::help_markdown_command_custom(&command, &options)
            // The page's title names the command already.
            .replacen(&format!("## `baton {name}`\n\n"), "", 1);
        pages.push(Page {
            file: format!("{name}.md"),
            text: tidy(&text),
        });
    }
    pages.push(errors());
    pages
}

/// The command with its long description, when it begins with its one-line summary (clap's
/// derive makes the whole doc comment the long help), without that first paragraph: the page
/// shows the long description only.
fn without_repeated_summary(command: clap::Command) -> clap::Command {
    let about = command.get_about().map(|a| a.to_string());
    let long = command.get_long_about().map(|a| a.to_string());
    match (about, long) {
        // clap drops the summary's full stop; the long description keeps it.
        (Some(about), Some(long)) => {
            match long.strip_prefix(&about).map(|r| r.trim_start_matches('.')) {
                Some(rest) if rest.starts_with("\n\n") => {
                    command.long_about(rest.trim_start().to_string())
                }
                _ => command,
            }
        }
        _ => command,
    }
}

/// Writes [`pages`] into `dir`, returning the files written.
pub fn write_pages(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    pages()
        .into_iter()
        .map(|page| {
            let path = dir.join(&page.file);
            std::fs::write(&path, page.text).map_err(|e| StoreError::io(&path, e))?;
            Ok(path)
        })
        .collect()
}

/// clap-markdown's page, without the sentence it opens every page with or a flag's "default
/// value: false", with its section labels as bold text rather than sixth-level headings, and
/// with one blank line at most between blocks.
fn tidy(text: &str) -> String {
    let mut out = String::new();
    let mut blank = 0;
    for line in text.lines() {
        if line.starts_with("This document contains the help content for")
            || line == "  Default value: `false`"
        {
            continue;
        }
        let line = line.strip_prefix("###### ").unwrap_or(line);
        let example;
        let line = match line.strip_prefix("Example: ") {
            Some(command) => {
                example = format!("Example: `{command}`");
                &example
            }
            None => line,
        };
        blank = if line.trim().is_empty() { blank + 1 } else { 0 };
        if blank <= 1 {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    format!("{}\n", out.trim_end())
}

fn index(root: &clap::Command) -> Page {
    let mut text = String::from(
        "# Command reference\n\n\
         Made from the same definitions as `baton --help` and `man baton`, so it says what the \
         `baton` you build says. The commands:\n\n| command | what it does |\n| --- | --- |\n",
    );
    for command in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = command.get_name();
        let about = command
            .get_about()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let _ = writeln!(text, "| [`baton {name}`]({name}.md) | {} |", cell(&about));
    }
    text.push_str("\nEvery command also takes the global options:\n\n");
    for arg in root
        .get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
    {
        let long = arg.get_long().unwrap_or_default();
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .filter(|_| arg.get_num_args().is_none_or(|n| n.takes_values()))
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let _ = writeln!(text, "- `--{long}{value}`: {help}");
    }
    text.push_str(
        "\nWhat an exit status or an error's kind means: [Errors and exit codes](errors.md).\n",
    );
    Page {
        file: "index.md".into(),
        text,
    }
}

fn errors() -> Page {
    let mut text = String::from(
        "# Errors and exit codes\n\n\
         Every error says what was refused and what to do. With `--json` it is \
         `{\"error\": {\"kind\": …, \"message\": …}}` on stderr; the kind is a stable word a \
         script can match, and the MCP tools and the desktop report the same kinds.\n\n\
         ## Exit codes\n\n`baton exit-codes` prints this table too.\n\n\
         | code | meaning |\n| --- | --- |\n",
    );
    for exit in baton_api::exit::TABLE {
        let _ = writeln!(text, "| {} | {} |", exit.code, cell(exit.meaning));
    }
    text.push_str(
        "\n## Error kinds\n\nAn error exits with status 1 unless its row says otherwise.\n\n\
         | kind | what it means, and what to do | exit |\n| --- | --- | --- |\n",
    );
    for kind in ErrorKind::ALL {
        let _ = writeln!(
            text,
            "| `{kind}` | {} | {} |",
            cell(kind.what_to_do()),
            baton_api::exit::for_error(kind).code
        );
    }
    Page {
        file: "errors.md".into(),
        text,
    }
}

/// Text for one cell of a Markdown table.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
