//! What a shell command line runs: the simple commands of a compound one, each as the program
//! and arguments it starts, for the approval policy's deny rules (`Bash(rm:*)` must refuse
//! `true && rm -rf x`, `env rm …`, `/bin/rm …` and `sh -c 'rm …'` alike).
//!
//! This is not a shell. It reads quotes, escapes and the operators that join commands (`&&`,
//! `||`, `;`, `|`, `&`, line breaks, `( )`, `{ }`), takes what a substitution (`$( )`, backticks)
//! or a `sh -c`/`eval` string runs as commands of their own, and drops what only sets up the
//! command: variable assignments, redirections, and wrappers that run the rest of their words
//! (`env`, `command`, `exec`, `nohup`, `nice`, `timeout`, `sudo`, `time`, `xargs`). Anything it
//! cannot read (an unclosed quote) counts as one command more, as written, so a deny rule errs
//! towards refusing. An allow rule never uses this: it allows one plain command only.

/// Wrappers that run the command in the rest of their words, and how many words after their
/// options they take for themselves (`timeout 5 rm` runs `rm`).
const WRAPPERS: [(&str, usize); 11] = [
    ("env", 0),
    ("command", 0),
    ("builtin", 0),
    ("exec", 0),
    ("nohup", 0),
    ("nice", 0),
    ("time", 0),
    ("sudo", 0),
    ("doas", 0),
    ("xargs", 0),
    ("timeout", 1),
];

/// Shells whose `-c STRING` is a command line of its own.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "busybox"];

/// How deep substitutions and `sh -c` strings are followed before the rest counts as written.
const MAX_DEPTH: usize = 8;

/// Every simple command `line` runs, each as its words with the program named by its file
/// name (`/bin/rm` is `rm`), wrappers and assignments taken off.
pub fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    collect(line, 0, &mut found);
    found
}

/// The same, each joined back into one line with single spaces (what a rule's specifier is
/// compared with).
pub fn simple_command_lines(line: &str) -> Vec<String> {
    simple_commands(line)
        .into_iter()
        .filter(|words| !words.is_empty())
        .map(|words| words.join(" ").trim().to_string())
        .collect()
}

fn collect(line: &str, depth: usize, found: &mut Vec<Vec<String>>) {
    if depth > MAX_DEPTH {
        found.push(vec![line.trim().to_string()]);
        return;
    }
    let lexed = lex(line);
    for inner in &lexed.substitutions {
        collect(inner, depth + 1, found);
    }
    if lexed.unclosed {
        found.push(vec![line.trim().to_string()]);
    }
    for words in lexed.commands {
        let words = unwrap(words);
        let Some(program) = words.first() else {
            continue;
        };
        if SHELLS.contains(&program.as_str())
            && let Some(script) = shell_script(&words)
        {
            collect(script, depth + 1, found);
        } else if program == "eval" {
            collect(&words[1..].join(" "), depth + 1, found);
        }
        found.push(words);
    }
}

/// The script of a shell's words (`sh -c SCRIPT`, `bash -lc SCRIPT`, `bash -e -c SCRIPT`): the
/// first word after its options, when one of them is `-c`.
fn shell_script(words: &[String]) -> Option<&String> {
    let options = words[1..]
        .iter()
        .take_while(|w| w.starts_with('-') && !w.starts_with("--") && w.len() > 1);
    let mut command = false;
    let mut count = 0;
    for option in options {
        command |= option.contains('c');
        count += 1;
    }
    command.then(|| words.get(1 + count)).flatten()
}

/// A command line read into simple commands.
#[derive(Default)]
struct Lexed {
    commands: Vec<Vec<String>>,
    /// What `$( )` and backticks run.
    substitutions: Vec<String>,
    /// A quote or substitution was not closed.
    unclosed: bool,
}

fn lex(line: &str) -> Lexed {
    let mut out = Lexed::default();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                match chars.next() {
                    Some('\n') => {}
                    Some(next) => word.push(next),
                    None => {}
                }
                in_word = true;
            }
            '\'' => {
                in_word = true;
                let mut closed = false;
                for next in chars.by_ref() {
                    if next == '\'' {
                        closed = true;
                        break;
                    }
                    word.push(next);
                }
                out.unclosed |= !closed;
            }
            '"' => {
                in_word = true;
                let mut closed = false;
                while let Some(next) = chars.next() {
                    match next {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                word.push(escaped);
                            }
                        }
                        '`' => out.unclosed |= !take_backticks(&mut chars, &mut out),
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            out.unclosed |= !take_parenthesised(&mut chars, &mut out);
                        }
                        _ => word.push(next),
                    }
                }
                out.unclosed |= !closed;
            }
            '`' => {
                in_word = true;
                out.unclosed |= !take_backticks(&mut chars, &mut out);
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                in_word = true;
                out.unclosed |= !take_parenthesised(&mut chars, &mut out);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut words);
                out.commands.push(std::mem::take(&mut words));
            }
            '<' | '>' => {
                // A redirection: its target is not a word of the command, nor the number of
                // the descriptor it redirects (`2>&1`).
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut word, &mut in_word, &mut words);
                while matches!(chars.peek(), Some('>' | '<' | '&' | '|')) {
                    chars.next();
                }
                while matches!(chars.peek(), Some(' ' | '\t')) {
                    chars.next();
                }
                while chars
                    .peek()
                    .is_some_and(|c| !c.is_whitespace() && !";&|()<>".contains(*c))
                {
                    chars.next();
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    out.commands.push(words);
    out.commands.retain(|words| !words.is_empty());
    for words in &mut out.commands {
        // `{ rm x; }`: the braces group, they run nothing.
        words.retain(|w| w != "{" && w != "}");
    }
    out
}

