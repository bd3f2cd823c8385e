import { Button, Callout, TextField } from "@radix-ui/themes";
import { Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, errorKind, errorMessage, onChanges, onOpenView, onStartSession, served, type ProjectInfo, type View } from "./api";
import { notify } from "./notify";
import { serialReads } from "./changes";
import { withUpdate } from "./board";
import { LeadContext } from "./scope";
import { Nav, type Waiting } from "./Nav";
import { ServePanel } from "./ServePanel";
import { Board } from "./Board";
import { NewTaskForm } from "./NewTaskForm";
import { BrowserSession } from "./BrowserSession";
import { SidePanel } from "./SidePanel";
import { HandoffGraphView } from "./HandoffGraphView";
import { AgentsView } from "./AgentsView";
import { TeamView } from "./TeamView";
import { InboxView } from "./InboxView";
// The diff component and its highlighter are most of the UI's code: loaded when the Review
// view first opens, so the board starts as fast as before.
const ReviewView = lazy(() => import("./ReviewView").then((m) => ({ default: m.ReviewView })));
import { FilterBar } from "./FilterBar";
import { NO_FILTER, filterTasks, isActive, loadFilter, saveFilter, type BoardFilter } from "./filters";
import type { RecentProject, StatusReport } from "./types";
import { DARK, NARROW, useMedia } from "./media";
import { AlertTriangle } from "lucide-react";

