#!/usr/bin/env python3
"""A GridLedger client written from docs/encoding.md alone, checking the test vectors.

Usage: check_vectors.py tests/vectors/transactions.json

From each vector's secret key and JSON body it derives the public key and address, encodes the
body canonically, computes the signing digest, verifies the signature (BIP-340), builds the
transaction bytes and hash, and, for a task creation, the task id and the ids of its replicas;
every value must equal the vector's. Python's standard library only. Prints one line per vector
and exits 1 on a mismatch.
"""

import hashlib
import json
import struct
import sys

# secp256k1 (SEC 2): the field prime, the group order and the generator.
FIELD = 2**256 - 2**32 - 977
ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
GENERATOR = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
             0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def point_add(a, b):
    """The sum of two points in affine coordinates; None is the point at infinity."""
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % FIELD == 0:
        return None
    if a == b:
        slope = 3 * a[0] * a[0] * pow(2 * a[1], FIELD - 2, FIELD) % FIELD
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], FIELD - 2, FIELD) % FIELD
    x = (slope * slope - a[0] - b[0]) % FIELD
    return (x, (slope * (a[0] - x) - a[1]) % FIELD)


def point_mul(point, scalar):
    result = None
    while scalar:
        if scalar & 1:
            result = point_add(result, point)
        point = point_add(point, point)
        scalar >>= 1
    return result


