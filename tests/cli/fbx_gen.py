#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Export-file variants for tests/cli/fbx_fuzz.sh:
#   fbx_gen.py OUTDIR SEED MAXLEN BASE.fbx...
# writes OUTDIR/NNN.fbx, each a variant of one BASE, and OUTDIR/list
# ("NNN<TAB>description" per line); MAXLEN is FB_MAX_LENGTHS, the lengths
# a prefix list holds (struct fb_lengths: a count, then MAXLEN lengths).
# Variants: every header field set to
# values at and past the edges of its range (type, flows = 2^64 - 1,
# nblocks, prefix lengths, ...), counters that contradict their bits,
# exact-set entries that are no rules or are listed twice, truncations and
# trailing bytes, and random bit flips in the body: all with the CRC fixed
# up (so the content checks, not the checksum, must catch them), and a few
# without. The layout is the one in user/lib/fleet/fbx.h.
import random, struct, sys, zlib

OFF = dict(version=8, hdr_size=12, layout=16, hash=17, k=18, cbits=19, action=20, confirm=21,
           type=22, flags=23, nblocks=24, kinds=28, key=32, flows=48, capacity=56, fp=64,
           reserved=68, px=72)
BITS = 136
WIDTH = dict(version=4, hdr_size=4, nblocks=4, kinds=4, flows=8, capacity=8, fp=4, reserved=4)
RULE = 44  # struct fb_key (40) + u32 count


