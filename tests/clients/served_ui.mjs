// A phone-sized Chromium, driven through Playwright, on the UI `baton serve` serves: for
// tests/serve_browser.rs. It reads commands from stdin, one JSON object per line, and answers
// each with one JSON line on stdout, so the Rust test drives it step by step between its own
// steps (an agent asking, a CLI adding a task, a device revoked).
//
// Usage: node served_ui.mjs PLAYWRIGHT_CORE_DIR BASE_URL AXE_JS
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const [playwrightDir, base, axePath] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(playwrightDir);

// BATON_HOST_RULES maps a name the server is reached by to an address (`MAP phone.example
// 127.0.0.1`), as a phone's network would resolve it.
const rules = process.env.BATON_HOST_RULES ? [`--host-resolver-rules=${process.env.BATON_HOST_RULES}`] : [];
const browser = await chromium.launch({
  executablePath: process.env.BATON_CHROMIUM || "/usr/bin/chromium",
  args: [...(process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : []), ...rules],
});
// bypassCSP: the server's Content-Security-Policy refuses inline scripts, which is how axe is put
// into the page for the check; the app itself runs under it.
const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, bypassCSP: true });
// The notifications the page shows, recorded (a headless browser shows none): the lead has
// allowed them.
// What the page's feed and API calls did, for the benchmark's account of where a change's
// time goes (`arm` clears it, `seen` returns it).
await context.addInitScript(() => {
  window.__marks = [];
  const mark = (what, extra) => window.__marks.push({ what, at: Date.now(), ...extra });
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => mark("feed"));
    }
  };
  const fetch = window.fetch;
  window.fetch = async (input, init) => {
    const path = typeof input === "string" ? input : input.url;
    const start = Date.now();
    const response = await fetch(input, init);
    const body = await response.clone().arrayBuffer();
    mark("call", { path, start, bytes: body.byteLength });
    return response;
  };
});
await context.addInitScript(() => {
  window.__notices = [];
  window.Notification = class {
    static permission = "granted";
    static requestPermission() {
      return Promise.resolve("granted");
    }
    constructor(title, options) {
      window.__notices.push({ title, body: options?.body ?? "" });
    }
  };
});
const page = await context.newPage();
const consoleErrors = [];
page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
const failed = [];
page.on("response", (r) => r.status() >= 400 && failed.push(`${r.status()} ${new URL(r.url()).pathname}`));

const TIMEOUT = 60_000;
// More tabs of the app in the same browser.
const tabs = [];
const testid = (id) => page.getByTestId(id);

// A pairing link opens a page that asks; its button pairs and goes on to the app.
async function pairThrough(page, path) {
  await page.goto(base + path);
  await page.getByTestId("pair-confirm").click();
}

