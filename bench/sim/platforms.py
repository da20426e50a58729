"""The simulated platforms and job layouts of the scale model (issue 13).

Every number a platform uses is a Param: its value and where it comes from
(a vendor specification, a standard, or a measurement on this machine with
the command that made it). platform_table() prints them all for
docs/scale/platforms.md, so the sources travel with the figures.

A platform is written as a SimGrid 3.32 XML file whose <config> section
carries SMPI's per-message overheads, and a layout as an smpirun hostfile
(one line per rank, in rank order).
"""
from dataclasses import dataclass
import json
import os

MEASUREMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "docs", "scale", "measurements.json")
NODE = "docs/scale/measurements.json, node_costs: mpiexec -n 2 build/bench/sim/message_costs (2 ranks, this machine)"
HOSTS = ("docs/scale/measurements.json, host_costs: message_costs on 2 emulated hosts "
         "(tools/vcluster, bench/sim/calibration.spec, 1 Gbit/s)")


@dataclass(frozen=True)
class Param:
    value: float
    unit: str
    source: str


def least_disturbed(column, values):
    """Other work on this machine (other agents' jobs share its 2 cores) only
    ever adds time: of several repeats, the fastest time and the highest
    rate are the nearest to the machine running nothing else, which is what
    the model stands for."""
    return max(values) if column == "stream_Bps" else min(values)


def _measured():
    """Per message size, the least disturbed of calibrate.py's repeats for
    each column of message_costs, for this machine (node) and two emulated
    hosts."""
    with open(MEASUREMENTS) as f:
        data = json.load(f)
    out = {}
    for key in ("node_costs", "host_costs"):
        table = {}
        for repeat in data["repeats"]:
            for row in repeat[key]:
                table.setdefault(int(row["bytes"]), []).append(row)
        out[key] = {size: {c: least_disturbed(c, [float(r[c]) for r in rows]) for c in rows[0] if c != "bytes"}
                    for size, rows in sorted(table.items())}
    return out


COSTS = _measured()
NODE_COSTS = COSTS["node_costs"]
HOST_COSTS = COSTS["host_costs"]

SHM_ONE_WAY = Param(NODE_COSTS[8]["one_way_s"], "s", f"one-way time of 8 B; {NODE}")
SHM_SEND = Param(NODE_COSTS[8]["send_s"], "s", f"CPU time of MPI_Isend of 8 B; {NODE}")
SHM_RECV = Param(NODE_COSTS[8]["recv_s"], "s", f"CPU time of MPI_Recv of an arrived 8 B message; {NODE}")
SHM_COPY = Param(4088 / max(NODE_COSTS[4096]["send_s"] - NODE_COSTS[8]["send_s"], 1e-9), "B/s",
                 f"MPI_Isend of 4 KiB against 8 B: the eager copy's rate; {NODE}")
SHM_BANDWIDTH = Param(max(r["stream_Bps"] for r in NODE_COSTS.values()), "B/s",
                      f"best stream rate over the sizes; {NODE}")

TCP_ONE_WAY = Param(HOST_COSTS[8]["one_way_s"], "s", f"one-way time of 8 B; {HOSTS}")
TCP_SEND = Param(HOST_COSTS[8]["send_s"], "s", f"CPU time of MPI_Isend of 8 B; {HOSTS}")
TCP_RECV = Param(HOST_COSTS[8]["recv_s"], "s", f"CPU time of MPI_Recv of an arrived 8 B message; {HOSTS}")
# The tbf bucket (256 KB, tools/vcluster) lets a short burst pass at memory
# speed, so only the largest size's burst (64 x 256 KiB) measures the rate.
TCP_EFFICIENCY = Param(HOST_COSTS[max(HOST_COSTS)]["stream_Bps"] / (1e9 / 8), "",
                       "stream rate of 64 x 256 KiB / the 1 Gbit/s tbf rate (TCP/IPv4 with timestamps over a "
                       f"1500 B MTU carries 1448 B per 1514 B frame as tbf counts it: 0.956); {HOSTS}")


