#!/usr/bin/env python3
"""Re-checks vectors.json with a second, separate implementation (Python,
the `cryptography` package for Ed25519, the standard library for HMAC).
Run from this directory: python3 check-vectors.py. It prints one line per
case and exits non-zero if any request's outcome differs from its "want"."""
import base64
import binascii
import hashlib
import hmac
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
DEFAULT_TOLERANCE = 300
MAX_V1A_ENTRIES = 8


def b64(s):
    """Standard Base64, padding optional, whitespace ignored."""
    s = "".join(s.split()).rstrip("=")
    return base64.b64decode(s + "=" * (-len(s) % 4), validate=True)


def raw_public(pub):
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key(s):
    assert s.startswith("whpk_"), "whpk_ prefix"
    b = b64(s[5:])
    if len(b) == 44 and b.startswith(SPKI_PREFIX):
        return serialization.load_der_public_key(b)
    assert len(b) == 32, "32-byte key"
    return Ed25519PublicKey.from_public_bytes(b)


def signing_public_key(s):
    assert s.startswith("whsk_"), "whsk_ prefix"
    b = b64(s[5:])
    assert len(b) in (32, 64), "32 or 64 bytes"
    priv = Ed25519PrivateKey.from_private_bytes(b[:32])
    pub = raw_public(priv.public_key())
    assert len(b) == 32 or b[32:] == pub, "64-byte key: seed then its public key"
    return priv.public_key()


def keys(settings):
    hmac_keys = [b64(s.removeprefix("whsec_")) for s in settings.get("secrets", [])]
    hmac_keys += [s.encode() for s in settings.get("rawSecrets", [])]
    pubs = [public_key(s) for s in settings.get("publicKeys", [])]
    if "signingKey" in settings:
        pubs.append(signing_public_key(settings["signingKey"]))
    return hmac_keys, pubs


def canonical_b64(sig):
    """The bytes of sig if it is their one padded standard Base64 spelling."""
    try:
        raw = base64.b64decode(sig, validate=True)
    except binascii.Error:
        return None
    return raw if base64.b64encode(raw).decode() == sig else None


def signed(hmac_keys, pubs, msg, header):
    entries = [e.split(",", 1) for e in header.split(" ") if "," in e]
    for version, sig in entries:
        if version == "v1" and len(sig) == 44:
            for k in hmac_keys:
                if hmac.compare_digest(base64.b64encode(hmac.new(k, msg, hashlib.sha256).digest()).decode(), sig):
                    return True
    v1a = [sig for version, sig in entries if version == "v1a" and len(sig) == 88][:MAX_V1A_ENTRIES]
    for sig in v1a:
        raw = canonical_b64(sig)
        if raw is None or len(raw) != 64:
            continue
        for pub in pubs:
            try:
                pub.verify(raw, msg)
                return True
            except InvalidSignature:
                pass
    return False


def outcome(settings, r, seen):
    """Returns (status, dedup key or None) for request r."""
    hmac_keys, pubs = keys(settings)
    tolerance = settings.get("toleranceSeconds", DEFAULT_TOLERANCE)
    h = {k.lower(): v for k, v in r["headers"].items()}
    msg_id, ts, sig = h.get("webhook-id"), h.get("webhook-timestamp"), h.get("webhook-signature")
    if not (msg_id and ts and sig) or not ts.isdigit():
        return 401, None
    body = r["body"]
    if not signed(hmac_keys, pubs, f"{msg_id}.{ts}.".encode() + body.encode(), sig):
        return 401, None
    if abs(r["now"] - int(ts)) > tolerance:
        return 401, None
    try:
        json.loads(body)
    except ValueError:
        return 400, None
    return 200, (msg_id if msg_id not in seen else None)


def main():
    doc = json.load(open("vectors.json"))
    bad = 0
    for c in doc["cases"]:
        seen = set()
        ok = True
        for r in c["requests"]:
            status, k = outcome(c["settings"], r, seen)
            new = [k] if k else []
            if k:
                seen.add(k)
            ok &= status == r["want"]["status"] and new == r["want"]["events"]
        print(("ok  " if ok else "FAIL"), c["name"])
        bad += not ok
    print(f"{len(doc['cases'])} cases, {sum(len(c['requests']) for c in doc['cases'])} requests, {bad} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
