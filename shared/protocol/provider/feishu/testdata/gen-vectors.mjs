// Generates vectors.json, the Feishu / Lark test vectors (in the format of
// the provider guide: cases of a tenant's settings and requests in order), with Node's
// built-in crypto only: an implementation independent of the Go package
// under test. Run from this directory: node gen-vectors.mjs > vectors.json
// (check-vectors.py re-checks the result with Python). IVs and nonces are
// derived from the case names, so the output is the same on every run.
// The sources of the plaintexts are in README.md.
import { createCipheriv, createHash } from "node:crypto";

const sha256 = (s) => createHash("sha256").update(s).digest();
const iv = (name) => sha256("iv:" + name).subarray(0, 16);

// Feishu's scheme: base64(IV || AES-256-CBC(SHA-256(encryptKey), PKCS#7)).
function encrypt(key, plain, name) {
  const c = createCipheriv("aes-256-cbc", sha256(key), iv(name));
  return Buffer.concat([iv(name), c.update(plain, "utf8"), c.final()]).toString("base64");
}

// X-Lark-Signature = hex(SHA-256(timestamp + nonce + encryptKey + body)).
const sign = (ts, nonce, key, body) => createHash("sha256").update(ts + nonce + key + body, "utf8").digest("hex");

function signed(key, body, ts, nonce) {
  return {
    "X-Lark-Request-Timestamp": ts,
    "X-Lark-Request-Nonce": nonce,
    "X-Lark-Signature": sign(ts, nonce, key, body),
  };
}

// Official examples (see README.md).
const docV2 = JSON.stringify({
  schema: "2.0",
  header: {
    event_id: "a069a9c71bd8f82dd1fc5a2fae777842",
    token: "l802sPhp2r1AMSPDTaJc5eYZOEnKyp",
    create_time: "1615813148349",
    event_type: "application.application.visibility.added_v6",
    tenant_key: "2d3aa0bc8d8f575d",
    app_id: "cli_9dbb2dd6f5e0d104",
  },
  event: {
    source: 1,
    users: [{ user_id: { open_id: "ou_f370aea2baf6ffc69a6762d31cfaf96a", union_id: "on_6bc1e6c0e9ad8193fa4391278eb76891" } }],
  },
});

const docV1 = JSON.stringify({
  ts: "1502199207.7171419",
  uuid: "bc447199585340d1f3728d26b1c0297a",
  token: "41a9425ea7df4536a7623e38fa321bae",
  type: "event_callback",
  event: { app_id: "cli_9c8609450f78d102", tenant_key: "736588c9260f175e", type: "add_bot" },
});

const docChallenge = '{"challenge":"ajls384kdjx98XX","token":"xxxxxx","type":"url_verification"}';

const msgToken = "rvaYgkND1GOiu5MM0E1rncYC6PLtF7JV";
const docMessage = (token) => JSON.stringify({
  schema: "2.0",
  header: {
    event_id: "5e3702a84e847582be8db7fb73283c02",
    event_type: "im.message.receive_v1",
    create_time: "1608725989000",
    token,
    app_id: "cli_9f5343c580712544",
    tenant_key: "2ca1d211f64f6438",
  },
  event: {
    sender: {
      sender_id: { union_id: "on_8ed6aa67826108097d9ee143816345", user_id: "e33ggbyz", open_id: "ou_84aad35d084aa403a838cf73ee18467" },
      sender_type: "user",
      tenant_key: "736588c9260f175e",
    },
    message: {
      message_id: "om_5ce6d572455d361153b7cb51da133945",
      root_id: "om_5ce6d572455d361153b7cb5xxfsdfsdfdsf",
      parent_id: "om_5ce6d572455d361153b7cb5xxfsdfsdfdsf",
      create_time: "1609073151345",
      chat_id: "oc_5ce6d572455d361153b7xx51da133945",
      chat_type: "group",
      message_type: "text",
      content: '{"text":"@_user_1 hello"}',
      mentions: [{
        key: "@_user_1",
        id: { union_id: "on_8ed6aa67826108097d9ee143816345", user_id: "e33ggbyz", open_id: "ou_84aad35d084aa403a838cf73ee18467" },
        name: "Tom",
        tenant_key: "736588c9260f175e",
      }],
    },
  },
});

