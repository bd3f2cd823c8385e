import { Button, Checkbox, TextArea, TextField } from "@radix-ui/themes";
import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { DiffModeEnum, DiffView, SplitSide } from "@git-diff-view/react";
import "@git-diff-view/react/styles/diff-view-pure.css";
import { api, call, errorMessage } from "./api";
import type { MergeReport } from "./bindings/MergeReport";
import type { Review } from "./bindings/Review";
import type { ReviewComment } from "./bindings/ReviewComment";
import type { ReviewFile } from "./bindings/ReviewFile";
import type { TaskView } from "./types";
import { LARGE_FILE_LINES, PIECE_LINES, pieces } from "./review";
import { useLead } from "./scope";
import { NARROW, useMedia } from "./media";

interface Props {
  tasks: TaskView[];
  /** Bumped on every change from the feed: the chosen review is read again. */
  version: number;
  dark: boolean;
  onError: (message: string | null) => void;
  onChanged: () => void;
}

/** A done task's work before it is merged: its branch's diff against the lead's branch, file
 *  by file with syntax highlighting (`@git-diff-view/react`), comments on lines, "Request
 *  changes" (the task goes back to its worker, on its branch), the project's check and "Merge". */
export function ReviewView({ tasks, version, dark, onError, onChanged }: Props) {
  const done = tasks.filter((t) => t.status === "done");
  const [chosen, setChosen] = useState<string | null>(null);
  // The task shown stays shown while it is sent back and worked again (it is not done then).
  const first = done[0]?.id ?? null;
  useEffect(() => {
    if (chosen === null && first !== null) setChosen(first);
  }, [chosen, first]);
  const task = chosen ?? first;
  return (
    <section className="review-view" aria-label="Review" data-testid="review-view">
      <nav className="review-tasks" aria-label="Done tasks">
        <h2>Done tasks</h2>
        {done.length === 0 && <p className="empty">No task is done yet.</p>}
        <ul>
          {done.map((t) => (
            <li key={t.id}>
              <Button variant="soft" aria-pressed={t.id === task} onClick={() => setChosen(t.id)} data-testid={`review-task-${t.id}`}>
                {t.id}: {t.description}
              </Button>
            </li>
          ))}
        </ul>
      </nav>
      {task && <TaskReview key={task} task={task} version={version} dark={dark} onError={onError} onChanged={onChanged} />}
    </section>
  );
}

