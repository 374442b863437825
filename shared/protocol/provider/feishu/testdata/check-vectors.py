#!/usr/bin/env python3
"""Re-checks vectors.json with a second, separate implementation (Python,
the `cryptography` package for AES). Run from this directory:
python3 check-vectors.py. It prints one line per case and exits non-zero
if any case's outcome differs from its "valid" / "failureReason"."""
import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def decrypt(key, enc):
    raw = base64.b64decode(enc, validate=True)
    if len(raw) < 32 or len(raw) % 16:
        raise ValueError("shape")
    d = Cipher(algorithms.AES(hashlib.sha256(key.encode()).digest()), modes.CBC(raw[:16])).decryptor()
    p = d.update(raw[16:]) + d.finalize()
    n = p[-1]
    if not 1 <= n <= 16 or p[-n:] != bytes([n]) * n:
        raise ValueError("padding")
    return p[:-n]


def outcome(settings, r):
    """Returns (status, reply body, dedup key or None) for request r."""
    key, token = settings.get("encryptKey"), settings["verificationToken"]
    body, h = r["body"], r["headers"]
    sig = h.get("X-Lark-Signature")
    denied = (401, None, None)
    obj = json.loads(body)
    if key:
        if sig:
            ts, nonce = h["X-Lark-Request-Timestamp"], h["X-Lark-Request-Nonce"]
            want = hashlib.sha256((ts + nonce + key).encode() + body.encode()).hexdigest()
            if want != sig or abs(r["now"] - int(ts)) > 300:
                return denied
        if "encrypt" not in obj:
            return denied
        try:
            obj = json.loads(decrypt(key, obj["encrypt"]))
        except ValueError:
            return denied
    elif "encrypt" in obj:
        return denied
    got = obj["header"]["token"] if "schema" in obj else obj.get("token")
    if got != token:
        return denied
    if obj.get("type") == "url_verification" and "schema" not in obj:
        return 200, json.dumps({"challenge": obj["challenge"]}, separators=(",", ":")), None
    if key and not sig:
        return denied
    k = obj["header"]["event_id"] if "schema" in obj else "v1:" + obj["uuid"]
    return 200, '{"msg":"success"}', k


def main():
    doc = json.load(open("vectors.json"))
    bad = 0
    # The documentation's own decryption example.
    if decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=") != b"hello world":
        print("FAIL doc_decrypt_hello_world")
        bad += 1
    for c in doc["cases"]:
        seen = set()
        ok = True
        for r in c["requests"]:
            status, reply, k = outcome(c["settings"], r)
            new = [k] if k and k not in seen else []
            if k:
                seen.add(k)
            w = r["want"]
            ok &= status == w["status"] and new == w["events"] and ("body" not in w or reply == w["body"])
        print(("ok  " if ok else "FAIL"), c["name"])
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
