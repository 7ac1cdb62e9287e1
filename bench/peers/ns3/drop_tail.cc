// ns-3 counterpart of cnsim's scenarios/baseline/no_cm.toml (study A, no flow
// control, drop-tail output queues), for side-by-side runs: see README.md and
// compare.py beside this file.
//
//   drop_tail [--seed N] [--duration T] [--queue-bytes B] [--switch-latency T] [--bin T]
//
// Prints one JSON line (fields: see the end of main()).
//
// Topology (as the scenario): C1..C4 each on an edge switch E1..E4, CR1 also
// on E4; E1..E4 to CORE; CORE to the sinks S1 and S2. Every link 10 Gb/s,
// 0.5 us. Switches are ns-3 IPv4 routers (static global routing), links are
// PointToPoint links, frames are 1500 B on the wire: 1470 B of UDP payload +
// 8 (UDP) + 20 (IPv4) + 2 (PPP) = 1500 B, so a frame takes 1.2 us.
//
// What is equivalent to cnsim:
// * Wire time (1500 B at 10 Gb/s, no inter-frame gap in either), propagation
//   (0.5 us after the last bit), store-and-forward.
// * Drop-tail output queues of 153,600 B (150 KiB) on every port, no queue
//   disc (the default FqCoDel is uninstalled), so a frame is refused when the
//   port's queue holds more than 153,600 - 1500 B. In ns-3 the refusal happens
//   in the traffic-control layer: after each enqueue the device queue is
//   "stopped" when one more MTU would overflow it, and the TC layer drops what
//   comes while it is stopped (TrafficControlLayer trace source "TcDrop"). With 1500 B
//   frames and a 1500 B MTU that is exactly the queue's own byte test. (The
//   queue is woken by a zero-delay event scheduled at each dequeue, so a frame
//   arriving at the very picosecond a transmission starts on a full port is
//   still refused; with continuous random arrival times that does not occur
//   in practice. That wake event is also why ns-3 executes three events per
//   frame-hop — transmit-complete, receive, wake — where cnsim executes two.)
//   Difference in what is counted: ns-3's device queue does not hold the frame
//   being serialised (it is dequeued when its transmission starts), whereas in
//   cnsim the frame on the wire occupies the buffer until its last bit has
//   left. So a cnsim port holds at most 102 frames (153,000 B) including the
//   one on the wire, an ns-3 port 102 queued + 1 on the wire = 103. One more
//   frame of buffer delays the first drop at CORE->S1 by one frame time and
//   changes a run's drops by about one frame; use --queue-bytes 152100 to give
//   ns-3 exactly cnsim's 102 frames.
// * Bernoulli sources with cnsim's slot rule (common.h, after crates/
//   cnsim-core/src/traffic/source.rs): slots of one frame's wire time at the host's 10 Gb/s (1.2 us)
//   counted from the source's start; in each slot a frame with probability
//   `load`, at an instant drawn uniformly (in picoseconds) within the slot; the
//   gap is drawn as a geometric number of empty slots (one event per frame, as
//   in cnsim); no frame at or after the stop time. C1..C4 -> S1 at 0.48,
//   CR1 -> S2 at 0.40, start 5 ms, C1 and C2 stop at 85 ms, end at 100 ms.
//   The random streams are ns-3's (MRG32k3a, RngRun = seed), not cnsim's, so
//   runs agree statistically, not frame by frame.
// * Time resolution is set to picoseconds, as cnsim's clock.
//
// What is approximated: the switches' 1 us latency. cnsim admits a frame to
// its output queue one switch latency after its last bit arrived; an ns-3
// router forwards in zero time. Here the latency is added to the propagation
// delay of the links' switch-bound direction: C*-E* and E*-CORE links get
// 0.5 + 1 = 1.5 us, CORE-S1/S2 keep 0.5 us. A PointToPointChannel has one
// delay for both directions, but in this scenario every link carries frames
// one way only (UDP, no ARP on point-to-point, static routing, sinks listen
// so no ICMP), so the timing of every frame is exactly cnsim's; the program
// checks that by counting frames sent the other way (`reverse_frames`, must
// be 0). In a scenario with two-way traffic this would not hold.
//
// Not modelled (no effect here): the host egress buffer's back-pressure on
// its sources (cnsim stops a source whose 150 KiB egress buffer is full; at
// 48% load a host queue never holds more than two frames), host response time
// and PAUSE (not used in no_cm).

