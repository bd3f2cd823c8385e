// A browser's side of Web Push, for tests/serve_push.rs, built on the reference decryption
// (npm's http_ece, by one of RFC 8188's and RFC 8291's authors): it makes a subscription as a
// browser does (a P-256 key pair and a 16-byte auth secret), plays the push service for it on
// a loopback port, and prints, one JSON line each, the subscription and then every push it
// receives: its headers, its payload as http_ece decrypts it, and whether its VAPID token
// (RFC 8292) verifies with the key it names, for this endpoint's origin. It answers 201, or
// after BATON_PUSH_GONE_AFTER pushes 410, as a push service does for a subscription gone. A
// POST under /hook is a webhook's: printed as it came, `{"hook": path, "body": …}`.
//
// BATON_HTTP_ECE names the folder holding node_modules/http_ece.

import { createECDH, createPublicKey, randomBytes, verify } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(`${process.env.BATON_HTTP_ECE}/`);
const ece = require("http_ece");

const keys = createECDH("prime256v1");
keys.generateKeys();
const auth = randomBytes(16);
const goneAfter = Number(process.env.BATON_PUSH_GONE_AFTER ?? Infinity);
let pushes = 0;

/** Whether `authorization` is a VAPID token signed by the key it names, for `origin`. */
function vapid(authorization, origin) {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (!match) return { ok: false, why: `not a vapid header: ${authorization}` };
  const [, token, k] = match;
  const [header, claims, signature] = token.split(".");
  const raw = Buffer.from(k, "base64url");
  const key = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33, 65).toString("base64url") },
    format: "jwk",
  });
  const signed = verify("sha256", Buffer.from(`${header}.${claims}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"));
  const said = JSON.parse(Buffer.from(claims, "base64url").toString("utf8"));
  const now = Date.now() / 1000;
  const ok = signed && said.aud === origin && said.exp > now && said.exp <= now + 24 * 3600 && /^(mailto:|https:)/.test(said.sub);
  return { ok, signed, aud: said.aud, sub: said.sub, k };
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    if (request.url.startsWith("/hook")) {
      response.end();
      console.log(JSON.stringify({ hook: request.url, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      return;
    }
    const origin = `http://127.0.0.1:${server.address().port}`;
    const received = { path: request.url, headers: request.headers, vapid: vapid(request.headers.authorization, origin) };
    try {
      const plain = ece.decrypt(Buffer.concat(chunks), {
        version: "aes128gcm",
        privateKey: keys,
        authSecret: auth.toString("base64url"),
      });
      received.payload = JSON.parse(plain.toString("utf8"));
    } catch (error) {
      received.error = String(error);
    }
    pushes += 1;
    response.statusCode = pushes > goneAfter ? 410 : 201;
    received.answered = response.statusCode;
    response.end();
    console.log(JSON.stringify(received));
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(
    JSON.stringify({
      endpoint: `http://127.0.0.1:${port}/push/this-browser`,
      keys: { p256dh: keys.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
    }),
  );
});