/** The window: the open project's board, or a way to open or create one. */
export function App() {
  const [project, setProject] = useState<ProjectInfo | null>(null);
  const dark = useMedia(DARK);
  // A served page learns its device's scope; until then it offers only what anyone may do.
  const [lead, setLead] = useState(!served);
  useEffect(() => {
    if (served) api.whoami().then((me) => setLead(me.scope === "lead"), () => setLead(false));
  }, []);
  const [report, setReport] = useState<StatusReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  // A phone opens on the Inbox (what waits for the lead); a desk on the board.
  const [view, setView] = useState<View>(() => (window.matchMedia?.(NARROW).matches ? "inbox" : "board"));
  // Served to a browser that is not paired (or was revoked): say how to pair.
  const [unpaired, setUnpaired] = useState(false);
  // The tray's questions line opens the Inbox; its "Start manual session", the Browser view.
  useEffect(() => {
    const unlisten = onOpenView(setView);
    const unlistenStart = onStartSession(() => setView("browser"));
    return () => {
      void unlisten.then((stop) => stop());
      void unlistenStart.then((stop) => stop());
    };
  }, []);
  const narrow = useMedia(NARROW);
  // On a phone, the board's form or filters when the lead asked for them.
  const [tools, setTools] = useState<"new" | "filters" | null>(null);
  const [filter, setFilterState] = useState<BoardFilter>(NO_FILTER);
  // The filter is kept per project, so a restart shows the board as it was left.
  const projectPath = project?.path ?? null;
  useEffect(() => {
    setFilterState(projectPath ? loadFilter(localStorage, projectPath) : NO_FILTER);
  }, [projectPath]);
  const setFilter = useCallback(
    (next: BoardFilter) => {
      setFilterState(next);
      if (projectPath) saveFilter(localStorage, projectPath, next);
    },
    [projectPath],
  );
  const shownTasks = useMemo(() => (report ? filterTasks(report.tasks, filter) : []), [report, filter]);

  const [questions, setQuestions] = useState(0);
  // The board is read with the landed work when the filter asks for it.
  const landed = useRef(filter.landed);
  landed.current = filter.landed;
  // The board as last read, and its generation: a read asks for what changed since.
  const held = useRef<{ generation: number; report: StatusReport } | null>(null);
  const readStatus = useCallback(async () => {
    try {
      const known = held.current;
      let update = await api.board(landed.current, known?.generation ?? null);
      // Cards whose task did not change keep their object, so they are not drawn again.
      let next = withUpdate(known?.report ?? null, update);
      if (next === null) {
        update = await api.board(landed.current, null);
        next = update.report;
      }
      held.current = { generation: update.generation, report: next };
      setReport(next);
      setVersion((v) => v + 1);
    } catch (e: unknown) {
      setError(errorMessage(e));
    }
  }, []);
  // What waits for the lead, for the Inbox's count, and the Review's (done tasks whose branch is
  // not in the lead's yet: a landed one waits no more).
  // A read that fails (git busy landing a task, the store restarting) keeps the last count: a
  // badge that drops to 0 and back says something false twice.
  const readQuestions = useCallback(() => api.openQuestions().then(setQuestions, () => undefined), []);
  const [reviews, setReviews] = useState(0);
  const readReviews = useCallback(() => api.reviewsWaiting().then(setReviews, () => undefined), []);
  // One reader of each for the feed's batches and the lead's own actions alike: never two
  // reads at a time, so an older answer cannot land after a newer one.
  const statusReads = useMemo(() => serialReads(readStatus), [readStatus]);
  const questionReads = useMemo(() => serialReads(readQuestions), [readQuestions]);
  const reviewReads = useMemo(() => serialReads(readReviews), [readReviews]);
  // Asked for (or no longer), the landed work is read at once.
  const withLanded = filter.landed;
  useEffect(() => {
    if (projectPath) statusReads.start();
  }, [withLanded, projectPath, statusReads]);
  const refresh = useCallback(() => {
    statusReads.start();
    questionReads.start();
    reviewReads.start();
  }, [statusReads, questionReads, reviewReads]);
  const waiting: Waiting = useMemo(
    () => ({
      questions,
      failed: report?.counts.failed ?? 0,
      reviews,
    }),
    [questions, report, reviews],
  );
  const showError = useCallback((message: string) => setError(message), []);

  useEffect(() => {
    Promise.all([api.projectInfo(), api.initialView()]).then(([info, initial]) => {
      if (initial) setView(initial);
      setProject(info);
      if (info) refresh();
    }, (e: unknown) => (errorKind(e) === "not_paired" ? setUnpaired(true) : setError(errorMessage(e))));
  }, [refresh]);

  // Tell the backend once the board has been drawn (for the start-up figure), and after each
  // redraw (for the change-to-board figure; the backend only prints it when timing). The
  // Agents view tells it of its own draws.
  const painted = report !== null && view === "board";
  useEffect(() => {
    if (!painted) return;
    const frame = requestAnimationFrame(() => void api.boardPainted());
    return () => cancelAnimationFrame(frame);
  }, [painted]);
  const boardShown = view === "board";
  useEffect(() => {
    if (version < 2 || !boardShown) return;
    const frame = requestAnimationFrame(() => void api.boardUpdated());
    return () => cancelAnimationFrame(frame);
  }, [version, boardShown]);

  useEffect(() => {
    if (!project) return;
    // Changes from any process (a worker's CLI, an MCP server) arrive in batches, one per
    // command: each is read at once, once (and one more time if another came meanwhile).
    const unlisten = onChanges((batch) => {
      batch.forEach(notify);
      statusReads.start();
      reviewReads.start();
      if (batch.some((change) => change.event === "question_asked" || change.event === "question_settled")) questionReads.start();
    });
    return () => void unlisten.then((stop) => stop());
  }, [project, statusReads, questionReads, reviewReads]);

  if (unpaired)
    return (
      <main className="unpaired" data-testid="unpaired">
        <h1>Baton</h1>
        <p>This browser is not paired with this Baton.</p>
        <p>
          On the machine that serves it, run <code>baton serve pair</code> and open the link it prints (or scan its QR code) here.
        </p>
      </main>
    );
  if (!project) return served ? <main aria-busy="true" /> : <OpenProject onOpen={(info) => { setProject(info); refresh(); }} />;
  const views: readonly View[] = served ? SERVED_VIEWS : ALL_VIEWS;
  return (
    <LeadContext.Provider value={lead}>
      <div className="app">
        <Nav view={view} waiting={waiting} views={views} onView={setView} />
        <main>
          <header className="project">
            <h1 className="visually-hidden">Baton</h1>
            <span className="goal" data-testid="goal">{report?.goal ?? project.goal ?? ""}</span>
            <span className="path">{project.path}</span>
            {project.store && (
              <span className="store" data-testid="store" title="Tasks, signals and handoffs are shared through the database; browsers and the manual session are this machine's.">
                Kept in {project.store} · browsers on this machine
              </span>
            )}
            {report && (
              <span className="counts" data-testid="counts">
                {report.counts.proposed > 0 && `${report.counts.proposed} proposed · `}
                {report.counts.available} available · {report.counts.claimed} claimed · {report.counts.in_progress} in progress ·{" "}
                {report.counts.done} done · {report.counts.failed} failed
                {report.counts.cancelled > 0 && ` · ${report.counts.cancelled} cancelled`}
              </span>
            )}
            {!served && (
              <Button variant="soft" data-testid="switch-project" onClick={() => setProject(null)}>
                Switch project
              </Button>
            )}
          </header>
          {notice && (
            <Callout.Root color="green" size="1" role="status" className="callout" data-testid="notice">
              <Callout.Text>{notice}</Callout.Text>
            </Callout.Root>
          )}
          {error && (
            <Callout.Root color="red" size="1" role="alert" className="callout" data-testid="error">
              <Callout.Icon>
                <AlertTriangle aria-hidden="true" size={16} />
              </Callout.Icon>
              <Callout.Text>
                {error}{" "}
                <Button size="1" variant="ghost" onClick={() => setError(null)}>
                  dismiss
                </Button>
              </Callout.Text>
            </Callout.Root>
          )}
          {/* Always there on the desk, shown in its own view: the tray can start a session from any view. */}
          {report && !served && (
            <div hidden={view !== "browser"}>
              <BrowserSession onError={showError} />
            </div>
          )}
          {report && view === "graph" && <HandoffGraphView onError={showError} />}
          {report && view === "agents" && (
            <AgentsView
              onError={setError}
              onChanged={refresh}
              onShowTask={(id) => {
                setSelected(id);
                setView("board");
              }}
            />
          )}
          {report && view === "team" && <TeamView version={version} onError={setError} />}
          {report && view === "team" && !served && <ServePanel onError={showError} />}
          {report && view === "inbox" && <InboxView version={version} onError={setError} />}
          {report && view === "review" && (
            <Suspense fallback={<p className="loading">Loading the review…</p>}>
              <ReviewView tasks={report.tasks} version={version} dark={dark} onError={setError} onChanged={refresh} />
            </Suspense>
          )}
          {report && view === "board" && narrow && (
            // On a phone the form and the filters wait behind a tap: the cards come first.
            <div className="board-toggles">
              {lead && (
                <Button variant="soft" aria-expanded={tools === "new"} onClick={() => setTools(tools === "new" ? null : "new")} data-testid="show-new-task">
                  New task
                </Button>
              )}
              <Button variant="soft" aria-expanded={tools === "filters"} onClick={() => setTools(tools === "filters" ? null : "filters")} data-testid="show-filters">
                {isActive(filter) ? `Filters (${shownTasks.length} of ${report.tasks.length})` : "Filters"}
              </Button>
            </div>
          )}
          {report && view === "board" && lead && (!narrow || tools === "new") && <NewTaskForm tasks={report.tasks} onError={setError} onAdded={refresh} />}
          {report && view === "board" && (!narrow || tools === "filters") && (
            <div className="board-tools">
              <FilterBar tasks={report.tasks} shown={shownTasks.length} filter={filter} onChange={setFilter} />
              {lead && (
                <Button
                  variant="soft"
                  data-testid="aggregate"
                  onClick={() =>
                    api.aggregate().then(
                      (a) => setNotice(`Wrote ${a.path}: ${a.done} done, ${a.failed} failed, ${a.unfinished} unfinished`),
                      (e: unknown) => setError(errorMessage(e)),
                    )
                  }
                >
                  Aggregate to summary.md
                </Button>
              )}
            </div>
          )}
          {report && view === "board" && (
            <div className="workspace">
              <Board
                report={report}
                shown={shownTasks}
                filtered={shownTasks !== report.tasks}
                narrow={narrow}
                onError={setError}
                onChanged={refresh}
                onSelect={setSelected}
                selected={selected}
              />
              <SidePanel
                selected={report.tasks.find((t) => t.id === selected) ?? null}
                tasks={report.tasks}
                version={version}
                onError={showError}
                onChanged={refresh}
              />
            </div>
          )}
        </main>
      </div>
    </LeadContext.Provider>
  );
}

