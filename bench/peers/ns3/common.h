// What the ns-3 counterparts of cnsim's scenarios share (drop_tail.cc,
// fat_tree.cc): frame sizes, cnsim's Bernoulli source, trace hook-up and
// command-line parsing. See README.md beside this file.

#ifndef CNSIM_PEERS_NS3_COMMON_H
#define CNSIM_PEERS_NS3_COMMON_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace cnsim_peer
{

using namespace ns3;

// Frames are 1500 B on the wire: 1470 B of UDP payload + 8 (UDP) + 20
// (IPv4) + 2 (PPP), so a frame takes 1.2 us at 10 Gb/s.
constexpr uint32_t kFrameBytes = 1500;
constexpr uint32_t kPayloadBytes = kFrameBytes - 2 - 20 - 8;
constexpr uint16_t kPort = 9;

// ---------------------------------------------------------------------------
// Bernoulli source: cnsim's slot rule (crates/cnsim-core/src/traffic/
// source.rs). Slots of one frame's wire time counted from `start`; in each
// slot a frame with probability `load`, at an instant drawn uniformly (in
// picoseconds) within the slot; the gap is drawn as a geometric number of
// empty slots (one event per frame, as in cnsim); no frame at or after
// `stop`. Each frame goes to one of `peers`, drawn uniformly per frame when
// there are several (as cnsim draws one of a source's flows per frame; with
// one peer nothing is drawn).
class BernoulliSource : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("cnsim::BernoulliSource")
                                .SetParent<Application>()
                                .AddConstructor<BernoulliSource>()
                                .AddTraceSource("Tx",
                                                "A frame is handed to the socket.",
                                                MakeTraceSourceAccessor(&BernoulliSource::m_tx),
                                                "ns3::Packet::TracedCallback");
        return tid;
    }

    void Configure(std::vector<Address> peers,
                   double load,
                   Time slot,
                   Time start,
                   Time stop,
                   int64_t stream)
    {
        m_peers = std::move(peers);
        m_load = load;
        m_slotPs = slot.GetPicoSeconds();
        m_startPs = start.GetPicoSeconds();
        m_stopPs = stop.GetPicoSeconds();
        m_rng = CreateObject<UniformRandomVariable>();
        m_rng->SetStream(stream);
    }

    uint64_t Sent() const
    {
        return m_sent;
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        if (m_peers.size() == 1)
        {
            m_socket->Connect(m_peers[0]);
        }
        ScheduleNext();
    }

    void StopApplication() override
    {
        Simulator::Cancel(m_event);
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    // Number of failed Bernoulli(p) trials before the first success, by
    // inverse transform (as cnsim's engine/rng.rs).
    uint64_t Geometric()
    {
        if (m_load >= 1.0)
        {
            return 0;
        }
        double u = 1.0 - m_rng->GetValue(0.0, 1.0); // (0, 1]
        if (u <= 0.0)
        {
            u = 1e-300;
        }
        return static_cast<uint64_t>(std::floor(std::log(u) / std::log1p(-m_load)));
    }

    void ScheduleNext()
    {
        uint64_t slot = m_nextSlot + Geometric();
        int64_t offset = static_cast<int64_t>(m_rng->GetInteger(0, m_slotPs - 1));
        int64_t t = m_startPs + static_cast<int64_t>(slot) * m_slotPs + offset;
        m_nextSlot = slot + 1;
        if (t >= m_stopPs)
        {
            return;
        }
        m_event = Simulator::Schedule(PicoSeconds(t) - Simulator::Now(), &BernoulliSource::Fire, this);
    }

    void Fire()
    {
        Ptr<Packet> p = Create<Packet>(kPayloadBytes);
        m_tx(p);
        if (m_peers.size() == 1)
        {
            m_socket->Send(p);
        }
        else
        {
            auto i = m_rng->GetInteger(0, static_cast<uint32_t>(m_peers.size() - 1));
            m_socket->SendTo(p, 0, m_peers[i]);
        }
        ++m_sent;
        ScheduleNext();
    }

    std::vector<Address> m_peers;
    double m_load{0};
    int64_t m_slotPs{0};
    int64_t m_startPs{0};
    int64_t m_stopPs{0};
    uint64_t m_nextSlot{0};
    uint64_t m_sent{0};
    Ptr<UniformRandomVariable> m_rng;
    Ptr<Socket> m_socket;
    EventId m_event;
    TracedCallback<Ptr<const Packet>> m_tx;
};

// Connect a trace source, or stop: a misspelt name would silently count nothing.
template <typename T, typename C>
void
Connect(Ptr<T> object, const std::string& name, const C& callback)
{
    if (!object || !object->TraceConnectWithoutContext(name, callback))
    {
        std::cerr << "error: cannot connect trace source " << name << "\n";
        std::exit(1);
    }
}

// ns-3 time strings: "100ms", "1.5us", "0.1s" (ns-3 aborts on a bad unit).
// False unless the text starts like a number and the time is >= 0.
inline bool
ParseTime(const std::string& s, Time& out)
{
    if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    {
        return false;
    }
    out = Time(s);
    return out.IsPositive(); // ns-3: IsPositive() is >= 0
}

// `--key value` or `--key=value` options. Each handler parses its value and
// throws std::exception on a bad one. `-h`/`--help` prints the usage to
// stderr and exits with 0; a mistake exits with 2.
class Options
{
  public:
    Options(std::string prog, std::string usage)
        : m_prog(std::move(prog)),
          m_usage(std::move(usage))
    {
    }

    void Add(const std::string& key, std::function<void(const std::string&)> handler)
    {
        m_handlers[key] = std::move(handler);
    }

    [[noreturn]] void Fail(const std::string& error) const
    {
        if (!error.empty())
        {
            std::cerr << "error: " << error << "\n";
        }
        std::cerr << "usage: " << m_prog << " " << m_usage;
        std::exit(error.empty() ? 0 : 2);
    }

    void Parse(int argc, char* argv[]) const
    {
        for (int i = 1; i < argc; ++i)
        {
            std::string a = argv[i];
            if (a == "-h" || a == "--help")
            {
                Fail("");
            }
            std::string key = a;
            std::string value;
            auto eq = a.find('=');
            if (eq != std::string::npos)
            {
                key = a.substr(0, eq);
                value = a.substr(eq + 1);
            }
            else
            {
                if (i + 1 >= argc)
                {
                    Fail("missing value for " + a);
                }
                value = argv[++i];
            }
            auto h = m_handlers.find(key);
            if (h == m_handlers.end())
            {
                Fail("unknown option " + key);
            }
            try
            {
                h->second(value);
            }
            catch (const std::exception&)
            {
                Fail("bad value for " + key + ": " + value);
            }
        }
    }

  private:
    std::string m_prog;
    std::string m_usage;
    std::map<std::string, std::function<void(const std::string&)>> m_handlers;
};

/// What a timed run reports: its wall time inside Simulator::Run(), the
/// events executed, and the frames the sources sent.
struct RunStats
{
    double wall;
    uint64_t events;
    uint64_t offered;
};

/// Run the simulation until `stop`, timing Simulator::Run() alone.
inline RunStats
RunTimed(Time stop, const std::vector<Ptr<BernoulliSource>>& sources)
{
    Simulator::Stop(stop);
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    RunStats r{std::chrono::duration<double>(t1 - t0).count(), Simulator::GetEventCount(), 0};
    for (const auto& a : sources)
    {
        r.offered += a->Sent();
    }
    return r;
}

} // namespace cnsim_peer

#endif // CNSIM_PEERS_NS3_COMMON_H
