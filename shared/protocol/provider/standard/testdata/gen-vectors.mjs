// Generates vectors.json, the Standard Webhooks v1a (Ed25519) and tolerance
// test vectors (in the format of the provider guide: cases of a tenant's
// settings and requests in order), with Node's built-in crypto only: an
// implementation independent of the Go package under test. Run from this
// directory: node gen-vectors.mjs > vectors.json (check-vectors.py re-checks
// the result with Python's cryptography package). Keys derive from fixed
// strings and Ed25519 signatures are deterministic, so the output is the
// same on every run. Sources and choices are in README.md.
import { createHash, createHmac, createPrivateKey, createPublicKey, sign as edSign } from "node:crypto";

const sha256 = (s) => createHash("sha256").update(s).digest();
const b64 = (b) => Buffer.from(b).toString("base64");

// An Ed25519 key from a 32-byte seed, through its PKCS#8 DER (RFC 8410).
function edKey(label) {
  const seed = sha256("hookwall standard v1a vector key " + label);
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const priv = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const spki = createPublicKey(priv).export({ format: "der", type: "spki" });
  const pub = spki.subarray(spki.length - 32);
  return {
    priv, seed, pub, spki,
    whpk: "whpk_" + b64(pub),
    whpkSPKI: "whpk_" + b64(spki),
    whskSeed: "whsk_" + b64(seed),
    whskFull: "whsk_" + b64(Buffer.concat([seed, pub])),
  };
}

const A = edKey("A");
const B = edKey("B");
const hmacKey = sha256("hookwall standard v1a vector hmac secret");
const whsec = "whsec_" + b64(hmacKey);

// The specification's scheme: both versions sign "{id}.{timestamp}.{body}".
const content = (id, ts, body) => Buffer.from(`${id}.${ts}.${body}`, "utf8");
const v1a = (key, id, ts, body) => "v1a," + b64(edSign(null, content(id, ts, body), key.priv));
const v1 = (secret, id, ts, body) => "v1," + createHmac("sha256", secret).update(content(id, ts, body)).digest("base64");

const T0 = 1767225600; // 2026-01-01T00:00:00Z
const body = (id) => JSON.stringify({ type: "invoice.paid", timestamp: "2026-01-01T00:00:00Z", data: { id } });