def piecewise(costs, column):
    """SMPI's 'size:offset:per-byte' sections through the measured points:
    between two measured sizes, the straight line through them; past the
    last one, the last segment's slope. A receive that took longer than the
    one-way time did not find its message arrived (a rendezvous: it waited
    for the transfer), so it measures no overhead and is left out.
    A section's offset may be negative: SMPI uses a section only above its
    start size, where the line is at or above the measured point."""
    sizes = [s for s in sorted(costs) if column != "recv_s" or costs[s]["recv_s"] < costs[s]["one_way_s"]]
    sections = []
    slope = 0.0
    for i, size in enumerate(sizes):
        t = costs[size][column]
        if i + 1 < len(sizes):
            nxt = sizes[i + 1]
            slope = max((costs[nxt][column] - t) / (nxt - size), 0.0)
        offset = t - slope * size
        sections.append(f"{0 if i == 0 else size}:{offset:.6g}:{slope:.6g}")
    return ";".join(sections)


HDR100 = Param(100e9 / 8, "B/s", "InfiniBand HDR100: 2 lanes x 53.125 Gb/s, 64b/66b encoding, 100 Gb/s effective "
               "(NVIDIA ConnectX-6 InfiniBand/VPI adapter user manual)")
CX6_LATENCY = Param(0.6e-6, "s", "NVIDIA ConnectX-6 VPI: 'sub-600ns latency' (adapter user manual, Introduction); "
                    "taken as the whole network's one-way latency, switch included")
GBE_1 = Param(1e9 / 8, "B/s", "IEEE 802.3ab 1000BASE-T: 1 Gb/s")
GBE_25 = Param(25e9 / 8, "B/s", "IEEE 802.3by 25GBASE: 25 Gb/s")
WIRE_ETH = Param(5e-6, "s", "not measurable here: Ethernet switch and wire, taken as 5 us (on the TCP platforms "
                 "the software figures above dominate it)")

VC_A = Param(1e9 / 8, "B/s", "tests/vcluster/three_subnets.spec: subnet a, 1gbit (tc tbf)")
VC_B = Param(500e6 / 8, "B/s", "tests/vcluster/three_subnets.spec: subnet b, 500mbit (tc tbf)")
VC_C = Param(250e6 / 8, "B/s", "tests/vcluster/three_subnets.spec: subnet c, 250mbit (tc tbf)")
VC_UP = Param(100e6 / 8, "B/s", "tests/vcluster/three_subnets.spec: every subnet's router link, 100mbit (tc tbf)")
VC_INTRA = Param(8.0e-6, "s", "measured here: shim-probe's 8 B one-way time inside a subnet "
                 "(tests/vcluster/three_subnets_profile.json, minimum over the three subnets)")
VC_INTER = Param(136e-6, "s", "measured here: shim-probe's 8 B one-way time between subnets "
                 "(tests/vcluster/three_subnets_profile.json, minimum over subnet pairs)")

HET_UPLINK = Param(1e9 / 8, "B/s", "IEEE 802.3ab 1 Gb/s: each subnet's uplink, 25x slower than its hosts' links "
                   "(ECO, Lowekamp and Beguelin, Figure 1: subnets joined by slower links)")
HET_SUBNETS = Param(4, "", "ECO's Figure 1 has 3 subnets; 4 here, so that 128 nodes split evenly")


