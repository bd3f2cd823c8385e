//! The folder store's doctor: the core's findings on the board, plus what only a folder can
//! have wrong (temp files an interrupted write left, result reports missing), found and
//! repaired under the folder's lock so no write is in flight.

use std::fs;

use baton_core::{DoctorReport, Finding, FindingKind, LogEntry, Result, StoreError, Timestamp};
use baton_fs::{FileLock, leftover_temp_files, write_atomic};

use crate::notes;
use crate::rewrite::encode;
use crate::store::FolderStore;

/// Finds problems; with `fix`, applies the safe repairs under the lock and says what changed.
pub(crate) fn doctor(store: &FolderStore, fix: bool) -> Result<DoctorReport> {
    let _lock = FileLock::exclusive(&store.layout().lock_file())?;
    let mut file = store.load()?;
    let now = Timestamp::now();
    let mut findings = baton_core::diagnose(&file, now, store.lease);
    // Under the lock no write is in flight, so every temp file is debris.
    for temp in leftover_temp_files(store.layout().root())? {
        findings.push(Finding {
            kind: FindingKind::LeftoverTempFile,
            task: None,
            message: format!("{} was left by an interrupted write", temp.display()),
            fixable: true,
        });
    }
    for link in links_in(store.layout().root()) {
        findings.push(Finding {
            kind: FindingKind::LinkInFolder,
            task: None,
            message: format!(
                "{} is a symbolic link: Baton refuses to read or write through it; look at \
                 where it leads, then remove it",
                link.display()
            ),
            fixable: false,
        });
    }
    for task in file.tasks.iter().filter(|t| t.status.is_final()) {
        if !store
            .layout()
            .result_file(&task.id)
            .is_ok_and(|p| p.exists())
        {
            findings.push(Finding {
                kind: FindingKind::MissingResult,
                task: Some(task.id.clone()),
                message: format!(
                    "{} is {} but results/{}.md is missing",
                    task.id, task.status, task.id
                ),
                fixable: baton_core::names::validate_task_id(&task.id).is_ok(),
            });
        }
    }
    let mut report = DoctorReport {
        findings,
        fixed: Vec::new(),
    };
    if !fix {
        return Ok(report);
    }
    let mut rewrite = false;
    for finding in report.findings.iter().filter(|f| f.fixable) {
        match (finding.kind, &finding.task) {
            (FindingKind::StaleLease, Some(id)) => {
                let owner = file
                    .task(id)
                    .and_then(|t| t.claimed_by.clone())
                    .unwrap_or_default();
                file.reset(id, now, store.lease, false)?;
                rewrite = true;
                report.fixed.push(format!(
                    "{id}: released from {owner} (lease expired); it is available again"
                ));
            }
            (FindingKind::MissingResult, Some(id)) => {
                if let Some(task) = file.task(id) {
                    notes::write_result(store.layout(), task)?;
                    report
                        .fixed
                        .push(format!("{id}: wrote results/{id}.md from tasks.json"));
                }
            }
            _ => {}
        }
    }
    for temp in leftover_temp_files(store.layout().root())? {
        fs::remove_file(&temp).map_err(|e| StoreError::io(&temp, e))?;
        report.fixed.push(format!("removed {}", temp.display()));
    }
    if rewrite {
        file.last_updated = Some(now);
        write_atomic(&store.layout().tasks_file(), &encode(&file)?)?;
    }
    for line in &report.fixed {
        store.log(&LogEntry::doctor_fix(line), now);
    }
    Ok(report)
}

/// The symbolic links in `root`, at any depth, but not inside the tasks' worktrees (checkouts of
/// the project, where a link is the project's own business).
fn links_in(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_symlink() => found.push(path),
                Ok(kind) if kind.is_dir() && path != root.join("worktrees") => folders.push(path),
                _ => {}
            }
        }
    }
    found.sort();
    found
}
