// ns-3 counterpart of fat_tree.toml beside this file (a k-ary fat tree,
// drop-tail output queues, ECMP, uniform random UDP traffic), for
// side-by-side runs: see README.md ("Fat tree") and compare.py.
//
//   fat_tree [--k K] [--seed N] [--duration T] [--load L] [--queue-bytes B]
//            [--ecmp hash|random] [--bin T]
//
// Prints one JSON line (fields: see the end of main()).
//
// Topology (cnsim's `kind = "fat_tree"`, crates/cnsim-core/src/scenario/
// topology.rs): k pods, each with k/2 edge switches E{p}.{e} and k/2
// aggregation switches A{p}.{a}; (k/2)^2 core switches C{a}.{j}; k/2 hosts
// H{p}.{e}.{h} on each edge switch (k^3/4 hosts). Edge e of pod p links to
// every A{p}.*, aggregation a of every pod to the cores C{a}.*. Nodes are
// created in cnsim's order (edge, aggregation, core switches, then hosts)
// and links in cnsim's order (host links, edge-aggregation, aggregation-
// core), so an ns-3 node id is cnsim's node index and a switch's interfaces
// come in cnsim's port order. Every link 10 Gb/s, 1 us. Switches are ns-3
// IPv4 routers, links PointToPoint links, frames 1500 B on the wire (1470 B
// of UDP payload + 8 + 20 + 2 (PPP)), so a frame takes 1.2 us.
//
// What is equivalent to cnsim:
// * Wire time (no inter-frame gap in either), propagation (1 us after the
//   last bit), store-and-forward; switch latency 0 in the scenario, and an
//   ns-3 router forwards in zero time.
// * Drop-tail output queues with no queue disc (the default FqCoDel is
//   uninstalled). cnsim's 150 KB (150,000 B) per output port counts the
//   frame on the wire until its last bit has left; ns-3's device queue
//   releases a frame when its transmission starts. A frame arriving at a
//   busy port is admitted by cnsim if queued + 1500 (on the wire) + 1500
//   <= 150,000 B and by ns-3's traffic-control layer if queued + 1500 (one
//   MTU) <= the queue's MaxSize; at an idle port both queues are empty and
//   both admit. So MaxSize = 148,500 B (the default of --queue-bytes) is
//   cnsim's rule exactly: 100 frames per port in both, counting the one on
//   the wire. (--queue-bytes 150000 gives ns-3 one frame more per port.)
//   Drops are counted by the TrafficControlLayer's TcDrop trace, plus
//   device-queue and IP drops (both expected 0).
// * ECMP (--ecmp hash, the default): cnsim's rule (crates/cnsim-core/src/
//   net/routing.rs), implemented here as an ns-3 Ipv4RoutingProtocol
//   (CnsimEcmpRouting below): shortest paths by breadth-first search over
//   the switches, every port on a shortest path kept in port order, and a
//   flow's member of a group chosen by SplitMix64's finalizer of
//   (flow id << 32 | node index) modulo the group's size. Flow ids are
//   cnsim's: source i's flows are i * (n - 1) + the destination's rank
//   among the other hosts, in host order, where i is the source's place in
//   fat_tree.toml's list (its repeat makes the source of H{p}.{e}.{h} the
//   ((e - 1) * k/2 + h - 1) * k + p - 1-th). Every frame of a flow
//   therefore takes the same path as in cnsim (compare.py checks the
//   links' loads). ns-3's own ECMP
//   (Ipv4GlobalRouting, attribute RandomEcmpRouting) draws a member per
//   packet and has no per-flow hashing; --ecmp random uses it instead,
//   which spreads load differently (no flow is stuck on a busy path) and
//   so does not simulate cnsim's network. The lookup here is a table
//   indexed by destination; Ipv4GlobalRouting scans its route list.
// * Bernoulli sources with cnsim's slot rule (common.h), one per host, at
//   `load` of the host's 10 Gb/s from time 0 to the end; each frame to a
//   host drawn uniformly among the other n - 1 (as cnsim's `to = "*"`).
//   ns-3's random streams (MRG32k3a, RngRun = seed), not cnsim's: runs
//   agree statistically, not frame by frame.
// * Time resolution is set to picoseconds, as cnsim's clock.
// * Latency of a frame: from the instant the source makes it to the arrival
//   of its last bit at the destination host (cnsim's flow latency).
//
// What is approximated: nothing in the network; the switch latency is 0 in
// both (fat_tree.toml says why). ns-3's frame-hops are the frames that
// started transmission (cnsim counts finished ones: at most one frame per
// port apart at the end of the run).
//
// Not modelled (no effect here): cnsim stops a source whose 150 KB host
// egress buffer is full (at these loads a host queue holds a few frames).
//
// Events: ns-3 executes three per frame-hop (transmit complete, receive, and
// the device queue's zero-delay wake after each dequeue) plus one per frame
// at its source, 3.17 per frame-hop here; cnsim 2.00 per frame-hop.