@dataclass(frozen=True)
class Platform:
    name: str
    title: str
    kind: str                   # cluster, hetero, three_subnets
    bandwidth: Param            # a node's link, each direction
    latency: Param              # one-way network latency, end to end
    send: Param                 # CPU time per small message sent (SMPI os/ois at 8 B)
    recv: Param                 # CPU time per small message received (SMPI or at 8 B)
    costs: dict = None          # measured per-size costs: SMPI's os and or follow them
    send_copy: Param = None     # onload: the sending core copies every byte at this rate
    bandwidth_efficiency: Param = None
    nic: str = "onload"         # the class shim-probe's concurrent-pairs test finds

    def params(self):
        named = [("link bandwidth", self.bandwidth), ("network latency", self.latency),
                 ("send overhead at 8 B (larger: the measured curve)", self.send),
                 ("receive overhead at 8 B (larger: the measured curve)", self.recv),
                 ("shared-memory bandwidth", SHM_BANDWIDTH), ("shared-memory one-way", SHM_ONE_WAY)]
        if self.send_copy:
            named.append(("sending core's copy rate (onload)", self.send_copy))
        if self.bandwidth_efficiency:
            named.append(("TCP payload efficiency", self.bandwidth_efficiency))
        if self.costs is not NODE_COSTS:
            named += [("send overhead within a node at 8 B (larger: the measured curve)", SHM_SEND),
                      ("receive overhead within a node at 8 B (larger: the measured curve)", SHM_RECV)]
        if self.kind == "hetero":
            named += [("uplink bandwidth", HET_UPLINK), ("subnets", HET_SUBNETS)]
        if self.kind == "three_subnets":
            named += [("subnet a, b, c host links", VC_A), ("", VC_B), ("", VC_C), ("router links", VC_UP),
                      ("one-way inside a subnet", VC_INTRA), ("one-way between subnets", VC_INTER)]
        return named


PLATFORMS = {p.name: p for p in [
    Platform("ib-onload", "InfiniBand-like cluster, onload NIC", "cluster", HDR100, CX6_LATENCY, SHM_SEND, SHM_RECV,
             NODE_COSTS, send_copy=SHM_COPY),
    Platform("ib-offload", "InfiniBand-like cluster, offload NIC", "cluster", HDR100, CX6_LATENCY, SHM_SEND,
             SHM_RECV, NODE_COSTS, nic="offload"),
    Platform("eth-1g", "1 GbE cluster (TCP)", "cluster", GBE_1, TCP_ONE_WAY, TCP_SEND, TCP_RECV, HOST_COSTS,
             bandwidth_efficiency=TCP_EFFICIENCY),
    Platform("eth-25g", "25 GbE cluster (TCP)", "cluster", GBE_25, TCP_ONE_WAY, TCP_SEND, TCP_RECV, HOST_COSTS,
             bandwidth_efficiency=TCP_EFFICIENCY),
    Platform("hetero", "ECO-like: 25 GbE subnets joined by 1 GbE uplinks", "hetero", GBE_25, TCP_ONE_WAY,
             TCP_SEND, TCP_RECV, HOST_COSTS, bandwidth_efficiency=TCP_EFFICIENCY),
    Platform("three-subnets", "tests/vcluster/three_subnets.spec", "three_subnets", VC_A, VC_INTRA, TCP_SEND,
             TCP_RECV, HOST_COSTS, bandwidth_efficiency=TCP_EFFICIENCY),
]}


def probed_settings(name):
    """What shim-probe would write into a profile on this platform, as the
    settings that override a profile: the NIC class (offload where concurrent
    senders add no bandwidth), the send cost of a small message to another
    node (the platform's send overhead at 8 B) and what a node's link carries
    (its bandwidth, times TCP's payload efficiency where that applies).
    Applied to every shim run, so that `auto` decides as it would on a probed
    cluster."""
    platform = PLATFORMS[name]
    return {"SHIM_NIC": platform.nic, "SHIM_SEND_COST_NS": str(round(platform.send.value * 1e9)),
            "SHIM_NODE_BANDWIDTH": str(round(link_bandwidth(platform, platform.bandwidth)))}


def _bps(value):
    return f"{value:.6g}Bps"


def _s(value):
    return f"{value:.6g}s"


