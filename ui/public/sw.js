/* global self, URL */
// Baton's service worker, for a page served by `baton serve`: shows what the server pushes
// while no page is open (a question, an approval, a plan, a team's end) and, on a tap, opens
// the page it links to. Only a path on this server is ever opened, whatever the push says.
"use strict";

self.addEventListener("push", (event) => {
  let said = {};
  try {
    said = event.data ? event.data.json() : {};
  } catch {
    said = { body: event.data ? event.data.text() : "" };
  }
  const text = (value, fallback) => (typeof value === "string" && value !== "" ? value : fallback);
  const title = text(said.title, "Baton");
  event.waitUntil(
    self.registration.showNotification(title, {
      body: text(said.body, ""),
      tag: text(said.tag, undefined),
      icon: "/icon.svg",
      data: { url: text(said.url, "/") },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const linked = new URL(event.notification.data?.url ?? "/", self.location.origin);
  const target = new URL(linked.pathname + linked.hash, self.location.origin).href;
  event.waitUntil(
    (async () => {
      const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      for (const page of open) {
        if (new URL(page.url).origin === self.location.origin && "navigate" in page) {
          await page.focus();
          return page.navigate(target);
        }
      }
      return self.clients.openWindow(target);
    })(),
  );
});
