import { Button, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { call, errorMessage } from "./api";
import type { InboxView as Inbox } from "./bindings/InboxView";
import type { Question } from "./bindings/Question";
import { askPermission, canOffer } from "./notify";
import { PushSwitch } from "./PushSwitch";
import { useLead } from "./scope";

/** The approval choice that adds its rule to the policy (baton_api::approvals::ALWAYS). */
const ALWAYS_ALLOW = "always allow";
import { Skipped } from "./Skipped";

interface Props {
  /** Bumped on every change from the feed (a question asked or settled, a message): read again. */
  version: number;
  onError: (message: string | null) => void;
}

/** What waits for the lead: the agents' open questions and approvals, answered here with a
 *  choice or in words (an approval also "always allow", which adds its rule to the project's
 *  policy), and unread messages to the lead. The agent waiting on a question gets the answer
 *  at once, through the store. */
export function InboxView({ version, onError }: Props) {
  const [inbox, setInbox] = useState<Inbox | null>(null);
  const [offer, setOffer] = useState(canOffer);
  useEffect(() => {
    let current = true;
    call("inbox_read", { agent: null, all: false, task: null, wait: false, timeout_seconds: null }).then(
      (i) => current && setInbox(i),
      (e: unknown) => onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [version, onError]);

  // A link to one question (`/inbox#q-7`, a webhook's) shows it once the inbox has been read.
  const [linked, setLinked] = useState(() => window.location.hash.slice(1));
  useEffect(() => {
    if (!inbox || linked === "") return;
    document.getElementById(linked)?.scrollIntoView({ block: "center" });
    setLinked("");
  }, [inbox, linked]);

  if (!inbox) return <p className="loading">Reading the inbox…</p>;
  const open = inbox.questions.filter((q) => q.state.state === "open");
  const ack = (id: string) =>
    call("message_ack", { ids: [id], reader: null }).then(
      () => onError(null),
      (e: unknown) => onError(errorMessage(e)),
    );
  return (
    <section className="inbox-view" aria-label="Inbox" data-testid="inbox-view">
      <Skipped unreadable={inbox.unreadable} of="the inbox" prefix=".coordination/" />
      {inbox.limited.length > 0 && (
        <div className="notice" role="status" data-testid="limited">
          <p>Agents that hit their inbox limit (what they sent beyond it was refused):</p>
          <ul>
            {inbox.limited.map((l) => (
              <li key={l.agent}>
                <strong>{l.agent}</strong>: {l.messages_refused} message(s) and {l.questions_refused} question(s) refused
              </li>
            ))}
          </ul>
        </div>
      )}
      {offer && (
        <p className="notify-offer">
          <Button
            variant="soft"
            onClick={() => void askPermission().then(() => setOffer(canOffer()))}
            data-testid="notify-me"
          >
            Notify me of new questions
          </Button>{" "}
          <span className="muted">while this page is open</span>
        </p>
      )}
      <PushSwitch onError={onError} />
      <h2>Questions and approvals ({open.length})</h2>
      {open.length === 0 && <p className="empty">Nothing waits for you.</p>}
      <ul className="questions">
        {open.map((q) => (
          <QuestionItem key={q.id} question={q} onError={onError} />
        ))}
      </ul>
      <h2>Messages ({inbox.messages.length})</h2>
      {inbox.messages.length === 0 && <p className="empty">No unread messages.</p>}
      <ul className="messages" data-testid="messages">
        {inbox.messages.map((m) => (
          <li key={m.id} data-testid={`message-${m.id}`}>
            <p>
              <strong>{m.subject}</strong> from {m.from}
              {m.task && ` about ${m.task}`}
            </p>
            <p className="body">{m.body}</p>
            <Button variant="soft" onClick={() => void ack(m.id)}>Mark read</Button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function QuestionItem({ question, onError }: { question: Question; onError: (message: string | null) => void }) {
  const [text, setText] = useState("");
  const answer = (value: string) =>
    call("answer_question", { id: question.id, answer: value }).then(
      () => onError(null),
      (e: unknown) => onError(errorMessage(e)),
    );
  const about = question.about;
  // "Always allow" changes the project's policy: the lead's alone.
  const lead = useLead();
  return (
    <li className={`question ${about.kind}`} id={question.id} data-testid={`question-${question.id}`}>
      <p>
        <strong>{question.agent}</strong>
        {question.task && ` (${question.task})`} {ASKS[about.kind]}:
      </p>
      {about.kind === "approval" ? (
        <>
          <p className="tool-name">{about.tool}</p>
          <pre className="tool-input">{JSON.stringify(about.input, null, 2)}</pre>
        </>
      ) : about.kind === "plan" ? (
        <>
          <pre className="plan-text">{question.text}</pre>
          <Button variant="soft" color="green" onClick={() => void answer("approve")} data-testid={`approve-plan-${question.id}`}>
            Approve the plan
          </Button>
        </>
      ) : (
        <p className="question-text">{question.text}</p>
      )}
      <div className="choices" role="group" aria-label={`Answers to ${question.id}`}>
        {question.choices.filter((choice) => lead || choice !== ALWAYS_ALLOW).map((choice) => (
          <Button variant="soft" color={choiceColour(about.kind, choice)} key={choice} onClick={() => void answer(choice)} data-testid={`answer-${question.id}-${choice.replace(/\s+/g, "-")}`}>
            {choice}
          </Button>
        ))}
      </div>
      {question.choices.length === 0 && (
        <form onSubmit={(e) => (e.preventDefault(), text.trim() && void answer(text))}>
          <label>
            {about.kind === "plan" ? "Or tell the planner what to change" : "Your answer"} <TextField.Root value={text} onChange={(e) => setText(e.target.value)} data-testid={`answer-text-${question.id}`} />
          </label>{" "}
          <Button variant="soft" type="submit" data-testid={`answer-send-${question.id}`}>
            Answer
          </Button>
        </form>
      )}
    </li>
  );
}

/** What the asking agent wants, by the kind of question. */
const ASKS: Record<Question["about"]["kind"], string> = {
  question: "asks",
  approval: "asks to run",
  plan: "asks you to approve its plan",
  limit: "asks to go past a limit of its plan",
};

/** An approval's allow in green and deny in red (with their words: never colour alone). */
function choiceColour(kind: string, choice: string): "green" | "red" | undefined {
  if (kind !== "approval") return undefined;
  if (choice === "allow") return "green";
  if (choice === "deny") return "red";
  return undefined;
}