#include "common.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace ns3;
using namespace cnsim_peer; // BernoulliSource, Connect, ParseTime, Options, frame sizes

namespace
{

// ---------------------------------------------------------------------------
// Counters filled by trace callbacks.
struct SinkStats
{
    uint64_t frames{0};
    int64_t firstPs{-1};
    int64_t lastPs{-1};
};

SinkStats g_sink[2];
uint64_t g_devQueueDrops = 0; // device queues' own Drop trace (expected 0: the TC layer drops first)
uint64_t g_ipDrops = 0;       // Ipv4L3Protocol Drop (no route, TTL...; expected 0)
uint64_t g_tcDropsTotal = 0;  // TrafficControlLayer TcDrop, all nodes
uint64_t g_coreDropsToS1 = 0; // ... at CORE, of frames to S1: CORE's port toward S1
uint64_t g_coreDropsOther = 0;
uint64_t g_reverseFrames = 0; // frames sent against the traffic's direction (must be 0)
Ipv4Address g_s1Addr;

void
SinkRx(int which, Ptr<const Packet>, const Address&)
{
    SinkStats& s = g_sink[which];
    int64_t now = Simulator::Now().GetPicoSeconds();
    if (s.frames == 0)
    {
        s.firstPs = now;
    }
    s.lastPs = now;
    ++s.frames;
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

void
TcDrop(bool atCore, Ptr<const Packet> p)
{
    ++g_tcDropsTotal;
    if (!atCore)
    {
        return;
    }
    // The dropped item carries its IPv4 header: its destination tells the
    // output port (all of CORE's traffic to S1 leaves on CORE->S1).
    Ipv4Header h;
    if (p->PeekHeader(h) && h.GetDestination() == g_s1Addr)
    {
        ++g_coreDropsToS1;
    }
    else
    {
        ++g_coreDropsOther;
    }
}

void
ReverseTx(Ptr<const Packet>)
{
    ++g_reverseFrames;
}

} // namespace

int
main(int argc, char* argv[])
{
    // Picosecond clock, as cnsim; must precede any Time object.
    Time::SetResolution(Time::PS);

    uint64_t seed = 1;
    std::string durationStr = "100ms";
    uint64_t queueBytes = 153600;
    std::string switchLatencyStr = "1us";
    std::string binStr = "100us";

    Options opts(argv[0],
                 "[--seed N] [--duration T] [--queue-bytes B] [--switch-latency T] [--bin T]\n"
                 "  T is a time with unit (100ms, 1us); defaults: seed 1, duration 100ms,\n"
                 "  queue-bytes 153600, switch-latency 1us, bin 100us (throughput window)\n");
    opts.Add("--seed", [&](const std::string& v) { seed = std::stoull(v); });
    opts.Add("--duration", [&](const std::string& v) { durationStr = v; });
    opts.Add("--queue-bytes", [&](const std::string& v) { queueBytes = std::stoull(v); });
    opts.Add("--switch-latency", [&](const std::string& v) { switchLatencyStr = v; });
    opts.Add("--bin", [&](const std::string& v) { binStr = v; });
    opts.Parse(argc, argv);
    Time duration;
    Time switchLatency;
    Time bin;
    if (!ParseTime(durationStr, duration) || duration.IsZero())
    {
        opts.Fail("bad --duration " + durationStr);
    }
    if (!ParseTime(switchLatencyStr, switchLatency))
    {
        opts.Fail("bad --switch-latency " + switchLatencyStr);
    }
    if (!ParseTime(binStr, bin) || bin.IsZero())
    {
        opts.Fail("bad --bin " + binStr);
    }
    if (seed == 0)
    {
        opts.Fail("--seed must be >= 1 (ns-3 run numbers)");
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    const std::string rate = "10Gbps";
    const Time delay = NanoSeconds(500);
    const Time slot = PicoSeconds(static_cast<int64_t>(kFrameBytes) * 8 * 100); // 1.2 us at 10 Gb/s

    // Nodes, by name.
    std::vector<std::string> hostNames = {"C1", "C2", "C3", "C4", "CR1", "S1", "S2"};
    std::vector<std::string> switchNames = {"E1", "E2", "E3", "E4", "CORE"};
    std::map<std::string, Ptr<Node>> node;
    NodeContainer all;
    for (const auto& n : hostNames)
    {
        node[n] = CreateObject<Node>();
        all.Add(node[n]);
    }
    for (const auto& n : switchNames)
    {
        node[n] = CreateObject<Node>();
        all.Add(node[n]);
    }
    auto isSwitch = [&](const std::string& n) {
        return std::find(switchNames.begin(), switchNames.end(), n) != switchNames.end();
    };

    InternetStackHelper internet;
    internet.Install(all);

    // Links, as in the scenario; each written in its traffic's direction
    // (from, to). The switch latency of `to` goes into the link's delay.
    std::vector<std::pair<std::string, std::string>> links = {
        {"C1", "E1"},
        {"C2", "E2"},
        {"C3", "E3"},
        {"C4", "E4"},
        {"CR1", "E4"},
        {"E1", "CORE"},
        {"E2", "CORE"},
        {"E3", "CORE"},
        {"E4", "CORE"},
        {"CORE", "S1"},
        {"CORE", "S2"},
    };

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, queueBytes)));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    std::map<std::string, Ipv4Address> hostAddr;
    std::vector<NetDeviceContainer> devices;
    for (size_t i = 0; i < links.size(); ++i)
    {
        const auto& [from, to] = links[i];
        Time d = delay + (isSwitch(to) ? switchLatency : Time(0));
        p2p.SetChannelAttribute("Delay", TimeValue(d));
        NetDeviceContainer dev = p2p.Install(node[from], node[to]);
        devices.push_back(dev);
        std::string base = "10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.252");
        Ipv4InterfaceContainer ifs = addr.Assign(dev);
        // Pure drop-tail: no queue disc (Assign installed the default one).
        tch.Uninstall(dev);
        if (!isSwitch(from))
        {
            hostAddr[from] = ifs.GetAddress(0);
        }
        if (!isSwitch(to))
        {
            hostAddr[to] = ifs.GetAddress(1);
        }
        for (uint32_t k = 0; k < 2; ++k)
        {
            auto pd = DynamicCast<PointToPointNetDevice>(dev.Get(k));
            Connect(pd->GetQueue(), "Drop", MakeCallback(&DevQueueDrop));
        }
        // The `to` end never sends in this scenario: count it if it does.
        Connect(dev.Get(1), "PhyTxBegin", MakeCallback(&ReverseTx));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    g_s1Addr = hostAddr["S1"];

    for (const auto& [name, n] : node)
    {
        bool atCore = (name == "CORE");
        Connect(n->GetObject<TrafficControlLayer>(), "TcDrop", MakeBoundCallback(&TcDrop, atCore));
        Connect(n->GetObject<Ipv4L3Protocol>(), "Drop", MakeCallback(&IpDrop));
    }

    // Sinks.
    const char* sinks[2] = {"S1", "S2"};
    for (int s = 0; s < 2; ++s)
    {
        PacketSinkHelper sh("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), kPort));
        ApplicationContainer app = sh.Install(node[sinks[s]]);
        app.Start(Seconds(0));
        Connect(app.Get(0), "Rx", MakeBoundCallback(&SinkRx, s));
    }

    // Sources: (host, sink, load, stop).
    struct Src
    {
        const char* host;
        const char* to;
        double load;
        Time stop;
    };
    std::vector<Src> sources = {
        {"C1", "S1", 0.48, MilliSeconds(85)},
        {"C2", "S1", 0.48, MilliSeconds(85)},
        {"C3", "S1", 0.48, duration},
        {"C4", "S1", 0.48, duration},
        {"CR1", "S2", 0.40, duration},
    };
    const Time start = MilliSeconds(5);
    std::vector<Ptr<BernoulliSource>> apps;
    for (size_t i = 0; i < sources.size(); ++i)
    {
        const Src& s = sources[i];
        auto app = CreateObject<BernoulliSource>();
        Time stop = std::min(s.stop, duration);
        app->Configure({InetSocketAddress(hostAddr[s.to], kPort)}, s.load, slot, start, stop, static_cast<int64_t>(i));
        node[s.host]->AddApplication(app);
        app->SetStartTime(Seconds(0)); // the source's own slots begin at `start`
        apps.push_back(app);
    }

    const auto [wall, events, offered] = RunTimed(duration, apps);
    Simulator::Destroy();

    // Throughput window: cnsim's (python/cnsim/results.py `_active_rate`,
    // Result.flows.delivered_gbps) applied to all flows to a sink: delivered
    // bytes over the span from the bin of the first delivery to the bin of the
    // last, both included, bins of `--bin` (the scenario's `bin`, 100 us).
    const int64_t binPs = bin.GetPicoSeconds();
    const int64_t nBins = (duration.GetPicoSeconds() + binPs - 1) / binPs;
    auto throughput = [&](const SinkStats& s) {
        if (s.frames == 0)
        {
            return 0.0;
        }
        int64_t b0 = std::min(s.firstPs / binPs, nBins - 1);
        int64_t b1 = std::min(s.lastPs / binPs, nBins - 1);
        double span = static_cast<double>(b1 - b0 + 1) * static_cast<double>(binPs) * 1e-12;
        return static_cast<double>(s.frames) * kFrameBytes * 8.0 / span / 1e9;
    };

    const uint64_t dropsTotal = g_tcDropsTotal + g_devQueueDrops + g_ipDrops;
    std::printf("{\"engine\": \"ns-3\", \"ns3_version\": \"3.44\", \"seed\": %llu, \"duration_s\": %.9g, "
                "\"events\": %llu, \"events_source\": \"Simulator::GetEventCount\", "
                "\"run_wall_s\": %.6f, "
                "\"offered_frames\": %llu, "
                "\"drops_core_s1\": %llu, \"drops_total\": %llu, "
                "\"drops_tc\": %llu, \"drops_device_queue\": %llu, \"drops_ip\": %llu, "
                "\"delivered_bytes_s1\": %llu, \"delivered_bytes_s2\": %llu, "
                "\"first_delivery_ps_s1\": %lld, \"last_delivery_ps_s1\": %lld, "
                "\"first_delivery_ps_s2\": %lld, \"last_delivery_ps_s2\": %lld, "
                "\"throughput_gbps_s1\": %.6f, \"throughput_gbps_s2\": %.6f, "
                "\"bin_s\": %.9g, \"queue_bytes\": %llu, \"switch_latency_s\": %.9g, "
                "\"reverse_frames\": %llu}\n",
                static_cast<unsigned long long>(seed),
                duration.GetSeconds(),
                static_cast<unsigned long long>(events),
                wall,
                static_cast<unsigned long long>(offered),
                static_cast<unsigned long long>(g_coreDropsToS1),
                static_cast<unsigned long long>(dropsTotal),
                static_cast<unsigned long long>(g_tcDropsTotal),
                static_cast<unsigned long long>(g_devQueueDrops),
                static_cast<unsigned long long>(g_ipDrops),
                static_cast<unsigned long long>(g_sink[0].frames * kFrameBytes),
                static_cast<unsigned long long>(g_sink[1].frames * kFrameBytes),
                static_cast<long long>(g_sink[0].firstPs),
                static_cast<long long>(g_sink[0].lastPs),
                static_cast<long long>(g_sink[1].firstPs),
                static_cast<long long>(g_sink[1].lastPs),
                throughput(g_sink[0]),
                throughput(g_sink[1]),
                bin.GetSeconds(),
                static_cast<unsigned long long>(queueBytes),
                switchLatency.GetSeconds(),
                static_cast<unsigned long long>(g_reverseFrames));
    return 0;
}