def _smpi_config(platform):
    """SMPI's per-message CPU costs: 'size:offset:per-byte' sections. The
    measured curves, except that an onload NIC's sending core copies every
    byte (host-based sending, Kumar, Mamidala and Panda, Section 2.1), at the
    rate this machine's MPI copies eager messages."""
    if platform.send_copy:
        send = f"0:{platform.send.value:.6g}:{1.0 / platform.send_copy.value:.6g}"
    else:
        send = piecewise(platform.costs, "send_s")
    recv = piecewise(platform.costs, "recv_s")
    lines = ['  <config>',
             f'    <prop id="smpi/os" value="{send}"/>',
             f'    <prop id="smpi/ois" value="{send}"/>',
             f'    <prop id="smpi/or" value="{recv}"/>',
             # The link figures are end to end already: no size-dependent corrections.
             '    <prop id="smpi/bw-factor" value="0:1"/>',
             '    <prop id="smpi/lat-factor" value="0:1"/>',
             '  </config>']
    return lines


def node_costs_spec(platform):
    """sim_collectives --node-costs: on the TCP platforms, messages within a
    node (a rank's own block in an alltoall included) go through shared
    memory, as MPICH sends them, at this machine's shared-memory costs
    rather than TCP's. None where every message already has those costs."""
    if platform.costs is NODE_COSTS:
        return None
    send = piecewise(NODE_COSTS, "send_s")
    return f"{send}/{send}/{piecewise(NODE_COSTS, 'recv_s')}"


def _network_one_way(platform):
    """The network's share of a small message's one-way time (the measured
    one-way time includes both ends' software overheads)."""
    if platform.latency in (TCP_ONE_WAY, VC_INTRA, VC_INTER):
        return max(platform.latency.value - platform.send.value - platform.recv.value, 1e-7)
    return platform.latency.value


def link_bandwidth(platform, param):
    eff = platform.bandwidth_efficiency.value if platform.bandwidth_efficiency else 1.0
    return param.value * eff


def _loopback():
    lat = max(SHM_ONE_WAY.value - SHM_SEND.value - SHM_RECV.value, 1e-8)
    return _bps(SHM_BANDWIDTH.value), _s(lat)


def cluster_xml(platform, nodes, cores):
    """Nodes n0..n{nodes-1} on one non-blocking switch; each node's link is
    full duplex; ranks on one node talk through its loopback (shared memory)."""
    loop_bw, loop_lat = _loopback()
    lat = _network_one_way(platform) / 2
    return "\n".join([
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">', *_smpi_config(platform),
        '  <zone id="world" routing="Full">',
        f'    <cluster id="c" prefix="n" suffix="" radical="0-{nodes - 1}" speed="1Gf" core="{cores}" '
        f'bw="{_bps(link_bandwidth(platform, platform.bandwidth))}" lat="{_s(lat)}" sharing_policy="SPLITDUPLEX" '
        f'loopback_bw="{loop_bw}" loopback_lat="{loop_lat}" bb_bw="1e15Bps" bb_lat="0s" bb_sharing_policy="FATPIPE"/>',
        '  </zone>', '</platform>', ""])


