#!/usr/bin/env python3
"""Where a task's scheduling delay goes, hop by hop, from a packet capture.

Reads a pcap of loopback traffic taken while `sparrow bench procs` runs
(docs/BENCHMARKS.md, "Scheduling delay at 20% load"):

    tcpdump -i lo -s 1000 -B 16384 -w cap.pcap 'net 127.60.0.0/16 and tcp' &
    sparrow bench procs --rates 40 --jobs 600 --task-duration 100ms --out OUT
    kill %1; python3 scripts/bench/hops.py cap.pcap

Every Thrift call (framed, binary protocol) is found by its method name;
calls are matched to jobs by the request id the driver chose
(<prefix>-j<job>.<attempt>), and replies to the call last sent on the same
connection. For each job it prints the time from the driver's submitJob
packet to each step, as percentiles over jobs; "launched_at" is the
executor's own launch time, carried in the task's message. One packet per
frame is assumed, which holds for these small calls on loopback.
"""
import collections
import re
import struct
import sys


def packets(path):
    """Yields (time, src, sport, dst, dport, payload) of TCP segments with data."""
    with open(path, 'rb') as f:
        head = f.read(24)
        magic = struct.unpack('<I', head[:4])[0]
        if magic not in (0xa1b2c3d4, 0xa1b23c4d):
            sys.exit(f'{path}: not a little-endian pcap file')
        scale = 1e-9 if magic == 0xa1b23c4d else 1e-6
        link = struct.unpack('<I', head[20:24])[0]
        off = {1: 14, 113: 16}.get(link)
        if off is None:
            sys.exit(f'{path}: link type {link} not handled (want Ethernet or Linux cooked)')
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _ = struct.unpack('<IIII', rec)
            data = f.read(incl)
            ip = data[off:]
            if len(ip) < 20 or ip[0] >> 4 != 4:
                continue
            tcp = ip[(ip[0] & 15) * 4:]
            if len(tcp) < 20:
                continue
            sport, dport = struct.unpack('>HH', tcp[:4])
            payload = tcp[(tcp[12] >> 4) * 4:]
            if payload:
                yield (sec + frac * scale, ip[12:16], sport, ip[16:20], dport, payload)


REQUEST = re.compile(rb'([a-z0-9]+-j\d+\.\d+)')
LAUNCHED = re.compile(rb'launched_at_unix_ns=(\d+)')
REPLY = 2


def main(path):
    events = collections.defaultdict(lambda: collections.defaultdict(list))
    last_call = {}
    for t, src, sport, dst, dport, pl in packets(path):
        i = 0
        while i + 12 <= len(pl):
            size, version = struct.unpack('>II', pl[i:i + 8])
            if version >> 16 != 0x8001:
                break
            nlen = struct.unpack('>I', pl[i + 8:i + 12])[0]
            if nlen > 64:
                break
            # The offer extension is an enqueue like any other here.
            name = pl[i + 12:i + 12 + nlen].decode(errors='replace').replace('WithOffer', '')
            body = pl[i + 12 + nlen:i + 4 + size]
            if version & 0xff == REPLY:
                req = last_call.get((dst, dport, src, sport))
                if req:
                    events[req][name + ' reply'].append(t)
            else:
                m = REQUEST.search(body)
                if m:
                    req = m.group(1).decode()
                    events[req][name].append(t)
                    last_call[(src, sport, dst, dport)] = req
                    la = LAUNCHED.search(body)
                    if la and name in ('taskDone', 'sendFrontendMessage'):
                        events[req]['launched_at'].append(int(la.group(1)) / 1e9)
            i += 4 + size
    rows = collections.OrderedDict()

    def add(label, v):
        rows.setdefault(label, [])
        if v is not None:
            rows[label].append(v)

    for ev in events.values():
        if not ev.get('submitJob') or not ev.get('launched_at'):
            continue
        t0 = min(ev['submitJob'])
        # taskDone or sendFrontendMessage: one of the two per task.
        launched = sorted(set(ev['launched_at']))

        def at(name, k=0):
            ts = sorted(ev.get(name, []))
            return (ts[k] - t0) * 1e6 if len(ts) > k else None
        add('first enqueue sent', at('enqueueTaskReservations'))
        add('last enqueue sent', (max(ev['enqueueTaskReservations']) - t0) * 1e6 if ev.get('enqueueTaskReservations') else None)
        add('first enqueue answered', at('enqueueTaskReservations reply'))
        add('first getTask sent', at('getTask'))
        add('first getTask answered', at('getTask reply'))
        add('first launchTask sent', at('launchTask'))
        add('first task launched (executor clock)', (launched[0] - t0) * 1e6)
        add('last launchTask sent', (max(ev['launchTask']) - t0) * 1e6 if ev.get('launchTask') else None)
        add('last task launched (executor clock)', (launched[-1] - t0) * 1e6)
        add('submitJob answered', at('submitJob reply'))
    print(f'{"step, from the submitJob packet (µs)":42s} {"jobs":>6s} {"p50":>8s} {"p90":>8s} {"p99":>8s}')
    for label, v in rows.items():
        if not v:
            continue
        v.sort()
        q = lambda p: v[min(len(v) - 1, int(len(v) * p))]
        print(f'{label:42s} {len(v):6d} {q(.5):8.0f} {q(.9):8.0f} {q(.99):8.0f}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: hops.py CAPTURE.pcap')
    main(sys.argv[1])
