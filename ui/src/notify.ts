// Browser notifications for the served UI: a question or approval an agent asks while a page
// is open shows as a notification, once the lead allowed them (the browser asks on a tap of the
// Inbox's "Notify me" button; it never asks unprompted). The desktop app has notifications of
// its own (its tray and the system's), so this is for a served page only.

import { served } from "./api";
import type { ChangeEvent } from "./bindings/ChangeEvent";

/** Whether the Inbox offers to turn notifications on: served, supported, not decided yet. */
export function canOffer(): boolean {
  return served && typeof Notification !== "undefined" && Notification.permission === "default";
}

/** Asks the browser for permission (on the lead's tap); resolves to whether it was given. */
export async function askPermission(): Promise<boolean> {
  if (typeof Notification === "undefined") return false;
  return (await Notification.requestPermission()) === "granted";
}

/** What a change says to notify of, if anything: a new question's title and text. */
export function noticeOf(change: ChangeEvent): { title: string; body: string; tag: string } | null {
  if (change.event !== "question_asked") return null;
  const { question } = change;
  const what = { question: "asks", approval: "asks to run a tool", plan: "asks you to approve its plan", limit: "asks to go past a limit of its plan" }[question.about.kind];
  return { title: `${question.agent} ${what}`, body: question.text, tag: question.id };
}

/** Shows `change` as a notification when it is a question and notifications are on. */
export function notify(change: ChangeEvent): void {
  if (!served || typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const notice = noticeOf(change);
  if (notice) new Notification(notice.title, { body: notice.body, tag: notice.tag });
}