def hetero_xml(platform, nodes, cores):
    """Node i sits in subnet i % S (so consecutive ranks cross subnets, as in
    tests/vcluster/three_subnets.spec); each subnet is a cluster whose router
    reaches the others through its own uplink."""
    subnets = int(HET_SUBNETS.value)
    loop_bw, loop_lat = _loopback()
    lat = _network_one_way(platform) / 2
    up_bw = _bps(link_bandwidth(platform, HET_UPLINK))
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', *_smpi_config(platform), '  <zone id="world" routing="Full">']
    for s in range(subnets):
        members = [i for i in range(nodes) if i % subnets == s]
        if not members:
            continue
        radical = ",".join(str(i) for i in members)
        lines.append(
            f'    <cluster id="s{s}" prefix="n" suffix="" radical="{radical}" speed="1Gf" core="{cores}" '
            f'bw="{_bps(link_bandwidth(platform, platform.bandwidth))}" lat="{_s(lat)}" '
            f'sharing_policy="SPLITDUPLEX" loopback_bw="{loop_bw}" loopback_lat="{loop_lat}" bb_bw="1e15Bps" '
            f'bb_lat="0s" bb_sharing_policy="FATPIPE" router_id="s{s}-router"/>')
        lines.append(f'    <link id="s{s}-up" bandwidth="{up_bw}" latency="{_s(lat)}" sharing_policy="SPLITDUPLEX"/>')
    used = [s for s in range(subnets) if s < nodes]
    for a in used:
        for b in used:
            if a < b:
                lines += [f'    <zoneRoute src="s{a}" dst="s{b}" gw_src="s{a}-router" gw_dst="s{b}-router">',
                          f'      <link_ctn id="s{a}-up" direction="UP"/><link_ctn id="s{b}-up" direction="DOWN"/>',
                          '    </zoneRoute>']
    lines += ['  </zone>', '</platform>', ""]
    return "\n".join(lines)


THREE_SUBNETS = {"h0": "a", "h1": "b", "h2": "c", "h3": "a", "h4": "b", "h5": "c"}


def three_subnets_xml(platform):
    """The six hosts of tests/vcluster/three_subnets.spec: each host's link to
    its subnet's bridge, each subnet's link to the router."""
    rates = {"a": VC_A, "b": VC_B, "c": VC_C}
    host_lat = _network_one_way(platform) / 2
    # Between subnets a message crosses two host links and two router links.
    inter = max(VC_INTER.value - platform.send.value - platform.recv.value, 1e-7)
    up_lat = max(inter / 2 - host_lat, 1e-7)
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', *_smpi_config(platform), '  <zone id="world" routing="Full">']
    for host, subnet in THREE_SUBNETS.items():
        lines.append(f'    <host id="{host}" speed="1Gf"/>')
        lines.append(f'    <link id="{host}-link" bandwidth="{_bps(link_bandwidth(platform, rates[subnet]))}" '
                     f'latency="{_s(host_lat)}" sharing_policy="SPLITDUPLEX"/>')
    for subnet in "abc":
        lines.append(f'    <link id="{subnet}-up" bandwidth="{_bps(link_bandwidth(platform, VC_UP))}" '
                     f'latency="{_s(up_lat)}" sharing_policy="SPLITDUPLEX"/>')
    hosts = list(THREE_SUBNETS)
    for a in hosts:
        for b in hosts:
            if a == b:
                continue
            links = [f'<link_ctn id="{a}-link" direction="UP"/>']
            if THREE_SUBNETS[a] != THREE_SUBNETS[b]:
                links += [f'<link_ctn id="{THREE_SUBNETS[a]}-up" direction="UP"/>',
                          f'<link_ctn id="{THREE_SUBNETS[b]}-up" direction="DOWN"/>']
            links.append(f'<link_ctn id="{b}-link" direction="DOWN"/>')
            lines.append(f'    <route src="{a}" dst="{b}" symmetrical="NO">{"".join(links)}</route>')
    lines += ['  </zone>', '</platform>', ""]
    return "\n".join(lines)


def platform_xml(name, nodes, cores):
    platform = PLATFORMS[name]
    if platform.kind == "cluster":
        return cluster_xml(platform, nodes, cores)
    if platform.kind == "hetero":
        return hetero_xml(platform, nodes, cores)
    return three_subnets_xml(platform)