const docKey = "test key"; // the documentation's decryption example key
const docChallengeEnc = '{"challenge":"f8f76934-fcf2-49e4-8593-4cfa92401234","token":"self-test","type":"url_verification"}';

// A case is one tenant (settings) and the requests sent to it in order,
// against one store; want.events are the dedup keys newly enqueued.
const cases = [];
const ok = (key, body = '{"msg":"success"}') => ({ status: 200, body, events: key ? [key] : [] });
const denied = { status: 401, events: [] };
const req = (body, now, headers = {}, want) => ({ method: "POST", headers, body, now, want });
// The description says what the case shows; it stays here (the format has
// no field for it).
const add = (name, description, settings, ...requests) => cases.push({ name, settings, requests });

// --- Tenant without an Encrypt Key: the token is the check ---
const plainTenant = { verificationToken: "l802sPhp2r1AMSPDTaJc5eYZOEnKyp" };
const v2Key = "a069a9c71bd8f82dd1fc5a2fae777842";
add("plain_event_v2_and_retry",
  "The documentation's schema 2.0 event, plaintext, then Feishu's first retry 15 s later (the same bytes): a duplicate, answered 200, nothing new enqueued.",
  plainTenant,
  req(docV2, 1615813148, {}, ok(v2Key)),
  req(docV2, 1615813163, {}, ok(null)));
add("plain_wrong_token",
  "The same event at a tenant whose verification token is another: 401, and nothing is stored (the right tenant then takes it as new).",
  { verificationToken: "l802sPhp2r1AMSPDTaJc5eYZOEnKyq" },
  req(docV2, 1615813148, {}, denied));
add("plain_event_v1",
  "A schema 1.0 event_callback, plaintext: dedup key \"v1:\" + uuid.",
  { verificationToken: "41a9425ea7df4536a7623e38fa321bae" },
  req(docV1, 1502199207, {}, ok("v1:bc447199585340d1f3728d26b1c0297a")));
add("plain_challenge",
  "The documentation's url_verification, plaintext: answered {\"challenge\": ...}, nothing stored.",
  { verificationToken: "xxxxxx" },
  req(docChallenge, 1615813148, {}, ok(null, '{"challenge":"ajls384kdjx98XX"}')));
add("plain_challenge_wrong_token",
  "The same handshake at a tenant with another token: 401 (answering would confirm the URL to a stranger).",
  { verificationToken: "yyyyyy" },
  req(docChallenge, 1615813148, {}, denied));

// --- Tenant with an Encrypt Key: signature and window, then token ---
const encTenant = { verificationToken: msgToken, encryptKey: docKey };
const ts = "1608725990", nonce = "8f6a3c2e0b", now = 1608725990;
const msgKey = "5e3702a84e847582be8db7fb73283c02";
const encBody = (plain, name, key = docKey) => JSON.stringify({ encrypt: encrypt(key, plain, name) });
const ev = encBody(docMessage(msgToken), "encrypted_event_v2");
const evHeaders = signed(docKey, ev, ts, nonce);
const retry = encBody(docMessage(msgToken), "encrypted_event_v2_retry");

