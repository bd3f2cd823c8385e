//! The `baton` command's exit codes, in one table: what each code means, which error kinds
//! lead to it, and the text `baton exit-codes` and the man page print about them (made from
//! the same table, so they cannot disagree).

use baton_core::ErrorKind;

/// One exit code and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: u8,
    pub meaning: &'static str,
}

pub const SUCCESS: Exit = Exit {
    code: 0,
    meaning: "success",
};
pub const ERROR: Exit = Exit {
    code: 1,
    meaning: "error (bad input, wrong state, unknown id, corrupt file, I/O); nothing was changed",
};
pub const USAGE: Exit = Exit {
    code: 2,
    meaning: "usage error (unknown command or option, missing argument)",
};
pub const NOTHING_TO_CLAIM: Exit = Exit {
    code: 3,
    meaning: "nothing to claim: no task is ready right now",
};
pub const DOCTOR_FINDINGS: Exit = Exit {
    code: 4,
    meaning: "problems remain: leader doctor (after --fix, those it cannot repair), agents check",
};
pub const TIMED_OUT: Exit = Exit {
    code: 5,
    meaning: "timed out: signal wait, worker claim --wait, ask or inbox --wait reached --timeout",
};
pub const WRITER_GONE: Exit = Exit {
    code: 6,
    meaning: "writer gone: a signal wait tied to --while-pid/--while-agent saw the writer stop",
};
pub const FILES_HELD: Exit = Exit {
    code: 7,
    meaning: "files held: check-paths found files another agent holds, or reserve was refused for them",
};
pub const MERGE_CONFLICT: Exit = Exit {
    code: 8,
    meaning: "merge conflict: leader merge was aborted on a conflict, leaving the lead's checkout as it was",
};
pub const CHECK_FAILED: Exit = Exit {
    code: 9,
    meaning: "check failed: the project's check command (.coordination/review.toml) failed on a task's branch (review check, leader merge, which merged nothing from there on)",
};
pub const TASKS_LEFT: Exit = Exit {
    code: 10,
    meaning: "tasks left: team up ended with tasks it worked failed, or tasks it could not reach (its verdict lists each, with why)",
};
pub const AGENTS_CANNOT_START: Exit = Exit {
    code: 11,
    meaning: "agents cannot start: a worker's agents failed to start 3 times in a row (a missing program, a typo in --exec), so it stopped; their tasks were handed back untouched",
};
pub const INTERRUPTED: Exit = Exit {
    code: 130,
    meaning: "interrupted: worker loop or team up stopped by Ctrl-C (running tasks handed back)",
};

/// Every exit code `baton` uses, in order.
pub const TABLE: [Exit; 13] = [
    SUCCESS,
    ERROR,
    USAGE,
    NOTHING_TO_CLAIM,
    DOCTOR_FINDINGS,
    TIMED_OUT,
    WRITER_GONE,
    FILES_HELD,
    MERGE_CONFLICT,
    CHECK_FAILED,
    TASKS_LEFT,
    AGENTS_CANNOT_START,
    INTERRUPTED,
];

/// The exit for a failed command of this kind.
pub fn for_error(kind: ErrorKind) -> Exit {
    match kind {
        ErrorKind::InvalidArguments => USAGE,
        ErrorKind::PathsHeld => FILES_HELD,
        ErrorKind::MergeConflict => MERGE_CONFLICT,
        _ => ERROR,
    }
}

/// The table as JSON, for `baton exit-codes --json`: `[{"code": 0, "meaning": "…"}, …]`.
pub fn table_json() -> serde_json::Value {
    TABLE
        .iter()
        .map(|exit| serde_json::json!({"code": exit.code, "meaning": exit.meaning}))
        .collect()
}

/// The table in words: `baton exit-codes`, and the man page's section.
pub fn help_text() -> String {
    let mut text = String::from("Exit codes:");
    for exit in TABLE {
        text.push_str(&format!("\n{:>3}  {}", exit.code, exit.meaning));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_ascending() {
        for pair in TABLE.windows(2) {
            assert!(pair[0].code < pair[1].code, "{pair:?}");
        }
    }

    #[test]
    fn usage_errors_and_other_errors_exit_differently() {
        assert_eq!(for_error(ErrorKind::InvalidArguments).code, 2);
        assert_eq!(for_error(ErrorKind::UnknownTask).code, 1);
    }
}