#include "common.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
using namespace cnsim_peer; // BernoulliSource, Connect, ParseTime, Options, frame sizes

namespace
{

// ---------------------------------------------------------------------------
// cnsim's ECMP choice (crates/cnsim-core/src/net/routing.rs, ecmp_member).
uint64_t
Mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint32_t
EcmpMember(uint32_t flow, uint32_t node, uint32_t size)
{
    return static_cast<uint32_t>(Mix64((static_cast<uint64_t>(flow) << 32) | node) % size);
}

// ---------------------------------------------------------------------------
// The fabric, as cnsim lists it.
struct Fabric
{
    uint32_t k{0};
    uint32_t half{0};
    uint32_t nSwitches{0};
    uint32_t nHosts{0};
    std::vector<std::string> name; // by node index
    std::vector<char> kind;        // 'E', 'A', 'C' or 'H'
    std::vector<uint32_t> pod;     // E, A, H: 1..k; C: 0
    std::vector<uint32_t> edge;    // H: its edge switch; E: itself
    std::vector<std::pair<uint32_t, uint32_t>> links; // (a, b)

    bool IsHost(uint32_t n) const
    {
        return n >= nSwitches;
    }
};

Fabric
MakeFatTree(uint32_t k)
{
    Fabric f;
    f.k = k;
    f.half = k / 2;
    const uint32_t h2 = f.half;
    auto add = [&](std::string n, char kind, uint32_t pod) {
        f.name.push_back(std::move(n));
        f.kind.push_back(kind);
        f.pod.push_back(pod);
        f.edge.push_back(static_cast<uint32_t>(f.name.size() - 1));
        return static_cast<uint32_t>(f.name.size() - 1);
    };
    auto s = [](uint32_t x) { return std::to_string(x); };
    std::vector<uint32_t> e(k * h2), a(k * h2), c(h2 * h2);
    for (uint32_t p = 1; p <= k; ++p)
    {
        for (uint32_t i = 1; i <= h2; ++i)
        {
            e[(p - 1) * h2 + i - 1] = add("E" + s(p) + "." + s(i), 'E', p);
        }
    }
    for (uint32_t p = 1; p <= k; ++p)
    {
        for (uint32_t i = 1; i <= h2; ++i)
        {
            a[(p - 1) * h2 + i - 1] = add("A" + s(p) + "." + s(i), 'A', p);
        }
    }
    for (uint32_t i = 1; i <= h2; ++i)
    {
        for (uint32_t j = 1; j <= h2; ++j)
        {
            c[(i - 1) * h2 + j - 1] = add("C" + s(i) + "." + s(j), 'C', 0);
        }
    }
    f.nSwitches = static_cast<uint32_t>(f.name.size());
    for (uint32_t p = 1; p <= k; ++p)
    {
        for (uint32_t i = 1; i <= h2; ++i)
        {
            for (uint32_t h = 1; h <= h2; ++h)
            {
                uint32_t n = add("H" + s(p) + "." + s(i) + "." + s(h), 'H', p);
                f.edge[n] = e[(p - 1) * h2 + i - 1];
                f.links.emplace_back(n, f.edge[n]);
            }
        }
    }
    f.nHosts = static_cast<uint32_t>(f.name.size()) - f.nSwitches;
    for (uint32_t p = 1; p <= k; ++p)
    {
        for (uint32_t i = 1; i <= h2; ++i)
        {
            for (uint32_t j = 1; j <= h2; ++j)
            {
                f.links.emplace_back(e[(p - 1) * h2 + i - 1], a[(p - 1) * h2 + j - 1]);
            }
        }
    }
    for (uint32_t p = 1; p <= k; ++p)
    {
        for (uint32_t i = 1; i <= h2; ++i)
        {
            for (uint32_t j = 1; j <= h2; ++j)
            {
                f.links.emplace_back(a[(p - 1) * h2 + i - 1], c[(i - 1) * h2 + j - 1]);
            }
        }
    }
    return f;
}

// Addresses: host link i (i = host number, the first nHosts links) is the
// /30 10.0.0.0 + 4i, the host at .1 and its edge switch at .2; switch link j
// is 11.0.0.0 + 4j. So a host's number is read off its address.
constexpr uint32_t kHostNet = 0x0A000000;   // 10.0.0.0
constexpr uint32_t kSwitchNet = 0x0B000000; // 11.0.0.0
uint32_t g_nHosts = 0;
// cnsim's index of the source on each host (by host number): fat_tree.toml
// makes them with repeat = { p, e, h }, whose variables vary in the order of
// their names, e slowest and p fastest.
std::vector<uint32_t> g_sourceIndex;

Ipv4Address
HostAddress(uint32_t h)
{
    return Ipv4Address(kHostNet + 4 * h + 1);
}

// Host number of an address, or -1.
int64_t
HostOf(Ipv4Address addr)
{
    uint32_t a = addr.Get();
    if (a < kHostNet + 1 || (a - kHostNet) % 4 != 1)
    {
        return -1;
    }
    uint32_t h = (a - kHostNet) / 4;
    return h < g_nHosts ? static_cast<int64_t>(h) : -1;
}

// ---------------------------------------------------------------------------
// cnsim's routing as an ns-3 routing protocol. A host sends everything out
// of its one interface; a switch keeps, per destination host, the
// interfaces on a shortest path (in port order) and picks one per flow.
class CnsimEcmpRouting : public Ipv4RoutingProtocol
{
  public:
    struct Hop
    {
        uint32_t iface;
        Ipv4Address gateway; // the neighbour's address on that link
    };

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("cnsim::CnsimEcmpRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .AddConstructor<CnsimEcmpRouting>();
        return tid;
    }