def lift_x(x):
    """The point with x coordinate x and an even y, or None (BIP-340 lift_x)."""
    if x >= FIELD:
        return None
    y_squared = (pow(x, 3, FIELD) + 7) % FIELD
    y = pow(y_squared, (FIELD + 1) // 4, FIELD)
    if y * y % FIELD != y_squared:
        return None
    return (x, y if y % 2 == 0 else FIELD - y)


def tagged_hash(tag, data):
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


def x_only_public_key(secret):
    return point_mul(GENERATOR, int.from_bytes(secret, "big"))[0].to_bytes(32, "big")


def bip340_verify(public_key, message, signature):
    point = lift_x(int.from_bytes(public_key, "big"))
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    if point is None or r >= FIELD or s >= ORDER:
        return False
    e = int.from_bytes(tagged_hash("BIP0340/challenge", signature[:32] + public_key + message),
                       "big") % ORDER
    nonce_point = point_add(point_mul(GENERATOR, s), point_mul(point, ORDER - e))
    return nonce_point is not None and nonce_point[1] % 2 == 0 and nonce_point[0] == r


# The canonical encoding (docs/encoding.md section 3).

def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def integer_field(number, value):
    """A uint32, uint64 or bool field: left out when zero or false."""
    value = int(value)
    return b"" if value == 0 else varint(number * 8) + varint(value)


def bytes_field(number, value):
    """A string or bytes field: left out when empty."""
    return b"" if not value else varint(number * 8 + 2) + varint(len(value)) + value


def message_field(number, encoded):
    """A message field that is set: written even when empty."""
    return varint(number * 8 + 2) + varint(len(encoded)) + encoded


def unhex(text):
    assert text.startswith("0x"), text
    return bytes.fromhex(text[2:])


def text_field(number, value):
    return bytes_field(number, value.encode())


def hex_field(number, value):
    return bytes_field(number, unhex(value))


def encode_action(action):
    """A governance action: its number in Propose's oneof and its encoded message."""
    kind = action["kind"]
    if kind == "add_validator":
        return 1, (text_field(1, action["name"]) + hex_field(2, action["consensus_key"]) +
                   hex_field(3, action["node_id"]) + hex_field(4, action["account"]))
    if kind == "remove_validator":
        return 2, hex_field(1, action["consensus_key"])
    provider_refs = {"admit_provider": 3, "suspend_provider": 4, "reinstate_provider": 5}
    if kind in provider_refs:
        return provider_refs[kind], hex_field(1, action["provider"])
    account_refs = {"grant_verifier": 6, "revoke_verifier": 7}
    if kind in account_refs:
        return account_refs[kind], hex_field(1, action["account"])
    if kind == "set_parameter":
        return 8, text_field(1, action["name"]) + text_field(2, action["value"])
    raise ValueError("no encoder for governance action " + kind)


def encode_device(device):
    factors = b"".join(
        message_field(8, text_field(1, f["name"]) + integer_field(2, f["value"]))
        for f in device["factors"])
    return (text_field(1, device["model"]) + integer_field(2, device["count"]) +
            integer_field(3, device["peak_gflops"]) +
            integer_field(4, device["memory_bandwidth_gbps"]) +
            integer_field(5, device["memory_capacity_gb"]) +
            b"".join(text_field(6, f) for f in device["features"]) +
            integer_field(7, device["power_watts"]) + factors)


def encode_payload(p):
    """The payload's field number in TxBody and its encoded message."""
    kind = p["kind"]
    if kind == "transfer":
        return 16, hex_field(1, p["to"]) + bytes_field(2, int(p["amount"]).to_bytes(16, "big"))
    if kind == "propose":
        number, action = encode_action(p["action"])
        return 17, message_field(number, action)
    if kind == "vote":
        return 18, integer_field(1, p["proposal_id"]) + integer_field(2, p["approve"])
    if kind == "register_provider":
        return 19, (b"".join(message_field(1, encode_device(d)) for d in p["devices"]) +
                    b"".join(message_field(2, text_field(1, label["key"]) +
                                           text_field(2, label["value"]))
                             for label in p["labels"]) +
                    b"".join(text_field(3, c) for c in p["categories"]))
    if kind == "attest":
        devices = b"".join(message_field(4, text_field(1, d["model"]) + integer_field(2, d["count"]))
                           for d in p["devices"])
        return 20, (integer_field(1, p["epoch"]) + integer_field(2, p["slot"]) +
                    text_field(3, p["category"]) + devices + integer_field(5, p["power_watts"]) +
                    integer_field(6, p["renewable_share_bps"]) +
                    b"".join(hex_field(7, e) for e in p["evidence"]))
    if kind == "challenge":
        return 21, (hex_field(1, p["provider"]) + integer_field(2, p["epoch"]) +
                    integer_field(3, p["slot"]) + text_field(4, p["reason"]) +
                    hex_field(5, p["evidence"]))
    if kind == "task_create":
        return 22, (text_field(1, p["category"]) + integer_field(2, p["min_gflops"]) +
                    b"".join(text_field(3, c) for c in p["constraints"]) +
                    integer_field(4, p["max_minutes"]) + hex_field(5, p["spec_hash"]) +
                    integer_field(6, p["replicas"]))
    task_refs = {"task_start": 23, "task_refuse": 24, "task_cancel": 29}
    if kind in task_refs:
        return task_refs[kind], hex_field(1, p["task_id"])
    if kind == "task_top_up":
        return 25, hex_field(1, p["task_id"]) + integer_field(2, p["extra_minutes"])
    if kind == "task_submit_result":
        return 26, (hex_field(1, p["task_id"]) + hex_field(2, p["result_hash"]) +
                    text_field(3, p["output_uri"]) + integer_field(4, p["exit_code"]) +
                    integer_field(5, p["duration_ms"]))
    if kind == "task_verify":
        return 27, (hex_field(1, p["task_id"]) + integer_field(2, p["accept"]) +
                    text_field(3, p["reason"]) + hex_field(4, p["result_hash"]))
    if kind == "task_report_failure":
        return 28, (hex_field(1, p["task_id"]) + integer_field(2, p["exit_code"]) +
                    text_field(3, p["error"]) + integer_field(4, p["duration_ms"]))
    if kind == "provider_unbond":
        return 30, b""
    if kind == "task_spot_check":
        return 31, (hex_field(1, p["task_id"]) + text_field(2, p["reason"]) +
                    hex_field(3, p["evidence"]))
    if kind == "task_spot_check_verdict":
        return 32, (hex_field(1, p["task_id"]) + integer_field(2, p["upheld"]) +
                    text_field(3, p["reason"]))
    raise ValueError("no encoder for payload kind " + kind)


def encode_body(body):
    number, payload = encode_payload(body["payload"])
    return (text_field(1, body["chain_id"]) + hex_field(2, body["sender_pubkey"]) +
            integer_field(3, body["nonce"]) + integer_field(4, body["valid_until_height"]) +
            integer_field(5, body["fee"]) + message_field(number, payload))


def signing_digest(tag, domain, body):
    tag = tag.encode()
    return hashlib.sha256(struct.pack(">I", len(tag)) + tag + struct.pack(">I", len(domain)) +
                          domain + body).digest()


def check(file):
    failures = []

    def expect(name, what, got, want):
        if got != want:
            failures.append(f"{name}: {what} is {got.hex()}, the vector says {want.hex()}")

    domain = file["chain_id"].encode() + unhex(file["genesis_hash"])
    expect("file", "signing domain", domain, unhex(file["signing_domain"]))
    for v in file["vectors"]:
        name = v["name"]
        public_key = x_only_public_key(unhex(v["secret_key"]))
        expect(name, "public key", public_key, unhex(v["public_key"]))
        address = hashlib.sha256(public_key).digest()[:20]
        expect(name, "address", address, unhex(v["address"]))
        body = encode_body(v["body"])
        expect(name, "body", body, unhex(v["body_hex"]))
        digest = signing_digest(file["tx_signing_tag"], domain, body)
        expect(name, "signing digest", digest, unhex(v["signing_digest"]))
        signature = unhex(v["signature"])
        if not bip340_verify(public_key, digest, signature):
            failures.append(f"{name}: the signature does not verify")
        tx = bytes_field(1, body) + bytes_field(2, signature)
        expect(name, "transaction", tx, unhex(v["tx_hex"]))
        expect(name, "transaction hash", hashlib.sha256(tx).digest(), unhex(v["tx_hash"]))
        if "task_id" in v:
            task_id = hashlib.sha256(b"gridledger/task-id" + address +
                                     struct.pack(">Q", int(v["body"]["nonce"]))).digest()
            expect(name, "task id", task_id, unhex(v["task_id"]))
            # A redundant task: replica i is SHA-256("gridledger/task-replica" ‖ group ‖ i u32 BE).
            replicas = int(v["body"]["payload"]["replicas"])
            want = [unhex(r) for r in v.get("replica_ids", [])]
            got = [hashlib.sha256(b"gridledger/task-replica" + task_id +
                                  struct.pack(">I", i)).digest()
                   for i in range(replicas if replicas > 1 else 0)]
            if got != want:
                failures.append(f"{name}: replica ids are {[r.hex() for r in got]}, "
                                f"the vector says {[r.hex() for r in want]}")
        print(f"{name}: checked")
    return failures


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        data = json.load(f)
    failures = check(data)
    for failure in failures:
        print(failure)
    print(f"{len(data['vectors'])} vectors checked, {len(failures)} mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