function req(id, ts, b, signature, now, want, extra = {}) {
  return {
    method: "POST",
    headers: { "Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signature, ...extra },
    body: b,
    now,
    want,
  };
}
const ok = (id) => ({ status: 200, events: [id] });
const dup = { status: 200, events: [] };
const refused = { status: 401, events: [] };
const bad = { status: 400, events: [] };

// Ed25519's group order L: a signature whose S is replaced by S+L is the
// classic malleated form; RFC 8032 §5.1.7 requires S < L.
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
function malleate(sig) {
  const raw = Buffer.from(sig.slice(4), "base64");
  let s = 0n;
  for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(raw[32 + i]);
  s += L;
  for (let i = 0; i < 32; i++) { raw[32 + i] = Number(s & 0xffn); s >>= 8n; }
  return "v1a," + b64(raw);
}

// tamper changes one letter of s near its middle.
function tamper(s) {
  const i = s.indexOf("in_") + 3;
  return s.slice(0, i) + (s[i] === "X" ? "Y" : "X") + s.slice(i + 1);
}

const cases = [];
const add = (name, settings, requests) => cases.push({ name, settings, requests });

{
  const id = "msg_v1a_valid", b = body("in_1");
  add("v1a_valid_and_retry", { publicKeys: [A.whpk] }, [
    req(id, T0, b, v1a(A, id, T0, b), T0 + 2, ok(id)),
    // The sender retries 5 s later, re-signed with a new timestamp: a duplicate.
    req(id, T0 + 5, b, v1a(A, id, T0 + 5, b), T0 + 6, dup),
  ]);
}
{
  const id = "msg_v1a_tampered_body", b = body("in_2");
  add("v1a_tampered_body", { publicKeys: [A.whpk] }, [
    req(id, T0, tamper(b), v1a(A, id, T0, b), T0, refused),
    req(id, T0, b, v1a(A, id, T0, b), T0, ok(id)),
  ]);
}
{
  const id = "msg_v1a_tampered_id", b = body("in_3");
  add("v1a_tampered_id", { publicKeys: [A.whpk] }, [
    req("msg_v1a_tampered_iX", T0, b, v1a(A, id, T0, b), T0, refused),
    req(id, T0, b, v1a(A, id, T0, b), T0, ok(id)),
  ]);
}
{
  const id = "msg_v1a_tampered_timestamp", b = body("in_4");
  add("v1a_tampered_timestamp", { publicKeys: [A.whpk] }, [
    req(id, T0 + 1, b, v1a(A, id, T0, b), T0, refused),
    req(id, T0, b, v1a(A, id, T0, b), T0, ok(id)),
  ]);
}
{
  const id = "msg_v1a_other_key", b = body("in_5");
  add("v1a_signed_by_another_key", { publicKeys: [A.whpk] }, [
    req(id, T0, b, v1a(B, id, T0, b), T0, refused),
  ]);
}
{
  const id = "msg_v1a_malleated", b = body("in_6");
  const sig = v1a(A, id, T0, b);
  add("v1a_malleated_signature_s_plus_l", { publicKeys: [A.whpk] }, [
    req(id, T0, b, malleate(sig), T0, refused),
    req(id, T0, b, sig, T0, ok(id)),
  ]);
}
{
  // Wrong forms of the signature or the key on the sender's side.
  const id = "msg_wrong_form", b = body("in_7");
  const sig = v1a(A, id, T0, b).slice(4);
  add("wrong_form_v1a_signature_labelled_v1", { publicKeys: [A.whpk] }, [req(id, T0, b, "v1," + sig, T0, refused)]);
  add("wrong_form_v1a_signature_unpadded", { publicKeys: [A.whpk] }, [req(id, T0, b, "v1a," + sig.replace(/=+$/, ""), T0, refused)]);
  // The last Base64 character before "==" carries 4 unused bits: set, they
  // spell the same bytes another way. Only the canonical spelling counts.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const last = alphabet.indexOf(sig[85]);
  const noncanonical = sig.slice(0, 85) + alphabet[last | 0x0f] + "==";
  add("wrong_form_v1a_signature_stray_bits", { publicKeys: [A.whpk] }, [
    req(id, T0, b, "v1a," + noncanonical, T0, refused), req(id, T0, b, "v1a," + sig, T0, ok(id))]);
  add("wrong_form_v1a_signature_hex", { publicKeys: [A.whpk] }, [req(id, T0, b, "v1a," + Buffer.from(sig, "base64").toString("hex"), T0, refused)]);
  // A sender that used the public key as an HMAC secret: a public key is no
  // secret, so it must never verify a v1 entry (anyone could forge one).
  add("wrong_form_public_key_used_as_hmac_secret", { publicKeys: [A.whpk] }, [
    req(id, T0, b, v1(A.pub, id, T0, b), T0, refused),
    req(id, T0, b, v1(A.spki, id, T0, b), T0, refused),
  ]);
  // A whsec_ secret that holds the 32 bytes of a public key is a secret:
  // v1a entries are not checked against it.
  add("wrong_form_public_key_configured_as_secret", { secrets: ["whsec_" + b64(A.pub)] }, [
    req(id, T0, b, "v1a," + sig, T0, refused),
  ]);
}
{
  // The key in each accepted form verifies the same signature.
  const forms = [
    ["whpk_raw_32_bytes", { publicKeys: [A.whpk] }],
    ["whpk_der_spki_44_bytes", { publicKeys: [A.whpkSPKI] }],
    ["whpk_unpadded", { publicKeys: [A.whpk.replace(/=+$/, "")] }],
    ["whsk_seed_32_bytes", { signingKey: A.whskSeed }],
    ["whsk_seed_and_public_key_64_bytes", { signingKey: A.whskFull }],
  ];
  for (const [name, settings] of forms) {
    const id = "msg_form_" + name, b = body("in_8");
    add("key_form_" + name, settings, [req(id, T0, b, v1a(A, id, T0, b), T0, ok(id))]);
  }
}
{
  // The default window: 300 s either way, inclusive.
  const b = body("in_9");
  const at = (id, ts, now, want) => req(id, ts, b, v1a(A, id, ts, b), now, want);
  add("default_tolerance_300s_old", { publicKeys: [A.whpk] }, [
    at("msg_tol_old", T0, T0 + 301, refused), at("msg_tol_old", T0 + 1, T0 + 301, ok("msg_tol_old"))]);
  add("default_tolerance_300s_future", { publicKeys: [A.whpk] }, [
    at("msg_tol_new", T0 + 301, T0, refused), at("msg_tol_new", T0 + 300, T0, ok("msg_tol_new"))]);
  add("tenant_tolerance_60s", { publicKeys: [A.whpk], toleranceSeconds: 60 }, [
    at("msg_tol_60", T0, T0 + 61, refused), at("msg_tol_60", T0 + 1, T0 + 61, ok("msg_tol_60"))]);
  add("tenant_tolerance_60s_future", { publicKeys: [A.whpk], toleranceSeconds: 60 }, [
    at("msg_tol_60f", T0 + 61, T0, refused), at("msg_tol_60f", T0 + 60, T0, ok("msg_tol_60f"))]);
  add("tenant_tolerance_3600s", { publicKeys: [A.whpk], toleranceSeconds: 3600 }, [
    at("msg_tol_3600", T0, T0 + 3601, refused), at("msg_tol_3600", T0 + 1, T0 + 3601, ok("msg_tol_3600"))]);
  add("tenant_tolerance_applies_to_v1", { secrets: [whsec], toleranceSeconds: 30 }, [
    req("msg_tol_v1", T0, b, v1(hmacKey, "msg_tol_v1", T0, b), T0 + 31, refused),
    req("msg_tol_v1", T0 + 1, b, v1(hmacKey, "msg_tol_v1", T0 + 1, b), T0 + 31, ok("msg_tol_v1"))]);
}
{
  // Both versions in one header, as the specification's example shows.
  const id = "msg_both", b = body("in_10");
  const both = v1(hmacKey, id, T0, b) + " " + v1a(A, id, T0, b);
  add("both_v1_and_v1a_tenant_has_both", { secrets: [whsec], publicKeys: [A.whpk] }, [req(id, T0, b, both, T0, ok(id))]);
  add("both_v1_and_v1a_tenant_has_public_key_only", { publicKeys: [A.whpk] }, [req(id, T0, b, both, T0, ok(id))]);
  add("both_v1_and_v1a_tenant_has_secret_only", { secrets: [whsec] }, [req(id, T0, b, both, T0, ok(id))]);
  add("both_v1_and_v1a_tenant_has_other_keys", { secrets: ["whsec_" + b64(sha256("other"))], publicKeys: [B.whpk] }, [
    req(id, T0, b, both, T0, refused)]);
  // A valid v1 entry does not excuse a tampered body: both sign it.
  add("both_v1_and_v1a_body_tampered", { secrets: [whsec], publicKeys: [A.whpk] }, [
    req(id, T0, tamper(b), both, T0, refused)]);
}
{
  // Rotation: several entries, one valid; several keys, one matching.
  const id = "msg_rotation", b = body("in_11");
  add("several_signatures_one_valid", { publicKeys: [A.whpk] }, [
    req(id, T0, b, ["v1a,garbage", v1a(B, id, T0, b), "v1,AAAA", v1a(A, id, T0, b), "v2,x"].join(" "), T0, ok(id))]);
  add("several_signatures_none_valid", { publicKeys: [A.whpk] }, [
    req(id, T0, b, [v1a(B, id, T0, b), malleate(v1a(A, id, T0, b)), v1(hmacKey, id, T0, b)].join(" "), T0, refused)]);
  // Only the first 8 v1a entries are verified (Hookwall's bound on the
  // work an unsigned request can cause; see MaxV1aEntries).
  const others = (n) => Array.from({ length: n }, (_, i) => v1a(B, id + i, T0, b));
  add("eighth_v1a_entry_is_verified", { publicKeys: [A.whpk] }, [
    req(id, T0, b, [...others(7), v1a(A, id, T0, b)].join(" "), T0, ok(id))]);
  add("ninth_v1a_entry_is_not_verified", { publicKeys: [A.whpk] }, [
    req(id, T0, b, [...others(8), v1a(A, id, T0, b)].join(" "), T0, refused)]);
  add("several_public_keys_second_matches", { publicKeys: [B.whpk, A.whpk] }, [
    req(id, T0, b, v1a(A, id, T0, b), T0, ok(id))]);
  add("public_key_and_signing_key_both_verify", { publicKeys: [B.whpk], signingKey: A.whskSeed }, [
    req(id, T0, b, v1a(B, id, T0, b), T0, ok(id)),
    req(id, T0 + 10, b, v1a(A, id, T0 + 10, b), T0 + 10, dup)]);
}
{
  // A verified request whose body is not JSON is malformed (400), not
  // unauthorised.
  const id = "msg_not_json";
  add("v1a_valid_body_not_json", { publicKeys: [A.whpk] }, [req(id, T0, "not json", v1a(A, id, T0, "not json"), T0, bad)]);
}
{
  // Published by github.com/Cosium/standard-webhooks-consumer
  // (VerifierTest.java): a whpk_ key in DER SubjectPublicKeyInfo form, a
  // valid and an invalid v1a signature, and a v1 one with its whsec_.
  const id = "7a2486b3-31cf-4bd3-a460-df8845d16cd5", ts = 1737987215, b = '{"greetings": "Hello World"}';
  const pk = "whpk_MCowBQYDK2VwAyEAkp3dScDPIzT1CwUFUMdzyPbWOAQaCF9z4ucuKuZD7Io=";
  add("published_cosium_v1a", { publicKeys: [pk] }, [
    req(id, ts, b, "v1a,J/b6YbswScYdpR1AvAXOM2HR/jdSzawexEQ+N/6dHBcKtvJFd9yivsCDkwVE6A1G2C9wFFwQENUhio5rNrpiAw==", ts, refused),
    req(id, ts, b, "v1a,XVbiOe+IzCKsXBuhb52iHLroqxFJofJNMQRL80I2kWO0+kXu2gcqgXAzontxDDgpMDw6SMh4sjzr+67EmUUzDg==", ts, ok(id)),
  ]);
  add("published_cosium_v1", { secrets: ["whsec_b6Ovv5eS7H5seJrGSStBYDivs8v2/KrFjfMaVZYsi7w="] }, [
    req(id, ts, b, "v1,iayM3VaiYCEDP/CxWUFWcxUCJk2YmBDQHtHTsaHzrwo", ts, refused),
    req(id, ts, b, "v1,iayM3VaiYCEDP/CxWUFWcxUCJk2YmBDQHtHTsaHzrwo=", ts, ok(id)),
  ]);
}

const out = {
  provider: "standard",
  sources: [
    "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
    "https://github.com/Cosium/standard-webhooks-consumer/blob/main/src/test/java/com/cosium/standard_webhooks_consumer/VerifierTest.java",
  ],
  cases,
};
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