    void SetHost(uint32_t hostNumber, Hop uplink)
    {
        m_host = static_cast<int64_t>(hostNumber);
        m_uplink = uplink;
    }

    void SetSwitch(uint32_t node, std::vector<std::vector<Hop>> table)
    {
        m_node = node;
        m_table = std::move(table);
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>,
                               const Ipv4Header& header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& sockerr) override
    {
        // Only hosts originate packets.
        if (m_host < 0 || HostOf(header.GetDestination()) < 0)
        {
            sockerr = Socket::ERROR_NOROUTETOHOST;
            return nullptr;
        }
        sockerr = Socket::ERROR_NOTERROR;
        return MakeRoute(header.GetDestination(), m_uplink);
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback&) override
    {
        int64_t dst = HostOf(header.GetDestination());
        if (dst >= 0 && m_host < 0)
        {
            const std::vector<Hop>& hops = m_table[dst];
            if (hops.empty())
            {
                return false;
            }
            const Hop* hop = &hops[0];
            if (hops.size() > 1)
            {
                int64_t src = HostOf(header.GetSource());
                if (src < 0)
                {
                    return false;
                }
                int64_t rank = dst < src ? dst : dst - 1; // among the source's destinations
                uint32_t flow = static_cast<uint32_t>(g_sourceIndex[src] * (g_nHosts - 1) + rank);
                hop = &hops[EcmpMember(flow, m_node, static_cast<uint32_t>(hops.size()))];
            }
            ucb(MakeRoute(header.GetDestination(), *hop), p, header);
            return true;
        }
        int32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (iif >= 0 && (dst == m_host || m_ipv4->IsDestinationAddress(header.GetDestination(), iif)))
        {
            if (!lcb.IsNull())
            {
                lcb(p, header, iif);
                return true;
            }
        }
        return false;
    }