@dataclass(frozen=True)
class Layout:
    """Ranks on nodes. counts[i]: ranks on node i; round_robin: rank r goes
    to the r-th node (cycling) that still has room, instead of filling nodes
    one after the other."""
    counts: tuple
    round_robin: bool = False

    @staticmethod
    def regular(nodes, ppn, round_robin=False):
        return Layout(tuple([ppn] * nodes), round_robin)

    @property
    def nodes(self):
        return len(self.counts)

    @property
    def ranks(self):
        return sum(self.counts)

    @property
    def max_ppn(self):
        return max(self.counts)

    def label(self):
        if len(set(self.counts)) == 1:
            text = f"{self.nodes}x{self.counts[0]}"
        else:
            first = self.counts[0]
            rest = [c for c in self.counts if c != first]
            text = f"{self.counts.count(first)}x{first}+{len(rest)}x{rest[0]}" if len(set(rest)) == 1 else \
                "uneven" + "-".join(map(str, self.counts))
        return text + ("-rr" if self.round_robin else "")

    def hosts(self, names):
        """The host of each rank, in rank order."""
        if not self.round_robin:
            return [names[i] for i, c in enumerate(self.counts) for _ in range(c)]
        left = list(self.counts)
        order = []
        while len(order) < self.ranks:
            for i in range(self.nodes):
                if left[i]:
                    order.append(names[i])
                    left[i] -= 1
        return order


def host_names(name, nodes):
    if PLATFORMS[name].kind == "three_subnets":
        return list(THREE_SUBNETS)[:nodes]
    return [f"n{i}" for i in range(nodes)]


def hostfile(name, layout):
    return "".join(h + "\n" for h in layout.hosts(host_names(name, layout.nodes)))


def platform_table():
    """Markdown: every platform's parameters with their sources."""
    out = []
    for p in PLATFORMS.values():
        out += [f"### {p.name}: {p.title}", "", "| parameter | value | source |", "|---|---|---|"]
        for label, param in p.params():
            out.append(f"| {label} | {format_value(param)} | {param.source} |")
        out.append("")
    return "\n".join(out)


def format_value(param):
    v, unit = param.value, param.unit
    if unit == "B/s":
        return f"{v * 8 / 1e9:.3g} Gb/s" if v * 8 >= 1e9 else f"{v * 8 / 1e6:.3g} Mb/s"
    if unit == "s":
        return f"{v * 1e6:.3g} us"
    return f"{v:g}"


def hetero_profile_json(name, nodes):
    """The profile shim-probe would write for the ECO-like platform: one-way
    times between nodes (both ends' overheads, the network's latency, the
    slowest link's transfer time), the subnets as the platform builds them
    (node i in subnet i % S), and the broadcast fan-out its test would
    measure."""
    import json
    platform = PLATFORMS[name]
    subnets = int(HET_SUBNETS.value)
    sizes = [8, 65536, 524288]
    overhead = platform.send.value + platform.recv.value
    host_bw = link_bandwidth(platform, platform.bandwidth)
    up_bw = link_bandwidth(platform, HET_UPLINK)
    net = _network_one_way(platform)

    def one_way(a, b, size):
        if a == b:
            return 0.0
        if a % subnets == b % subnets:
            return overhead + net + size / host_bw
        return overhead + 2 * net + size / min(host_bw, up_bw)

    groups = [[i for i in range(nodes) if i % subnets == s] for s in range(subnets)]
    profile = {
        "format": "shim-network-profile", "version": 1,
        "created_by": f"bench/sim/platforms.py: the {name} platform's own figures, {nodes} nodes",
        "hosts": [f"n{i}" for i in range(nodes)],
        "sizes": sizes,
        "cost_seconds": [[[one_way(a, b, s) for b in range(nodes)] for a in range(nodes)] for s in sizes],
        "partition_size": sizes[-1],
        "subnets": [g for g in groups if g],
        "nic": {"class": "onload", "pair_throughput": []},
        # shim-probe's fan-out test (node 0 feeding its two nearest nodes at
        # once against one) finds no gain here: both sends leave through the
        # sender's one host link, one after the other on its CPU, so it
        # writes k = 1.
        "bcast_k": 1,
    }
    return json.dumps(profile)