/// Reads a backtick substitution after its opening backtick; false when it is not closed.
fn take_backticks(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut Lexed) -> bool {
    let mut inner = String::new();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                out.substitutions.push(inner);
                return true;
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    inner.push(next);
                }
            }
            c => inner.push(c),
        }
    }
    out.substitutions.push(inner);
    false
}

/// Reads a `$( )` substitution after its `$(`; false when it is not closed.
fn take_parenthesised(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut Lexed,
) -> bool {
    let mut inner = String::new();
    let mut depth = 1;
    let mut quote: Option<char> = None;
    for c in chars.by_ref() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    out.substitutions.push(inner);
                    return true;
                }
            }
            _ => {}
        }
        inner.push(c);
    }
    out.substitutions.push(inner);
    false
}

/// The command a simple command's words run: assignments and wrappers taken off, the program
/// named by its file name.
fn unwrap(mut words: Vec<String>) -> Vec<String> {
    loop {
        while words.first().is_some_and(|w| is_assignment(w)) {
            words.remove(0);
        }
        let Some(first) = words.first_mut() else {
            return words;
        };
        if let Some(name) = first.rsplit('/').next().filter(|n| !n.is_empty()) {
            *first = name.to_string();
        }
        let Some((_, takes)) = WRAPPERS.iter().find(|(name, _)| *name == words[0]) else {
            return words;
        };
        // The wrapper, its options (and their values, when they take one: `-u NAME`,
        // `-n 5`, `-s SIGNAL`), then what it takes for itself.
        let mut at = 1;
        while let Some(word) = words.get(at) {
            if word == "--" {
                at += 1;
                break;
            }
            if !word.starts_with('-') || word == "-" {
                break;
            }
            let takes_value = matches!(
                word.as_str(),
                "-u" | "-n" | "-s" | "-k" | "-C" | "-g" | "-p" | "-I" | "-L" | "-P" | "-d"
            );
            at += if takes_value { 2 } else { 1 };
        }
        at += takes;
        words.drain(..at.min(words.len()));
    }
}

/// `NAME=VALUE` before a command.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(line: &str) -> Vec<String> {
        simple_command_lines(line)
    }

    #[test]
    fn compound_commands_are_read_into_each_command_they_run() {
        assert_eq!(programs("cargo test"), ["cargo test"]);
        assert_eq!(programs("true && rm -rf x"), ["true", "rm -rf x"]);
        assert_eq!(programs("a; b || c | d & e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(programs("a\nrm x"), ["a", "rm x"]);
        assert_eq!(programs("(cd x && rm y)"), ["cd x", "rm y"]);
        assert_eq!(programs("{ rm y; }"), ["rm y"]);
    }

    #[test]
    fn wrappers_paths_and_assignments_are_taken_off() {
        assert_eq!(programs("env rm -rf ~"), ["rm -rf ~"]);
        assert_eq!(programs("env -i FOO=1 rm x"), ["rm x"]);
        assert_eq!(programs("env -u HOME rm x"), ["rm x"]);
        assert_eq!(programs("/bin/rm x"), ["rm x"]);
        assert_eq!(programs("FOO=bar /usr/bin/env rm x"), ["rm x"]);
        assert_eq!(programs("timeout -s KILL 5 nice -n 3 rm x"), ["rm x"]);
        assert_eq!(programs("sudo -u root command rm x"), ["rm x"]);
        assert_eq!(programs("\\rm x"), ["rm x"]);
        assert_eq!(programs("'rm' x"), ["rm x"]);
        assert_eq!(programs("r\"m\" x"), ["rm x"]);
        assert_eq!(programs("find . | xargs rm"), ["find .", "rm"]);
    }

    #[test]
    fn substitutions_and_shell_strings_count_as_commands() {
        assert_eq!(programs("echo $(rm x)"), ["rm x", "echo"]);
        assert_eq!(programs("echo `rm x`"), ["rm x", "echo"]);
        assert_eq!(programs("echo \"$(rm x)\""), ["rm x", "echo"]);
        assert_eq!(programs("sh -c 'rm -rf x'"), ["rm -rf x", "sh -c rm -rf x"]);
        assert_eq!(
            programs("bash -lc \"true; rm y\""),
            ["true", "rm y", "bash -lc true; rm y"]
        );
        assert_eq!(programs("bash -e -c 'rm y'"), ["rm y", "bash -e -c rm y"]);
        assert_eq!(programs("bash script.sh -c x"), ["bash script.sh -c x"]);
        assert_eq!(programs("eval rm x"), ["rm x", "eval rm x"]);
    }

    #[test]
    fn quoted_operators_and_redirections_are_not_commands() {
        assert_eq!(
            programs("git commit -m \"fix; rm stuff\""),
            ["git commit -m fix; rm stuff"]
        );
        assert_eq!(programs("cargo test > out.txt 2>&1"), ["cargo test"]);
        assert_eq!(programs("cat < in.txt"), ["cat"]);
    }

    #[test]
    fn what_cannot_be_read_counts_as_written() {
        let lines = programs("echo 'unclosed && rm x");
        assert!(
            lines.contains(&"echo 'unclosed && rm x".to_string()),
            "{lines:?}"
        );
        let deep = "sh -c ".repeat(20) + "rm x";
        assert!(!programs(&deep).is_empty());
    }
}