    void NotifyInterfaceUp(uint32_t) override
    {
    }

    void NotifyInterfaceDown(uint32_t) override
    {
    }

    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        std::ostream& os = *stream->GetStream();
        if (m_host >= 0)
        {
            os << "host " << m_host << ": all via interface " << m_uplink.iface << "\n";
            return;
        }
        for (size_t h = 0; h < m_table.size(); ++h)
        {
            os << "node " << m_node << " to host " << h << ":";
            for (const Hop& hop : m_table[h])
            {
                os << " " << hop.iface;
            }
            os << "\n";
        }
    }

  private:
    // As Ipv4GlobalRouting builds its routes: one object per lookup.
    Ptr<Ipv4Route> MakeRoute(Ipv4Address dst, const Hop& hop) const
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(dst);
        r->SetGateway(hop.gateway);
        r->SetSource(m_ipv4->GetAddress(hop.iface, 0).GetLocal());
        r->SetOutputDevice(m_ipv4->GetNetDevice(hop.iface));
        return r;
    }

    Ptr<Ipv4> m_ipv4;
    int64_t m_host{-1};
    Hop m_uplink{0, Ipv4Address()};
    uint32_t m_node{0};
    std::vector<std::vector<Hop>> m_table; // by destination host number
};

class CnsimEcmpRoutingHelper : public Ipv4RoutingHelper
{
  public:
    Ipv4RoutingHelper* Copy() const override
    {
        return new CnsimEcmpRoutingHelper(*this);
    }

    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node>) const override
    {
        return CreateObject<CnsimEcmpRouting>();
    }
};

// Per switch, per destination host: the ports on a shortest path, in port
// order (routing.rs, Routes::compute). A port is (link, end): end 0 is the
// link's `a` side.
struct Port
{
    uint32_t link;
    uint32_t end;
    uint32_t peer;
};

std::vector<std::vector<std::vector<Port>>>
ShortestPathPorts(const Fabric& f)
{
    const uint32_t n = f.nSwitches + f.nHosts;
    std::vector<std::vector<Port>> adj(n);
    for (uint32_t i = 0; i < f.links.size(); ++i)
    {
        auto [a, b] = f.links[i];
        adj[a].push_back({i, 0, b});
        adj[b].push_back({i, 1, a});
    }
    std::vector<std::vector<std::vector<Port>>> next(f.nSwitches,
                                                     std::vector<std::vector<Port>>(f.nHosts));
    std::vector<std::vector<uint32_t>> behind(f.nSwitches);
    for (uint32_t h = 0; h < f.nHosts; ++h)
    {
        behind[f.edge[f.nSwitches + h]].push_back(h);
    }
    const uint32_t inf = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(n);
    for (uint32_t w = 0; w < f.nSwitches; ++w)
    {
        if (behind[w].empty())
        {
            continue;
        }
        std::fill(dist.begin(), dist.end(), inf);
        dist[w] = 0;
        std::deque<uint32_t> queue{w};
        while (!queue.empty())
        {
            uint32_t u = queue.front();
            queue.pop_front();
            for (const Port& pt : adj[u])
            {
                if (dist[pt.peer] == inf && !f.IsHost(pt.peer))
                {
                    dist[pt.peer] = dist[u] + 1;
                    queue.push_back(pt.peer);
                }
            }
        }
        for (uint32_t h : behind[w])
        {
            for (const Port& pt : adj[w])
            {
                if (pt.peer == f.nSwitches + h)
                {
                    next[w][h] = {pt};
                }
            }
        }
        for (uint32_t u = 0; u < f.nSwitches; ++u)
        {
            if (u == w || dist[u] == inf)
            {
                continue;
            }
            std::vector<Port> members;
            for (const Port& pt : adj[u])
            {
                if (dist[pt.peer] != inf && dist[pt.peer] + 1 == dist[u])
                {
                    members.push_back(pt);
                }
            }
            for (uint32_t h : behind[w])
            {
                next[u][h] = members;
            }
        }
    }
    return next;
}