/** The views of the desktop app, and of a served page (no browser controls: they are this
 *  machine's). */
const ALL_VIEWS: readonly View[] = ["inbox", "team", "board", "review", "agents", "graph", "browser"];
const SERVED_VIEWS: readonly View[] = ALL_VIEWS.filter((v) => v !== "browser");

/** Open a project: a recent one, a folder from the dialog or typed in; a folder without
 *  `.coordination/` is offered `leader init`. */
function OpenProject({ onOpen }: { onOpen: (info: ProjectInfo) => void }) {
  const [path, setPath] = useState("");
  const [goal, setGoal] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [offerInit, setOfferInit] = useState<string | null>(null);
  const [recent, setRecent] = useState<RecentProject[]>([]);
  // A folder whose database needs a password the usual places (PGPASSWORD, ~/.pgpass) lack.
  const [askPassword, setAskPassword] = useState<string | null>(null);
  const [password, setPassword] = useState("");
  const [url, setUrl] = useState("");
  const [dbProject, setDbProject] = useState("");

  useEffect(() => {
    api.recentProjects().then(setRecent, (e: unknown) => setError(errorMessage(e)));
  }, []);

  const failed = (folder: string) => (e: unknown) => {
    const kind = errorKind(e);
    if (kind === "not_initialized") setOfferInit(folder);
    else {
      if (kind === "database") setAskPassword(folder);
      setError(errorMessage(e));
    }
  };

  const open = (folder: string, typed: string | null = null) => {
    setPath(folder);
    setError(null);
    setOfferInit(null);
    api.openProject(folder, typed).then(onOpen, failed(folder));
  };

  const connect = () => {
    setError(null);
    api.connectDatabase(path, url, dbProject, password || null).then(onOpen, (e: unknown) => setError(errorMessage(e)));
  };

  return (
    <main className="open" data-testid="open-project">
      <h1>Baton</h1>
      {recent.length > 0 && (
        <section className="recent">
          <h2>Recent projects</h2>
          <ul data-testid="recent-projects">
            {recent.map((r) => (
              <li key={r.path}>
                <Button variant="soft" disabled={!r.exists} title={r.exists ? r.path : `${r.path} has no .coordination/ any more`} onClick={() => open(r.path)}>
                  {r.goal ?? r.path}
                </Button>{" "}
                <span className="path">{r.path}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <label>
        Project folder{" "}
        <TextField.Root value={path} onChange={(e) => setPath(e.target.value)} placeholder="/path/to/project" data-testid="project-path" />
      </label>
      <Button variant="solid" data-testid="open-path" onClick={() => open(path)}>
        Open
      </Button>
      <Button
        variant="soft"
        data-testid="choose-folder"
        onClick={() =>
          api.pickFolder(path).then(
            (folder) => folder && open(folder),
            (e: unknown) => setError(errorMessage(e)),
          )
        }
      >
        Choose folder…
      </Button>
      {askPassword && (
        <section className="password" data-testid="ask-password">
          <label>
            Database password for {askPassword} (used for this connection only, never saved){" "}
            <TextField.Root type="password" value={password} onChange={(e) => setPassword(e.target.value)} data-testid="password" />
          </label>
          <Button variant="solid" data-testid="open-with-password" onClick={() => open(askPassword, password)}>
            Open
          </Button>
        </section>
      )}
      <details className="database" data-testid="database-form">
        <summary>A project kept in PostgreSQL</summary>
        <p>
          The folder above is this machine's side of the project (its browsers, agent definitions and a pointer to the database, without
          the password), as <code>baton connect</code> leaves it.
        </p>
        <label>
          Database URL <TextField.Root value={url} onChange={(e) => setUrl(e.target.value)} placeholder="postgres://user@host:5432/db" data-testid="database-url" />
        </label>
        <label>
          Project name <TextField.Root value={dbProject} onChange={(e) => setDbProject(e.target.value)} placeholder="the folder's name" data-testid="database-project" />
        </label>
        <label>
          Password <TextField.Root type="password" value={password} onChange={(e) => setPassword(e.target.value)} placeholder="or PGPASSWORD, ~/.pgpass" data-testid="database-password" />
        </label>
        <Button variant="solid" data-testid="connect-database" onClick={connect}>
          Connect
        </Button>
      </details>
      {offerInit && (
        <section className="init" data-testid="offer-init">
          <p>
            {offerInit} has no <code>.coordination/</code> yet. Start a project there (<code>baton leader init</code>):
          </p>
          <label>
            Goal <TextField.Root value={goal} onChange={(e) => setGoal(e.target.value)} data-testid="init-goal" />
          </label>
          <Button variant="solid" data-testid="init-project" onClick={() => api.leaderInit(offerInit, goal).then(onOpen, (e: unknown) => setError(errorMessage(e)))}>
            Create
          </Button>
        </section>
      )}
      {error && (
        <p className="error" role="alert" data-testid="open-error">
          {error}
        </p>
      )}
    </main>
  );
}