class Export:
    def __init__(self, data):
        self.d = bytearray(data[:-4])  # without the CRC
        h = self.d
        self.nblocks = struct.unpack_from("<I", h, 24)[0]
        self.cbits, self.confirm, self.type = h[19], h[21], h[22]
        m = self.nblocks * 512
        self.cnt_off = BITS + self.nblocks * 64
        self.cnt_len = ((m * self.cbits + 7) // 8 + 63) // 64 * 64 if self.cbits else 0
        self.sets_off = self.cnt_off + self.cnt_len
        self.nrules = struct.unpack_from("<Q", h, self.sets_off)[0] if self.confirm else 0

    def out(self, crc=True):
        c = zlib.crc32(bytes(self.d)) & 0xffffffff
        return bytes(self.d) + struct.pack("<I", c if crc else c ^ 1)

    def set(self, field, v):
        w = WIDTH.get(field, 1)
        struct.pack_into({1: "<B", 4: "<I", 8: "<Q"}[w], self.d, OFF[field], v & ((1 << 8 * w) - 1))

    def get(self, field):
        w = WIDTH.get(field, 1)
        return struct.unpack_from({1: "<B", 4: "<I", 8: "<Q"}[w], self.d, OFF[field])[0]

    def counter(self, p):
        if self.cbits == 8:
            return self.d[self.cnt_off + p]
        return (self.d[self.cnt_off + p // 2] >> (p & 1) * 4) & 15

    def bit(self, p):
        return self.d[BITS + p // 8] >> (p % 8) & 1


def main():
    outdir, seed, maxlen, bases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    lst6d = OFF["px"] + 3 * (1 + maxlen)  # the IPv6 destination list
    rnd = random.Random(seed)
    variants = []

    def add(base, desc, mutate, crc=True):
        x = Export(open(base, "rb").read())
        r = mutate(x)
        data = r if isinstance(r, (bytes, bytearray)) else x.out(crc)
        variants.append(("%s: %s" % (base.rsplit("/", 1)[-1], desc), data))

    def setf(field, v):
        def f(x):
            x.set(field, v)
        return f

    # Header fields at and past their edges, each base in turn.
    edges = [("version", [1, 3]), ("hdr_size", [0, 121]), ("layout", [0, 1, 2, 3, 255]),
             ("hash", [0, 1, 4, 5, 255]), ("k", [0, 1, 16, 17, 255]), ("cbits", [0, 4, 5, 8]),
             ("action", [0, 1, 3, 4]), ("confirm", [0, 1, 2]), ("type", [0, 1, 2, 3, 4, 255]),
             ("flags", [0, 1, 2, 255]), ("kinds", [0, 2, 14, 15, 16, 0xffffffff]),
             ("flows", [0, 1 << 60, (1 << 64) - 1]), ("capacity", [0, (1 << 64) - 1]),
             ("fp", [0, 999999999, 1000000000, 0xffffffff]), ("reserved", [1])]
    i = 0
    for field, values in edges:
        for v in values:
            add(bases[i % len(bases)], "%s = %d" % (field, v), setf(field, v))
            i += 1
    for b in bases:
        x = Export(open(b, "rb").read())
        cap = x.nblocks * 512 * 256
        add(b, "flows = 2^64 - 1", setf("flows", (1 << 64) - 1))
        add(b, "flows = the bound + 1", setf("flows", cap + 1))
        add(b, "nblocks = 0", setf("nblocks", 0))
        add(b, "nblocks doubled", setf("nblocks", x.nblocks * 2))
        add(b, "nblocks = 2^23 + 1", setf("nblocks", (1 << 23) + 1))
        add(b, "prefix list 0 claims %d lengths" % (maxlen + 1),
            lambda x: x.d.__setitem__(OFF["px"], maxlen + 1))
        add(b, "prefix list 0 claims 255", lambda x: x.d.__setitem__(OFF["px"], 255))
        add(b, "IPv4 source length /-1 (95)",
            lambda x: (x.d.__setitem__(OFF["px"], 1), x.d.__setitem__(OFF["px"] + 1, 95)))
        add(b, "IPv6 destination length 129",
            lambda x: (x.d.__setitem__(lst6d, 1), x.d.__setitem__(lst6d + 1, 129)))
        add(b, "truncated in the header", lambda x: x.out()[:100])
        add(b, "truncated in the bits", lambda x: x.out()[:BITS + 70])
        add(b, "last byte missing", lambda x: x.out()[:-1])
        add(b, "a trailing byte", lambda x: x.out() + b"\0")
        add(b, "a bit flipped, CRC not fixed",
            lambda x: x.d.__setitem__(BITS + 3, x.d[BITS + 3] ^ 4), crc=False)
        # Random bit flips in the body, CRC fixed up.
        body = len(x.d) - BITS
        for _ in range(6):
            p = BITS + rnd.randrange(body)
            bit = 1 << rnd.randrange(8)
            add(b, "byte %d ^= %d" % (p, bit),
                lambda x, p=p, bit=bit: x.d.__setitem__(p, x.d[p] ^ bit))
        if x.type == 0:
            for t in (1, 3, 4, 255):
                add(b, "a Bloom filter with type byte %d" % t, setf("type", t))
        if x.cbits:
            # A set bit over a zero counter, and a counter without its bit.
            m = x.nblocks * 512
            on = next(p for p in range(m) if x.bit(p))
            off = next(p for p in range(m) if not x.bit(p))
            add(b, "bit %d cleared under its counter" % on,
                lambda x, p=on: x.d.__setitem__(BITS + p // 8, x.d[BITS + p // 8] & ~(1 << p % 8)))
            add(b, "bit %d set over a zero counter" % off,
                lambda x, p=off: x.d.__setitem__(BITS + p // 8, x.d[BITS + p // 8] | 1 << p % 8))
            add(b, "flows + 1 (counters sum k x flows no more)",
                lambda x: x.set("flows", x.get("flows") + 1))
        if x.confirm and x.nrules:
            e = x.sets_off + 8  # first entry
            add(b, "exact-set count 0", lambda x: struct.pack_into("<I", x.d, e + 40, 0))
            add(b, "exact-set count 2^31", lambda x: struct.pack_into("<I", x.d, e + 40, 1 << 31))
            add(b, "exact-set kind 0", lambda x: x.d.__setitem__(e + 37, 0))
            add(b, "exact-set kind 4", lambda x: x.d.__setitem__(e + 37, 4))
            add(b, "exact-set family 2", lambda x: x.d.__setitem__(e + 39, 2))
            add(b, "exact-set plen 200", lambda x: x.d.__setitem__(e + 38, 200))
            add(b, "exact-set address byte 15 flipped", lambda x: x.d.__setitem__(e + 15, x.d[e + 15] ^ 1))
            add(b, "exact-set address byte 31 flipped", lambda x: x.d.__setitem__(e + 31, x.d[e + 31] ^ 1))

            def dup(x):
                rec = bytes(x.d[e:e + RULE])
                struct.pack_into("<Q", x.d, x.sets_off, x.nrules + 1)
                x.d[e:e] = rec
            add(b, "an exact-set entry listed twice", dup)
            add(b, "exact-set n = 2^64 - 1", lambda x: struct.pack_into("<Q", x.d, x.sets_off, (1 << 64) - 1))
            add(b, "exact-set n + 1", lambda x: struct.pack_into("<Q", x.d, x.sets_off, x.nrules + 1))
    with open(outdir + "/list", "w") as lst:
        for n, (desc, data) in enumerate(variants):
            open("%s/%03d.fbx" % (outdir, n), "wb").write(data)
            lst.write("%03d\t%s\n" % (n, desc))


main()
