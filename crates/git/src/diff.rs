//! What a task's branch changed, for the lead's review: the diff of `baton/T` against the point
//! where it left the lead's branch (`BASE...baton/T`, so commits the lead made since do not show
//! as the task's), one entry per file with its own patch, counted lines and whether it is
//! binary. Paths are the project's (a project in a subfolder of its repository sees only its
//! own files), and the project's `.coordination/` is left out.

use crate::error::{GitError, Result};
use crate::repo::nul_list;
use crate::worktree::{Worktrees, branch_name};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// One file of a branch's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// Its path before, when it was renamed.
    pub old_path: Option<String>,
    pub kind: FileChangeKind,
    pub additions: u64,
    pub deletions: u64,
    pub binary: bool,
    /// Its part of the unified diff, from its `diff --git` line.
    pub patch: String,
}

impl FileDiff {
    /// The line ranges its hunks show, first and last line numbered on the old side (`old`)
    /// or the new one: where a review comment may point.
    pub fn hunk_lines(&self, old: bool) -> Vec<(u32, u32)> {
        self.patch
            .lines()
            .filter_map(|line| line.strip_prefix("@@ "))
            .filter_map(|header| {
                let mut sides = header.split_whitespace();
                let (minus, plus) = (sides.next()?, sides.next()?);
                let range = if old {
                    minus.strip_prefix('-')?
                } else {
                    plus.strip_prefix('+')?
                };
                let (start, count) = match range.split_once(',') {
                    Some((start, count)) => {
                        (start.parse::<u32>().ok()?, count.parse::<u32>().ok()?)
                    }
                    None => (range.parse::<u32>().ok()?, 1),
                };
                (count > 0).then(|| (start, start + count - 1))
            })
            .collect()
    }

    /// Whether line `line` (of the old side with `old`) is shown by one of its hunks.
    pub fn shows_line(&self, line: u32, old: bool) -> bool {
        self.hunk_lines(old)
            .iter()
            .any(|(first, last)| (*first..=*last).contains(&line))
    }
}

/// A task branch's changes against its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchDiff {
    pub branch: String,
    /// The lead's branch it is compared with.
    pub base: String,
    /// The branch's commit the diff is of.
    pub head: String,
    /// The commit where it left the base.
    pub merge_base: String,
    /// Its commits are all in the base already (the diff is then what its merge brought).
    pub merged: bool,
    pub files: Vec<FileDiff>,
}

impl Worktrees {
    /// `task`'s branch and the commit it is at; [`GitError::NoBranch`] when it has none.
    pub fn branch_head(&self, task: &str) -> Result<(String, String)> {
        let branch = branch_name(task);
        if !self.repo().has_branch(&branch)? {
            return Err(GitError::NoBranch {
                task: task.to_string(),
                branch,
            });
        }
        let head = self.repo().commit_of(&branch)?;
        Ok((branch, head))
    }

    /// The diff of `task`'s branch against the lead's branch it started from (the branch the
    /// lead's checkout is on, for a branch that tracks none).
    pub fn branch_diff(&self, task: &str) -> Result<BranchDiff> {
        let repo = self.repo();
        let (branch, head) = self.branch_head(task)?;
        let base = match repo.upstream(&branch)? {
            Some(base) => base,
            None => repo.current_branch()?,
        };
        let merged = repo.is_merged(&branch)?;
        let merge_base = match merged {
            // Merged: what it brought, from where it left the base before its merge commit.
            true => match merge_commit(repo, &head, &base)? {
                Some(merge) => repo.git(&["merge-base", &format!("{merge}^1"), &head])?,
                None => head.clone(),
            },
            // Not merged yet: the task's own work, after its dependencies' (which merging
            // it brings too).
            false => match self.own_work_start(task)? {
                Some(start) => start,
                None => repo.git(&["merge-base", &base, &branch])?,
            },
        };
        let range = format!("{merge_base}..{head}");
        let mut common = vec!["-c", "core.quotePath=false", "diff", "--no-color"];
        common.extend(["--no-ext-diff", "--no-textconv", "--find-renames"]);
        let relative = format!("--relative={}", repo.prefix());
        if !repo.prefix().is_empty() {
            common.push(&relative);
        }
        let tail = [range.as_str(), "--", ".", ":(exclude).coordination"];
        let numstat = repo.git(&[&common[..], &["--numstat", "-z"], &tail[..]].concat())?;
        let status = repo.git(&[&common[..], &["--name-status", "-z"], &tail[..]].concat())?;
        let patch = repo.git(&[&common[..], &["--patch"], &tail[..]].concat())?;
        let mut files = parse_status(&status);
        count_lines(&mut files, &numstat);
        attach_patches(&mut files, &patch);
        Ok(BranchDiff {
            merged,
            branch,
            base,
            head,
            merge_base,
            files,
        })
    }
}