const commands = {
  // Opens a path (a pairing link: and confirms it); says which screen shows.
  async open({ path }) {
    const started = Date.now();
    if (path.startsWith("/pair/")) await pairThrough(page, path);
    else await page.goto(base + path);
    await page.waitForSelector('[data-testid="unpaired"], [data-testid="goal"]', { timeout: TIMEOUT });
    return { url: page.url(), unpaired: await testid("unpaired").count() > 0, ms: Date.now() - started };
  },
  // Waits for a task's card to show (the board updated from the feed).
  async waitCard({ text }) {
    const started = Date.now();
    await page.getByText(text).first().waitFor({ timeout: TIMEOUT });
    return { ms: Date.now() - started };
  },
  async view({ name }) {
    await testid(`view-${name}`).click();
    return {};
  },
  // Answers question `id` with `choice` by tapping its button.
  async answer({ id, choice }) {
    await testid(`question-${id}`).waitFor({ timeout: TIMEOUT });
    await testid(`answer-${id}-${choice.replace(/\s+/g, "-")}`).click();
    return {};
  },
  // Waits for an element to show.
  async waitTestId({ id }) {
    await testid(id).first().waitFor({ timeout: TIMEOUT });
    return {};
  },
  // The board's columns, left to right (top to bottom on a phone), by test id.
  async columnOrder() {
    return { columns: await page.locator("[data-testid^=column-]").evaluateAll((all) => all.map((c) => c.dataset.testid)) };
  },
  // Whether the element with this test id is on the screen, once it is there.
  async inView({ id }) {
    await testid(id).first().waitFor({ timeout: TIMEOUT });
    return { inView: await testid(id).first().evaluate((e) => {
      const box = e.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight;
    }) };
  },
  // How many elements carry this test id (0: not shown).
  async has({ id }) {
    return { count: await testid(id).count() };
  },
  async tap({ id }) {
    await testid(id).tap({ timeout: TIMEOUT });
    return {};
  },
  // Comments on new line `line` of `file`'s diff as a thumb does: a tap on the line shows its
  // "+" (the diff shows it on hover, which a tap gives), a tap on the "+" opens the form.
  async comment({ file, line, text }) {
    const diff = testid(`diff-${file}`);
    const cell = diff.locator(`[data-line-new-num="${line}"]`).first();
    await cell.tap({ timeout: TIMEOUT });
    await cell.locator("xpath=ancestor::tr[1]").locator(".diff-add-widget").tap({ timeout: TIMEOUT });
    await testid("comment-text").fill(text);
    await testid("comment-send").tap();
    await diff.getByText(text).waitFor({ timeout: TIMEOUT });
    return {};
  },
  // Calls the API from the page, as a page's script would: the server decides, not the page.
  async fetch({ path, body }) {
    return await page.evaluate(async ([path, body]) => {
      const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json().catch(() => null) };
    }, [path, body]);
  },
  // Waits until the page shows the unpaired screen (after its device was revoked).
  async waitUnpaired() {
    const started = Date.now();
    await testid("unpaired").waitFor({ timeout: TIMEOUT });
    return { ms: Date.now() - started };
  },
  async cookies() {
    return { cookies: (await context.cookies()).map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite })) };
  },
  async scrollWidth() {
    return await page.evaluate(() => {
      const client = document.documentElement.clientWidth;
      // What sticks out, outermost first, for the message when something does.
      const wider = [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > client + 1 && !e.closest(".views"))
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")} (${Math.round(e.getBoundingClientRect().right)} px)`);
      return { scroll: document.documentElement.scrollWidth, client, wider };
    });
  },
  // The table `selector` names: each column's width (by its header's words) in its first body
  // row (or its header), and the scrolling width of the box it scrolls in against its visible one.
  async tableColumns({ selector }) {
    return await page.evaluate((selector) => {
      const table = document.querySelector(selector);
      if (!table) return { missing: true };
      const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
      const row = table.querySelector("tbody tr") ?? table.querySelector("thead tr");
      const widths = Object.fromEntries(
        [...row.children].map((cell, i) => [names[i] ?? String(i), Math.round(cell.getBoundingClientRect().width)]),
      );
      const box = table.closest(".table-box") ?? table;
      return { widths, scroll: box.scrollWidth, client: box.clientWidth };
    }, selector);
  },
  async screenshot({ path }) {
    await page.screenshot({ path, fullPage: true });
    return {};
  },
  async theme({ dark }) {
    await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
    return {};
  },
  // Another screen size, with the page opened afresh at it: resizing an emulated phone's screen
  // can leave the page zoomed in (a pinch no phone made), its tab bar partly off screen.
  async viewport({ width, height }) {
    await page.setViewportSize({ width, height });
    // A new visit, not a reload: a reload restores the zoom it would undo.
    await page.goto(base + "/");
    await testid("goal").waitFor({ timeout: TIMEOUT });
    return {};
  },
  // axe-core's serious and critical violations on the page as it is.
  async axe() {
    if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: axePath });
    const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations);
    return {
      violations: found
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) })),
    };
  },
  // Watches for `text` to show on the page (answering once the watch is in place); `seen`
  // then gives the wall clock (ms since the epoch) at the first frame that drew it, for a
  // benchmark that notes the clock between the two.
  // With `testid`, only that element's text is looked at (the page's whole text costs a layout
  // of every card on each look, which would be measured too).
  async arm({ text, testid }) {
    await page.evaluate(([text, testid]) => {
      window.__marks = [];
      window.__seen = new Promise((resolve) => {
        const check = () => {
          const shown = testid ? document.querySelector(`[data-testid="${testid}"]`)?.textContent ?? "" : document.body.innerText;
          if (!shown.includes(text)) return false;
          requestAnimationFrame(() => resolve(Date.now()));
          return true;
        };
        if (check()) return;
        const observer = new MutationObserver(() => check() && observer.disconnect());
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
      });
    }, [text, testid]);
    return {};
  },
  // Also what happened on the way since `arm` (wall clock, ms since the epoch): each feed
  // message's arrival, and each API call's start and end.
  async seen() {
    const at = await page.evaluate((timeout) => Promise.race([window.__seen, new Promise((resolve) => setTimeout(() => resolve(null), timeout))]), TIMEOUT);
    if (at === null) throw new Error(`the text did not show within ${TIMEOUT} ms`);
    return { at, marks: await page.evaluate(() => window.__marks) };
  },
  // Opens one more page of the app for each pairing link, each in a browser context of its own
  // (as many phones would: over HTTP/1.1 a browser keeps at most six connections to a server,
  // and each open page holds one for its change feed), for an idle server's figures.
  async openPages({ paths }) {
    for (const path of paths) {
      const other = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
      await pairThrough(other, path);
      await other.getByTestId("goal").waitFor({ timeout: TIMEOUT });
    }
    return { pages: browser.contexts().reduce((n, c) => n + c.pages().length, 0) };
  },
  // Opens `count` more tabs of the app in this browser (its cookie, its connections to the
  // server), each on the board.
  async tabs({ count }) {
    for (let i = 0; i < count; i++) {
      const tab = await context.newPage();
      await tab.goto(base + "/");
      await tab.getByTestId("view-board").click({ timeout: TIMEOUT });
      await tab.getByTestId("board").waitFor({ timeout: TIMEOUT });
      tabs.push(tab);
    }
    return { tabs: tabs.length };
  },
  // Waits for `text` in every tab `tabs` opened; closes them.
  async tabsSee({ text }) {
    const started = Date.now();
    await Promise.all(tabs.map((tab) => tab.getByText(text).first().waitFor({ timeout: TIMEOUT })));
    const ms = Date.now() - started;
    await Promise.all(tabs.splice(0).map((tab) => tab.close()));
    return { ms };
  },
  async notices() {
    return { notices: await page.evaluate(() => window.__notices) };
  },
  // Registers the app's service worker, delivers it `data` as a push (through the DevTools
  // protocol, as the browser's push service would), and returns the notifications it shows.
  async pushShown({ data }) {
    await context.grantPermissions(["notifications"]);
    const cdp = await context.newCDPSession(page);
    const origin = new URL(base).origin;
    // The push goes to the worker once its version is activated and running (a push to a
    // worker still installing can be dropped); what the worker reports as an error is kept
    // for the failure's message.
    const reported = [];
    cdp.on("ServiceWorker.workerErrorReported", ({ errorMessage }) => reported.push(errorMessage.errorMessage));
    // The worker's states as the browser reported them, for the failure's message.
    const states = [];
    const activated = new Promise((resolve) =>
      cdp.on("ServiceWorker.workerVersionUpdated", ({ versions }) => {
        for (const v of versions) states.push(`${v.versionId}:${v.status}/${v.runningStatus}`);
        const ours = versions.find((v) => v.scriptURL === `${origin}/sw.js` && v.status === "activated" && v.runningStatus === "running");
        if (ours) resolve(ours.registrationId);
      }),
    );
    await cdp.send("ServiceWorker.enable");
    const scope = await page.evaluate(async () => {
      await navigator.serviceWorker.register("/sw.js");
      return (await navigator.serviceWorker.ready).scope;
    });
    const registrationId = await activated;
    await cdp.send("ServiceWorker.deliverPushMessage", { origin, registrationId, data: JSON.stringify(data) });
    // The notification is shown once the worker has handled the push: looked for until it is
    // (an async predicate cannot be waited for with waitForFunction, which takes its promise
    // as an answer).
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      const notifications = await page.evaluate(async (title) => {
        const registration = await navigator.serviceWorker.ready;
        const all = await registration.getNotifications();
        return all.filter((n) => n.title === title).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
      }, data.title);
      if (notifications.length > 0) return { scope, notifications };
      if (Date.now() > deadline) {
        const permission = await page.evaluate(() => Notification.permission);
        throw new Error(
          `no notification titled ${data.title} within ${TIMEOUT} ms; the worker reported: ${reported.join("; ") || "nothing"}; ` +
            `its states: ${states.join(", ")}; the page's notification permission: ${permission}`,
        );
      }
      await page.waitForTimeout(50);
    }
  },
  async errors() {
    return { errors: consoleErrors, failed };
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const command = JSON.parse(line);
  let answer;
  try {
    answer = { ok: true, ...(await commands[command.do](command)) };
  } catch (error) {
    // What the page looked like when the command failed, for whoever reads the failure.
    const shot = `${process.env.BATON_ARTIFACTS ?? "/tmp"}/served-ui-failed-${Date.now()}.png`;
    const taken = await page.screenshot({ path: shot, fullPage: true }).then(() => shot, () => "none");
    const viewport = await page.evaluate(() => ({ width: innerWidth, height: innerHeight, scale: visualViewport?.scale, scrollY, offsetTop: visualViewport?.offsetTop })).catch(() => null);
    answer = { ok: false, error: String(error), screenshot: taken, viewport };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
await browser.close();