add("encrypted_event_v2_and_retry",
  "The documentation's im.message.receive_v1, encrypted under \"test key\" and signed; then Feishu's first retry 15 s later with a new IV, timestamp, nonce and signature: the same event_id and payload, a duplicate answered 200.",
  encTenant,
  req(ev, now, evHeaders, ok(msgKey)),
  req(retry, now + 15, signed(docKey, retry, String(now + 15), "2d7b91e4a6"), ok(null)));
{
  const h = { ...evHeaders };
  const s = h["X-Lark-Signature"];
  h["X-Lark-Signature"] = s.slice(0, -1) + (s.endsWith("0") ? "1" : "0");
  add("encrypted_tampered_signature",
    "The event with the last hex digit of X-Lark-Signature changed: 401; the genuine request that follows is new (nothing was stored).",
    encTenant, req(ev, now, h, denied), req(ev, now, evHeaders, ok(msgKey)));
}
{
  const obj = JSON.parse(ev);
  const i = 40; // a character inside the ciphertext
  const c = obj.encrypt[i] === "A" ? "B" : "A";
  const tampered = JSON.stringify({ encrypt: obj.encrypt.slice(0, i) + c + obj.encrypt.slice(i + 1) });
  add("encrypted_tampered_body",
    "The event's body with one ciphertext character changed, under the original headers: 401; the genuine request that follows is new.",
    encTenant, req(tampered, now, evHeaders, denied), req(ev, now, evHeaders, ok(msgKey)));
}
add("encrypted_stale_timestamp",
  "The event received 300 s after its X-Lark-Request-Timestamp, at the edge of the window: accepted; at 301 s, outside it: 401.",
  encTenant, req(ev, now + 300, evHeaders, ok(msgKey)), req(ev, now + 301, evHeaders, denied));
add("encrypted_future_timestamp",
  "The event received 301 s before its timestamp, outside the window: 401 and nothing stored; at 300 s before: accepted as new.",
  encTenant, req(ev, now - 301, evHeaders, denied), req(ev, now - 300, evHeaders, ok(msgKey)));
{
  const wrong = encBody(docMessage("not-the-token"), "encrypted_wrong_token");
  add("encrypted_wrong_token",
    "Encrypted and correctly signed, but header.token is not the tenant's: 401.",
    encTenant, req(wrong, now, signed(docKey, wrong, ts, nonce), denied));
}
add("encrypted_unsigned_event",
  "The encrypted event without its signature headers: 401 (only the handshake may come unsigned).",
  encTenant, req(ev, now, {}, denied));
{
  const other = encBody(docMessage(msgToken), "encrypted_wrong_key", "other key");
  add("encrypted_wrong_key",
    "Encrypted and signed with another Encrypt Key: 401.",
    encTenant, req(other, now, signed("other key", other, ts, nonce), denied));
}
const chTenant = { verificationToken: "self-test", encryptKey: docKey };
const ch = encBody(docChallengeEnc, "encrypted_challenge");
const chReply = '{"challenge":"f8f76934-fcf2-49e4-8593-4cfa92401234"}';
add("encrypted_challenge",
  "An encrypted url_verification, unsigned as Feishu sends it: decrypted, token checked, answered in plain JSON; nothing stored.",
  chTenant, req(ch, now, {}, ok(null, chReply)));
add("encrypted_challenge_signed",
  "The same handshake with signature headers: accepted too (a signature, when present, is checked).",
  chTenant, req(ch, now, signed(docKey, ch, ts, nonce), ok(null, chReply)));
add("encrypted_challenge_wrong_token",
  "The encrypted handshake at a tenant with the same Encrypt Key and another token: 401.",
  { verificationToken: "other-token", encryptKey: docKey }, req(ch, now, {}, denied));
add("plaintext_challenge_to_encrypted_tenant",
  "A plaintext url_verification with the right token at a tenant with an Encrypt Key: a downgrade, 401.",
  chTenant, req(docChallengeEnc, now, {}, denied));
add("encrypted_body_to_plain_tenant",
  "The encrypted, signed event at a tenant without an Encrypt Key: it cannot be read, so it is not authenticated: 401.",
  { verificationToken: msgToken }, req(ev, now, evHeaders, denied));

const out = {
  provider: "feishu",
  sources: [
    "https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/encrypt-key-encryption-configuration-case",
    "https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/choose-a-subscription-mode/send-notifications-to-developers-server",
    "https://open.feishu.cn/document/ukTMukTMukTM/uUTNz4SN1MjL1UzM",
    "https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/events/receive",
    "https://feishu.apifox.cn/doc-2003525",
  ],
  cases,
};
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
