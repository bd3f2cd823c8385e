// Browser notifications for the served UI: a question or approval an agent asks while a page
// is open shows as a notification, once the lead allowed them (the browser asks on a tap of the
// Inbox's "Notify me" button; it never asks unprompted); and pushes while no page is open, once
// the lead turned them on for the device (Web Push: `public/sw.js` shows them). The desktop app
// has notifications of its own (its tray and the system's), so this is for a served page only.

import { api, served } from "./api";
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

/** Whether this page can be pushed to when it is closed, and if not, why (said to the lead). */
export function pushSupport(): { ok: true } | { ok: false; why: string } {
  if (!served) return { ok: false, why: "the desktop app notifies by itself" };
  if (typeof window !== "undefined" && !window.isSecureContext) {
    return { ok: false, why: "a browser pushes only to a page served over HTTPS: serve with --tls (see the guide's phone page)" };
  }
  if (!("serviceWorker" in navigator) || typeof PushManager === "undefined") {
    return { ok: false, why: "this browser has no Web Push (on an iPhone: add the page to the home screen first)" };
  }
  return { ok: true };
}

/** The server's key in the form `pushManager.subscribe` takes. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  const text = atob(base64);
  const bytes = new Uint8Array(new ArrayBuffer(text.length));
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Whether a subscription was made with `key` (a new project key needs a new subscription). */
function madeWith(subscription: PushSubscription, key: Uint8Array): boolean {
  const had = subscription.options.applicationServerKey;
  if (!had) return false;
  const bytes = new Uint8Array(had);
  return bytes.length === key.length && bytes.every((b, i) => b === key[i]);
}

/** Subscribes this page's browser to the server's pushes (on the lead's tap: the browser asks
 *  for permission). Rejects with why, in words, when it cannot. */
export async function startPushes(): Promise<void> {
  const support = pushSupport();
  if (!support.ok) throw new Error(`Cannot push to this page: ${support.why}.`);
  if ((await Notification.requestPermission()) !== "granted") {
    throw new Error("Notifications are blocked for this page: allow them in the browser's site settings, then try again.");
  }
  await navigator.serviceWorker.register("/sw.js");
  const registration = await navigator.serviceWorker.ready;
  const key = keyBytes((await api.pushKey()).key);
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !madeWith(subscription, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  await api.pushSubscribe(subscription.toJSON());
}

/** Stops the server's pushes to this page's browser. */
export async function stopPushes(): Promise<void> {
  await api.pushUnsubscribe();
  const registration = await navigator.serviceWorker?.getRegistration("/");
  await (await registration?.pushManager.getSubscription())?.unsubscribe();
}