// ---------------------------------------------------------------------------
// Counters filled by trace callbacks.
const Fabric* g_fabric = nullptr;
uint64_t g_deliveredFrames = 0;
int64_t g_firstDeliveryPs = -1;
int64_t g_lastDeliveryPs = -1;
long double g_latencySumPs = 0;
std::vector<int64_t> g_sentPs; // by packet uid: when the source made it

uint64_t g_devQueueDrops = 0; // device queues' own Drop trace (expected 0: the TC layer drops first)
uint64_t g_ipDrops = 0;       // Ipv4L3Protocol Drop (no route, TTL...; expected 0)
uint64_t g_tcDrops = 0;       // TrafficControlLayer TcDrop, all nodes

// Output ports by stage, as cnsim's queue names give them (node -> peer).
const char* kStages[] = {"host_up", "edge_up", "agg_up", "core_down", "agg_down", "edge_down"};
enum Stage
{
    HOST_UP,
    EDGE_UP,
    AGG_UP,
    CORE_DOWN,
    AGG_DOWN,
    EDGE_DOWN,
    N_STAGES
};
uint64_t g_stageDrops[N_STAGES] = {};
uint64_t g_unclassifiedDrops = 0;

void
SourceTx(Ptr<const Packet> p)
{
    uint64_t uid = p->GetUid();
    if (uid >= g_sentPs.size())
    {
        g_sentPs.resize(std::max<uint64_t>(uid + 1, 2 * g_sentPs.size()), -1);
    }
    g_sentPs[uid] = Simulator::Now().GetPicoSeconds();
}

void
SinkRecv(Ptr<Socket> socket)
{
    int64_t now = Simulator::Now().GetPicoSeconds();
    while (Ptr<Packet> p = socket->Recv())
    {
        if (g_deliveredFrames == 0)
        {
            g_firstDeliveryPs = now;
        }
        g_lastDeliveryPs = now;
        ++g_deliveredFrames;
        uint64_t uid = p->GetUid();
        if (uid < g_sentPs.size() && g_sentPs[uid] >= 0)
        {
            g_latencySumPs += now - g_sentPs[uid];
        }
    }
}

// A drop at node `node`: the stage of its output port follows from the
// node's kind and where the destination is.
void
TcDrop(uint32_t node, Ptr<const Packet> p)
{
    ++g_tcDrops;
    const Fabric& f = *g_fabric;
    Ipv4Header h;
    int64_t dst = p->PeekHeader(h) ? HostOf(h.GetDestination()) : -1;
    if (dst < 0)
    {
        ++g_unclassifiedDrops;
        return;
    }
    uint32_t dn = f.nSwitches + static_cast<uint32_t>(dst);
    switch (f.kind[node])
    {
    case 'H':
        ++g_stageDrops[HOST_UP];
        break;
    case 'E':
        ++g_stageDrops[f.edge[dn] == node ? EDGE_DOWN : EDGE_UP];
        break;
    case 'A':
        ++g_stageDrops[f.pod[dn] == f.pod[node] ? AGG_DOWN : AGG_UP];
        break;
    default:
        ++g_stageDrops[CORE_DOWN];
        break;
    }
}

void
DevQueueDrop(Ptr<const Packet>)
{
    ++g_devQueueDrops;
}

void
IpDrop(const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>, uint32_t)
{
    ++g_ipDrops;
}

std::string
JsonString(const std::string& s)
{
    return "\"" + s + "\""; // names are letters, digits, '.', '-' and '>'
}

} // namespace