function TaskReview({ task, version, dark, onError, onChanged }: { task: string; version: number; dark: boolean; onError: (m: string | null) => void; onChanged: () => void }) {
  const [review, setReview] = useState<Review | null>(null);
  const [summary, setSummary] = useState("");
  // Sent back to the worker that did it unless the lead lets any worker take it.
  const [anyone, setAnyone] = useState(false);
  const [merge, setMerge] = useState<MergeReport | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const lead = useLead();
  const [reads, setReads] = useState(0);
  const reread = useCallback(() => setReads((n) => n + 1), []);
  useEffect(() => {
    let current = true;
    const asked = performance.now();
    call("task_review", { task }).then(
      (r) => {
        if (!current) return;
        // For the benchmark: how much of opening a review is the read.
        void api.timingMark(`review read in ${(performance.now() - asked).toFixed(1)} ms`);
        setReview(r);
      },
      // A read that fails (git busy while the worker commits) keeps what was shown.
      (e: unknown) => current && onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [task, version, reads, onError]);

  const act = <T,>(what: string, run: () => Promise<T>, then: (value: T) => void = () => {}) => {
    setBusy(what);
    run()
      .then(
        (value) => {
          onError(null);
          then(value);
          reread();
          onChanged();
        },
        (e: unknown) => onError(errorMessage(e)),
      )
      .finally(() => setBusy(null));
  };

  // For the benchmark: the frame after the review is first drawn.
  const opened = useRef(performance.now());
  const lines = review?.files.reduce((n, f) => n + f.additions + f.deletions, 0) ?? null;
  useEffect(() => {
    if (lines === null) return;
    const frame = requestAnimationFrame(() => void api.timingMark(`review opened: ${lines} changed lines in ${(performance.now() - opened.current).toFixed(1)} ms`));
    return () => cancelAnimationFrame(frame);
  }, [lines]);

  if (!review) return <p className="loading">Reading {task}'s branch…</p>;
  const open = review.comments.filter((c) => c.round === null).length;
  const check = review.check;
  return (
    <article className="task-review" data-testid="task-review">
      <h2>
        {review.task.id}: {review.task.description}
      </h2>
      {review.task.acceptance && (
        <p className="acceptance" data-testid="review-acceptance">
          Done when: {review.task.acceptance}
        </p>
      )}
      <p className="muted" data-testid="review-state">
        <span className="status">{review.task.status.replace("_", " ")}</span> · {review.branch} against {review.base} at <code>{review.head.slice(0, 12)}</code>
        {review.merged && " · merged"} · {review.files.length} file{review.files.length === 1 ? "" : "s"}
      </p>
      {review.judgements.length > 0 && (
        <ul className="judgements" data-testid="review-judgements">
          {review.judgements.map((said) => (
            <li key={`${said.head}-${said.at}`} data-approved={said.approved}>
              Judge {said.by} {said.approved ? "approved" : "asked for changes"} at <code>{said.head.slice(0, 12)}</code>
              {said.comment && <pre className="check-output">{said.comment}</pre>}
            </li>
          ))}
        </ul>
      )}
      {review.uncommitted.length > 0 && <p className="warning">Not committed in its worktree (not shown): {review.uncommitted.join(", ")}</p>}
      <div className="review-actions">
        {review.check_command && (
          <p data-testid="check" className={check ? (check.passed ? "passed" : "failed") : undefined}>
            Check <code>{review.check_command}</code>:{" "}
            {check ? (check.passed ? "passed" : `failed (exit code ${check.exit_code ?? "none: stopped"})`) : "not run on this commit"}{" "}
            {lead && (
              <Button variant="soft" disabled={busy !== null} onClick={() => act("check", () => call("review_check", { task }))} data-testid="run-check">
                {busy === "check" ? "Running…" : "Run check"}
              </Button>
            )}
          </p>
        )}
        {check && !check.passed && <pre className="check-output" data-testid="check-output">{check.output}</pre>}
        {review.queue_checks.length > 0 && (
          <ul className="queue-checks" data-testid="queue-checks">
            {review.queue_checks.map((run) => (
              <li key={`${run.head}-${run.started_at}`} className={run.passed ? "passed" : "failed"}>
                Merge queue, merged with {run.merged_with}: <code>{run.command}</code> on <code>{run.head.slice(0, 12)}</code>{" "}
                {run.passed ? "passed" : `failed (exit code ${run.exit_code ?? "none: stopped"})`}
              </li>
            ))}
          </ul>
        )}
        {!review.merged && (
          <>
            <label>
              Summary for the worker <TextArea className="summary" value={summary} onChange={(e) => setSummary(e.target.value)} rows={2} data-testid="review-summary" />
            </label>
            <label className="inline">
              <Checkbox checked={anyone} onCheckedChange={(c) => setAnyone(c === true)} data-testid="review-anyone" /> Any worker may take it (not only the one that did it)
            </label>
            <div className="buttons">
              <Button
                variant="soft"
                disabled={busy !== null || (open === 0 && summary.trim() === "")}
                onClick={() => act("changes", () => call("review_request_changes", { task, summary: summary.trim() || null, anyone }), () => setSummary(""))}
                data-testid="request-changes"
              >
                Request changes ({open} comment{open === 1 ? "" : "s"})
              </Button>{" "}
              {lead && (
                <Button variant="solid" disabled={busy !== null} onClick={() => act("merge", () => call("task_merge", { tasks: [task], all: false, no_check: false }), setMerge)} data-testid="merge">
                  {busy === "merge" ? "Merging…" : "Merge"}
                </Button>
              )}
            </div>
          </>
        )}
      </div>
      {merge && <MergeOutcome report={merge} onError={onError} onChanged={onChanged} />}
      {review.files.map((file) => (
        <FileDiff key={file.path} task={task} file={file} comments={review.comments} dark={dark} onError={onError} onCommented={reread} />
      ))}
    </article>
  );
}

function MergeOutcome({ report, onError, onChanged }: { report: MergeReport; onError: (m: string | null) => void; onChanged: () => void }) {
  const [added, setAdded] = useState<string | null>(null);
  if (report.check_failed) {
    const c = report.check_failed.check;
    return (
      <p className="error" role="alert" data-testid="merge-outcome">
        Not merged: the check <code>{c.command}</code> failed (exit code {c.exit_code ?? "none: stopped"}). Its output is above.
      </p>
    );
  }
  if (report.conflict) {
    const conflict = report.conflict;
    const addFollowUp = () =>
      api.addTask({ description: conflict.follow_up.description, priority: 1, depends: [], files: conflict.follow_up.files, hints: "", id: null, acceptance: null, proposed: false, sub_plan: false }).then(
        (t) => (setAdded(t.id), onChanged()),
        (e: unknown) => onError(errorMessage(e)),
      );
    return (
      <div className="error" role="alert" data-testid="merge-outcome">
        <p>
          Not merged: {conflict.branch} conflicts with {report.into ?? "your branch"} in {conflict.files.join(", ")}. Your checkout is as it was.
        </p>
        {added ? (
          <p>Added {added} to resolve it.</p>
        ) : (
          <Button variant="soft" onClick={() => void addFollowUp()} data-testid="add-follow-up">
            Add a task to resolve it
          </Button>
        )}
      </div>
    );
  }
  const merged = report.merged[0];
  return (
    <p className="notice" role="status" data-testid="merge-outcome">
      {merged ? (merged.already_merged ? `${merged.branch} is in ${report.into} already.` : `Merged ${merged.branch} into ${report.into} (${merged.files.length} files).`) : "Nothing to merge."}
    </p>
  );
}

type Notes = Record<string, { data: ReviewComment[] }>;

/** One file's diff, with its comments under their lines and a form on any line to add one. */
function FileDiff({ task, file, comments, dark, onError, onCommented }: { task: string; file: ReviewFile; comments: ReviewComment[]; dark: boolean; onError: (m: string | null) => void; onCommented: () => void }) {
  // A large file's first lines are drawn, the rest when asked (as code hosts do); what is
  // drawn goes a piece a frame, so the first lines show at once.
  const [whole, setWhole] = useState(false);
  const changed = file.additions + file.deletions;
  const shown = useMemo(() => pieces(file.patch, PIECE_LINES, whole ? Infinity : LARGE_FILE_LINES), [whole, file.patch]);
  const [drawn, setDrawn] = useState(1);
  const started = useRef(performance.now());
  useEffect(() => {
    let timer: number | undefined;
    const frame = requestAnimationFrame(() => {
      if (drawn < shown.pieces.length) timer = window.setTimeout(() => setDrawn((n) => n + 1));
      // For the benchmark: the frame after the whole file is drawn.
      else void api.timingMark(`file drawn: ${file.path}, ${shown.pieces.length} pieces in ${(performance.now() - started.current).toFixed(1)} ms`);
    });
    return () => (cancelAnimationFrame(frame), window.clearTimeout(timer));
  }, [drawn, shown, file.path]);
  const notes = useMemo(() => {
    const mine = comments.filter((c) => c.file === file.path || c.file === file.old_path);
    const on = (side: "new" | "old") =>
      mine
        .filter((c) => c.side === side)
        .reduce<Notes>((all, c) => {
          (all[c.line] ??= { data: [] }).data.push(c);
          return all;
        }, {});
    return { oldFile: on("old"), newFile: on("new") };
  }, [comments, file.path, file.old_path]);
  // On a phone, long lines wrap: the diff reads without scrolling sideways.
  const wrap = useMedia(NARROW);
  const comment = useCallback(
    (line: number, side: "old" | "new", text: string) => call("review_comment", { task, file: file.path, line, side, text }).then(() => (onError(null), onCommented())),
    [task, file.path, onError, onCommented],
  );
  return (
    <section className="file-diff" data-testid={`diff-${file.path}`} aria-label={`Changes to ${file.path}`}>
      <h3>
        {file.old_path ? `${file.old_path} → ` : ""}
        {file.path} <span className="muted">+{file.additions} −{file.deletions}</span>
      </h3>
      {file.binary ? (
        <p className="muted">A binary file.</p>
      ) : (
        shown.pieces
          .slice(0, drawn)
          .map((patch, i) => (
            <DiffPiece key={i} continued={shown.continued[i] ?? false} file={file} patch={patch} notes={notes} dark={dark} wrap={wrap} comment={comment} onError={onError} />
          ))
      )}
      {shown.cut && drawn >= shown.pieces.length && (
        <Button variant="soft" className="show-whole" onClick={() => setWhole(true)} data-testid={`show-whole-${file.path}`}>
          Show all {changed} changed lines (the first {LARGE_FILE_LINES} are drawn)
        </Button>
      )}
    </section>
  );
}

interface PieceProps {
  /** Goes on with the hunk of the piece above: its hunk header is not drawn. */
  continued: boolean;
  file: ReviewFile;
  patch: string;
  notes: { oldFile: Notes; newFile: Notes };
  dark: boolean;
  /** Long lines wrap instead of scrolling. */
  wrap: boolean;
  comment: (line: number, side: "old" | "new", text: string) => Promise<void>;
  onError: (m: string | null) => void;
}

/** A piece of a file's diff, drawn once: a piece drawn later does not draw it again. */
const DiffPiece = memo(function DiffPiece({ continued, file, patch, notes, dark, wrap, comment, onError }: PieceProps) {
  const data = useMemo(() => ({ oldFile: { fileName: file.old_path ?? file.path }, newFile: { fileName: file.path }, hunks: [patch] }), [file.old_path, file.path, patch]);
  // A diff wider than its box scrolls inside it: the keyboard must reach that box too.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.querySelectorAll<HTMLElement>(".unified-diff-table-wrapper").forEach((scroller) => {
      scroller.tabIndex = 0;
      scroller.setAttribute("role", "region");
      scroller.setAttribute("aria-label", `Diff of ${file.path}`);
    });
  });
  return (
    <div ref={box} className={continued ? "diff-continued" : undefined}>
      <DiffView<ReviewComment[]>
        data={data}
        diffViewWrap={wrap}
        extendData={notes}
        diffViewMode={DiffModeEnum.Unified}
        diffViewTheme={dark ? "dark" : "light"}
        diffViewHighlight
        diffViewAddWidget
        renderExtendLine={({ data }) => (
          <ul className="line-comments">
            {data.map((c) => (
              <li key={c.id} data-testid={`comment-${c.id}`}>
                <strong>{c.by}</strong>: {c.text} <span className="muted">{c.round === null ? "(open)" : `(sent in round ${c.round})`}</span>
              </li>
            ))}
          </ul>
        )}
        renderWidgetLine={({ side, lineNumber, onClose }) => (
          <CommentForm
            onCancel={onClose}
            onSend={(text) =>
              comment(lineNumber, side === SplitSide.old ? "old" : "new", text).then(onClose, (e: unknown) => onError(errorMessage(e)))
            }
          />
        )}
      />
    </div>
  );
});

function CommentForm({ onSend, onCancel }: { onSend: (text: string) => void; onCancel: () => void }) {
  const [text, setText] = useState("");
  return (
    <form className="comment-form" onSubmit={(e) => (e.preventDefault(), text.trim() && onSend(text.trim()))}>
      <label>
        Comment <TextField.Root autoFocus value={text} onChange={(e) => setText(e.target.value)} data-testid="comment-text" />
      </label>{" "}
      <Button variant="solid" type="submit" data-testid="comment-send">
        Comment
      </Button>{" "}
      <Button variant="soft" type="button" onClick={onCancel}>
        Cancel
      </Button>
    </form>
  );
}