/// The first merge commit on `base` that brought `head` in, if it came by one.
fn merge_commit(repo: &crate::Repo, head: &str, base: &str) -> Result<Option<String>> {
    let merges = repo.git(&[
        "rev-list",
        "--ancestry-path",
        "--merges",
        "--reverse",
        &format!("{head}..{base}"),
    ])?;
    Ok(merges.lines().next().map(str::to_string))
}

/// `--name-status -z`: `M\0path\0`, `R100\0old\0new\0`.
fn parse_status(text: &str) -> Vec<FileDiff> {
    let mut fields = nul_list(text);
    let mut files = Vec::new();
    while let Some(code) = fields.next() {
        let kind = match code.chars().next() {
            Some('A') => FileChangeKind::Added,
            Some('D') => FileChangeKind::Deleted,
            Some('R') | Some('C') => FileChangeKind::Renamed,
            _ => FileChangeKind::Modified,
        };
        let old_path = match kind {
            FileChangeKind::Renamed => fields.next().map(str::to_string),
            _ => None,
        };
        let Some(path) = fields.next() else { break };
        files.push(FileDiff {
            path: path.to_string(),
            old_path,
            kind,
            additions: 0,
            deletions: 0,
            binary: false,
            patch: String::new(),
        });
    }
    files
}

/// `--numstat -z`: `ADDED\tDELETED\tpath\0`, or for a rename `ADDED\tDELETED\t\0old\0new\0`;
/// `-\t-\t` for a binary file.
fn count_lines(files: &mut [FileDiff], text: &str) {
    let mut fields = nul_list(text);
    while let Some(record) = fields.next() {
        let mut parts = record.splitn(3, '\t');
        let (Some(added), Some(deleted), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = if path.is_empty() {
            let _old = fields.next();
            fields.next().unwrap_or_default()
        } else {
            path
        };
        if let Some(file) = files.iter_mut().find(|f| f.path == path) {
            file.binary = added == "-";
            file.additions = added.parse().unwrap_or(0);
            file.deletions = deleted.parse().unwrap_or(0);
        }
    }
}

/// Gives each file its section of the patch: the sections come in the order `--name-status`
/// lists the files (one diff, the same options).
fn attach_patches(files: &mut [FileDiff], patch: &str) {
    let mut sections = Vec::new();
    let mut start = None;
    let mut at = 0;
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            if let Some(from) = start {
                sections.push(&patch[from..at]);
            }
            start = Some(at);
        }
        at += line.len();
    }
    if let Some(from) = start {
        sections.push(&patch[from..]);
    }
    for (file, section) in files.iter_mut().zip(sections) {
        file.patch = section.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_and_numstat_are_read_with_renames_and_binaries() {
        let mut files = parse_status("M\0src/a.rs\0R087\0old.txt\0new.txt\0A\0logo.png\0");
        count_lines(
            &mut files,
            "3\t1\tsrc/a.rs\x002\t0\t\0old.txt\0new.txt\0-\t-\tlogo.png\0",
        );
        assert_eq!(files.len(), 3);
        assert_eq!((files[0].additions, files[0].deletions), (3, 1));
        assert_eq!(files[1].kind, FileChangeKind::Renamed);
        assert_eq!(files[1].old_path.as_deref(), Some("old.txt"));
        assert_eq!((files[1].path.as_str(), files[1].additions), ("new.txt", 2));
        assert!(files[2].binary);
        assert_eq!(files[2].kind, FileChangeKind::Added);
    }

    #[test]
    fn each_file_gets_its_own_section_of_the_patch() {
        let mut files = parse_status("M\0a\0M\0b\0");
        let patch =
            "diff --git a/a b/a\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/b b/b\n@@ -1 +1 @@\n-p\n+q\n";
        attach_patches(&mut files, patch);
        assert_eq!(files[0].patch, "diff --git a/a b/a\n@@ -1 +1 @@\n-x\n+y\n");
        assert!(files[1].patch.starts_with("diff --git a/b b/b\n"));
        assert!(files[1].patch.ends_with("+q\n"));
    }
}