int
main(int argc, char* argv[])
{
    // Picosecond clock, as cnsim; must precede any Time object.
    Time::SetResolution(Time::PS);

    uint32_t k = 8;
    uint64_t seed = 1;
    std::string durationStr = "50ms";
    double load = 0.6;
    uint64_t queueBytes = 148500;
    std::string ecmp = "hash";
    std::string binStr = "1ms";

    Options opts(argv[0],
                 "[--k K] [--seed N] [--duration T] [--load L] [--queue-bytes B] [--ecmp hash|random] [--bin T]\n"
                 "  T is a time with unit (100ms, 1us); defaults: k 8, seed 1, duration 50ms,\n"
                 "  load 0.6, queue-bytes 148500 (cnsim's 150 KB with the frame on the wire),\n"
                 "  ecmp hash (cnsim's per-flow hash; random: ns-3's per-packet RandomEcmpRouting),\n"
                 "  bin 1ms (throughput window)\n");
    opts.Add("--k", [&](const std::string& v) { k = static_cast<uint32_t>(std::stoul(v)); });
    opts.Add("--seed", [&](const std::string& v) { seed = std::stoull(v); });
    opts.Add("--duration", [&](const std::string& v) { durationStr = v; });
    opts.Add("--load", [&](const std::string& v) { load = std::stod(v); });
    opts.Add("--queue-bytes", [&](const std::string& v) { queueBytes = std::stoull(v); });
    opts.Add("--ecmp", [&](const std::string& v) { ecmp = v; });
    opts.Add("--bin", [&](const std::string& v) { binStr = v; });
    opts.Parse(argc, argv);
    Time duration;
    Time bin;
    if (k < 2 || k % 2 != 0 || k > 64)
    {
        opts.Fail("--k must be even, 2..64");
    }
    if (!ParseTime(durationStr, duration) || duration.IsZero())
    {
        opts.Fail("bad --duration " + durationStr);
    }
    if (!ParseTime(binStr, bin) || bin.IsZero())
    {
        opts.Fail("bad --bin " + binStr);
    }
    if (!(load > 0.0 && load <= 1.0))
    {
        opts.Fail("--load must be in (0, 1]");
    }
    if (ecmp != "hash" && ecmp != "random")
    {
        opts.Fail("--ecmp must be hash or random");
    }
    if (seed == 0)
    {
        opts.Fail("--seed must be >= 1 (ns-3 run numbers)");
    }
    const bool hash = (ecmp == "hash");

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    if (!hash)
    {
        Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    }

    const Fabric fabric = MakeFatTree(k);
    g_fabric = &fabric;
    g_nHosts = fabric.nHosts;
    for (uint32_t h = 0; h < fabric.nHosts; ++h)
    {
        const uint32_t half = fabric.half;
        uint32_t p = h / (half * half), e = (h / half) % half, i = h % half; // 0-based
        g_sourceIndex.push_back((e * half + i) * k + p);
    }
    const uint32_t nNodes = fabric.nSwitches + fabric.nHosts;
    const Time slot = PicoSeconds(static_cast<int64_t>(kFrameBytes) * 8 * 100); // 1.2 us at 10 Gb/s

    NodeContainer nodes;
    nodes.Create(nNodes); // node id = cnsim's node index
    InternetStackHelper internet;
    if (hash)
    {
        internet.SetRoutingHelper(CnsimEcmpRoutingHelper());
    }
    internet.Install(nodes);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, queueBytes)));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    // Per link end: the device, its interface index and the peer's address.
    struct End
    {
        Ptr<PointToPointNetDevice> dev;
        uint32_t iface;
        Ipv4Address peerAddr;
    };
    std::vector<std::array<End, 2>> ends(fabric.links.size());
    for (uint32_t i = 0; i < fabric.links.size(); ++i)
    {
        auto [a, b] = fabric.links[i];
        NetDeviceContainer dev = p2p.Install(nodes.Get(a), nodes.Get(b));
        uint32_t base = i < fabric.nHosts ? kHostNet + 4 * i : kSwitchNet + 4 * (i - fabric.nHosts);
        addr.SetBase(Ipv4Address(base), "255.255.255.252");
        Ipv4InterfaceContainer ifs = addr.Assign(dev);
        tch.Uninstall(dev); // pure drop tail: no queue disc
        for (uint32_t e = 0; e < 2; ++e)
        {
            auto pd = DynamicCast<PointToPointNetDevice>(dev.Get(e));
            Ptr<Ipv4> ipv4 = pd->GetNode()->GetObject<Ipv4>();
            ends[i][e] = {pd,
                          static_cast<uint32_t>(ipv4->GetInterfaceForDevice(pd)),
                          ifs.GetAddress(1 - e)};
            Connect(pd->GetQueue(), "Drop", MakeCallback(&DevQueueDrop));
        }
    }
    for (uint32_t h = 0; h < fabric.nHosts; ++h)
    {
        if (ends[h][0].dev->GetNode()->GetObject<Ipv4>()->GetAddress(ends[h][0].iface, 0).GetLocal() !=
            HostAddress(h))
        {
            std::cerr << "error: host " << h << " has not the expected address\n";
            return 1;
        }
    }

    if (hash)
    {
        auto next = ShortestPathPorts(fabric);
        for (uint32_t n = 0; n < nNodes; ++n)
        {
            auto proto = DynamicCast<CnsimEcmpRouting>(nodes.Get(n)->GetObject<Ipv4>()->GetRoutingProtocol());
            if (fabric.IsHost(n))
            {
                const End& up = ends[n - fabric.nSwitches][0]; // a host is the `a` end of its link
                proto->SetHost(n - fabric.nSwitches, {up.iface, up.peerAddr});
                continue;
            }
            std::vector<std::vector<CnsimEcmpRouting::Hop>> table(fabric.nHosts);
            for (uint32_t h = 0; h < fabric.nHosts; ++h)
            {
                for (const Port& pt : next[n][h])
                {
                    const End& e = ends[pt.link][pt.end];
                    table[h].push_back({e.iface, e.peerAddr});
                }
            }
            proto->SetSwitch(n, std::move(table));
        }
    }
    else
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }

    for (uint32_t n = 0; n < nNodes; ++n)
    {
        Connect(nodes.Get(n)->GetObject<TrafficControlLayer>(), "TcDrop", MakeBoundCallback(&TcDrop, n));
        Connect(nodes.Get(n)->GetObject<Ipv4L3Protocol>(), "Drop", MakeCallback(&IpDrop));
    }

    // Every host: a sink on the UDP port and one source to all the others.
    std::vector<Ptr<BernoulliSource>> sources;
    for (uint32_t h = 0; h < fabric.nHosts; ++h)
    {
        Ptr<Node> node = nodes.Get(fabric.nSwitches + h);
        Ptr<Socket> sink = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
        sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        sink->SetRecvCallback(MakeCallback(&SinkRecv));

        std::vector<Address> peers;
        for (uint32_t d = 0; d < fabric.nHosts; ++d)
        {
            if (d != h)
            {
                peers.push_back(InetSocketAddress(HostAddress(d), kPort));
            }
        }
        auto app = CreateObject<BernoulliSource>();
        app->Configure(std::move(peers), load, slot, Seconds(0), duration, static_cast<int64_t>(h));
        node->AddApplication(app);
        app->SetStartTime(Seconds(0));
        Connect(app, "Tx", MakeCallback(&SourceTx));
        sources.push_back(app);
    }

    const auto [wall, events, offered] = RunTimed(duration, sources);
    // Bytes that started transmission on each port (node -> peer): what
    // entered its device queue, less what is still queued. (cnsim counts a
    // frame when its last bit has left: at most one frame per port apart.)
    std::ostringstream links;
    uint64_t frameHops = 0;
    bool firstLink = true;
    for (uint32_t i = 0; i < fabric.links.size(); ++i)
    {
        for (uint32_t e = 0; e < 2; ++e)
        {
            Ptr<Queue<Packet>> q = ends[i][e].dev->GetQueue();
            uint64_t bytes = q->GetTotalReceivedBytes() - q->GetTotalDroppedBytes() - q->GetNBytes();
            frameHops += q->GetTotalReceivedPackets() - q->GetTotalDroppedPackets() - q->GetNPackets();
            uint32_t from = e == 0 ? fabric.links[i].first : fabric.links[i].second;
            uint32_t to = e == 0 ? fabric.links[i].second : fabric.links[i].first;
            links << (firstLink ? "" : ", ") << JsonString(fabric.name[from] + "->" + fabric.name[to]) << ": "
                  << bytes;
            firstLink = false;
        }
    }
    Simulator::Destroy();

    // Throughput: cnsim's rule (python/cnsim/results.py `_active_rate`)
    // applied to all flows together: delivered bytes over the span from the
    // bin of the first delivery to the bin of the last, both included.
    const int64_t binPs = bin.GetPicoSeconds();
    const int64_t nBins = (duration.GetPicoSeconds() + binPs - 1) / binPs;
    double throughput = 0.0;
    if (g_deliveredFrames > 0)
    {
        int64_t b0 = std::min(g_firstDeliveryPs / binPs, nBins - 1);
        int64_t b1 = std::min(g_lastDeliveryPs / binPs, nBins - 1);
        double span = static_cast<double>(b1 - b0 + 1) * static_cast<double>(binPs) * 1e-12;
        throughput = static_cast<double>(g_deliveredFrames) * kFrameBytes * 8.0 / span / 1e9;
    }
    double latencyUs = g_deliveredFrames ? static_cast<double>(g_latencySumPs / g_deliveredFrames) * 1e-6 : 0.0;

    std::ostringstream stages;
    for (int s = 0; s < N_STAGES; ++s)
    {
        stages << (s ? ", " : "") << JsonString(kStages[s]) << ": " << g_stageDrops[s];
    }
    const uint64_t dropsTotal = g_tcDrops + g_devQueueDrops + g_ipDrops;
    std::printf("{\"engine\": \"ns-3\", \"ns3_version\": \"3.44\", \"k\": %u, \"hosts\": %u, \"seed\": %llu, "
                "\"duration_s\": %.9g, \"load\": %.9g, \"ecmp\": \"%s\", "
                "\"events\": %llu, \"events_source\": \"Simulator::GetEventCount\", \"run_wall_s\": %.6f, "
                "\"offered_frames\": %llu, \"delivered_frames\": %llu, \"delivered_bytes\": %llu, "
                "\"first_delivery_ps\": %lld, \"last_delivery_ps\": %lld, \"throughput_gbps\": %.6f, "
                "\"latency_mean_us\": %.6f, \"frame_hops\": %llu, "
                "\"drops_total\": %llu, \"drops_tc\": %llu, \"drops_device_queue\": %llu, \"drops_ip\": %llu, "
                "\"drops_unclassified\": %llu, \"drops_by_stage\": {%s}, "
                "\"bin_s\": %.9g, \"queue_bytes\": %llu, \"link_tx_bytes\": {%s}}\n",
                k,
                fabric.nHosts,
                static_cast<unsigned long long>(seed),
                duration.GetSeconds(),
                load,
                ecmp.c_str(),
                static_cast<unsigned long long>(events),
                wall,
                static_cast<unsigned long long>(offered),
                static_cast<unsigned long long>(g_deliveredFrames),
                static_cast<unsigned long long>(g_deliveredFrames * kFrameBytes),
                static_cast<long long>(g_firstDeliveryPs),
                static_cast<long long>(g_lastDeliveryPs),
                throughput,
                latencyUs,
                static_cast<unsigned long long>(frameHops),
                static_cast<unsigned long long>(dropsTotal),
                static_cast<unsigned long long>(g_tcDrops),
                static_cast<unsigned long long>(g_devQueueDrops),
                static_cast<unsigned long long>(g_ipDrops),
                static_cast<unsigned long long>(g_unclassifiedDrops),
                stages.str().c_str(),
                bin.GetSeconds(),
                static_cast<unsigned long long>(queueBytes),
                links.str().c_str());
    return 0;
}
