//! Flow workloads: finite flows that arrive as Poisson processes with sizes
//! from an empirical distribution, as incasts, or from a given list. A
//! run draws its flows when it starts, each host's process and each
//! incast from its own random stream of the run's seed, so the flows of a
//! seed do not depend on anything else in the scenario.

use super::cdf::SizeCdf;
use crate::engine::rng::{component_key, stream, unit_open0, Stream};
use crate::transport::Transport;
use crate::units::{Rate, Time};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSpec {
    pub name: String,
    pub transport: Transport,
    /// Largest frame on the wire, bytes.
    pub frame: u32,
    pub priority: u8,
    pub arrivals: Arrivals,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Arrivals {
    /// Each host of `hosts` starts flows as a Poisson process in
    /// [start, stop) at `load` × its link rate (bytes of the mean size).
    Poisson {
        hosts: Vec<usize>,
        sizes: SizeCdf,
        load: f64,
        to: Destinations,
        start: Time,
        stop: Time,
    },
    /// `fan_in` senders drawn from `hosts` each send `bytes` to one
    /// receiver at every event.
    Incast {
        hosts: Vec<usize>,
        to: Option<usize>,
        fan_in: usize,
        bytes: u64,
        events: IncastEvents,
    },
    List {
        flows: Vec<FlowArrival>,
    },
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Destinations {
    /// Uniform over the sending hosts, without the sender.
    Hosts,
    /// Uniform over these hosts, without the sender.
    Among(Vec<usize>),
    /// One fixed destination per sender, a permutation without fixed points.
    Permutation,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncastEvents {
    At(Vec<Time>),
    /// Poisson events in [start, stop) whose bytes average `load` × the
    /// summed link rates of the workload's hosts.
    Poisson {
        load: f64,
        start: Time,
        stop: Time,
    },
}

/// One flow: `size` bytes from host node `src` to host node `dst`,
/// starting at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FlowArrival {
    pub start: Time,
    pub src: usize,
    pub dst: usize,
    pub size: u64,
    pub priority: u8,
}

/// Exponential gap of mean `mean_ps` picoseconds (at least 1 ps), from
/// `libm::log` so that draws are the same on every machine.
fn exp_gap(rng: &mut Stream, mean_ps: f64) -> u64 {
    ((-libm::log(unit_open0(rng)) * mean_ps).round() as u64).max(1)
}

/// Uniform index below `n`.
fn below(rng: &mut Stream, n: usize) -> usize {
    use rand::RngExt;
    rng.random_range(0..n)
}

impl WorkloadSpec {
    /// The flows of this workload for a run with `seed`, in order of start
    /// time (ties in the order they were drawn). `line` gives each host
    /// node's link rate.
    pub fn flows(&self, seed: u64, line: &dyn Fn(usize) -> Rate) -> Vec<FlowArrival> {
        let key = |what: &str| component_key("workload", &format!("{}/{what}", self.name));
        let priority = self.priority;
        let mut out = Vec::new();
        match &self.arrivals {
            Arrivals::Poisson {
                hosts,
                sizes,
                load,
                to,
                start,
                stop,
            } => {
                let fixed = match to {
                    Destinations::Permutation => {
                        derangement(hosts, &mut stream(seed, key("permutation")))
                    }
                    _ => Vec::new(),
                };
                let mean_size = sizes.mean();
                for (i, &h) in hosts.iter().enumerate() {
                    let mut rng = stream(seed, key(&format!("host{h}")));
                    let bytes_per_s = load * line(h).0 as f64 / 8.0;
                    let mean_gap_ps = mean_size / bytes_per_s * Time::PS_PER_S as f64;
                    let mut t = start.0;
                    loop {
                        t = t.saturating_add(exp_gap(&mut rng, mean_gap_ps));
                        if t >= stop.0 {
                            break;
                        }
                        let dst = match to {
                            Destinations::Permutation => fixed[i],
                            Destinations::Hosts => other(hosts, h, &mut rng),
                            Destinations::Among(list) => other(list, h, &mut rng),
                        };
                        let size = sizes.quantile(1.0 - unit_open0(&mut rng));
                        out.push(FlowArrival {
                            start: Time(t),
                            src: h,
                            dst,
                            size,
                            priority,
                        });
                    }
                }
            }
            Arrivals::Incast {
                hosts,
                to,
                fan_in,
                bytes,
                events,
            } => {
                let mut rng = stream(seed, key("incast"));
                let times: Vec<Time> = match events {
                    IncastEvents::At(ts) => ts.clone(),
                    IncastEvents::Poisson { load, start, stop } => {
                        let capacity: f64 = hosts.iter().map(|&h| line(h).0 as f64 / 8.0).sum();
                        let event_bytes = (*fan_in as u64 * bytes) as f64;
                        let mean_gap_ps = event_bytes / (load * capacity) * Time::PS_PER_S as f64;
                        let mut ts = Vec::new();
                        let mut t = start.0;
                        loop {
                            t = t.saturating_add(exp_gap(&mut rng, mean_gap_ps));
                            if t >= stop.0 {
                                break ts;
                            }
                            ts.push(Time(t));
                        }
                    }
                };
                for t in times {
                    let receiver = to.unwrap_or_else(|| hosts[below(&mut rng, hosts.len())]);
                    let mut pool: Vec<usize> =
                        hosts.iter().copied().filter(|&h| h != receiver).collect();
                    // A partial Fisher-Yates shuffle: the first fan_in are the senders.
                    for k in 0..*fan_in {
                        let j = k + below(&mut rng, pool.len() - k);
                        pool.swap(k, j);
                        out.push(FlowArrival {
                            start: t,
                            src: pool[k],
                            dst: receiver,
                            size: *bytes,
                            priority,
                        });
                    }
                }
            }
            Arrivals::List { flows } => out.extend_from_slice(flows),
        }
        // Stable: equal start times keep the order they were drawn in.
        out.sort_by_key(|f| f.start);
        out
    }
}

/// A host of `set` other than `me`, uniformly (the set has another host).
fn other(set: &[usize], me: usize, rng: &mut Stream) -> usize {
    let n = set.len() - usize::from(set.contains(&me));
    let k = below(rng, n);
    // The k-th host of the set, skipping `me`.
    set.iter()
        .copied()
        .filter(|&h| h != me)
        .nth(k)
        .expect("k < n")
}

/// A uniformly drawn permutation of `hosts` without fixed points (by
/// rejection: about e draws).
fn derangement(hosts: &[usize], rng: &mut Stream) -> Vec<usize> {
    loop {
        let mut p = hosts.to_vec();
        for i in (1..p.len()).rev() {
            p.swap(i, below(rng, i + 1));
        }
        if p.iter().zip(hosts).all(|(a, b)| a != b) {
            return p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn web(load: f64, stop: Time) -> WorkloadSpec {
        WorkloadSpec {
            name: "web".into(),
            transport: Transport::Roce,
            frame: 1058,
            priority: 0,
            arrivals: Arrivals::Poisson {
                hosts: (0..8).collect(),
                sizes: SizeCdf::parse(super::super::cdf::shipped("websearch").unwrap()).unwrap(),
                load,
                to: Destinations::Hosts,
                start: Time::ZERO,
                stop,
            },
        }
    }

    fn line(_: usize) -> Rate {
        Rate::gbps(100)
    }

    /// Kolmogorov-Smirnov distance between the sizes drawn and the CDF.
    #[test]
    fn sizes_follow_the_distribution() {
        let w = web(0.5, Time::from_ms(10_000));
        let Arrivals::Poisson { sizes, .. } = &w.arrivals else {
            unreachable!()
        };
        let mut drawn: Vec<u64> = w.flows(3, &line).iter().map(|f| f.size).collect();
        drawn.truncate(100_000);
        assert_eq!(drawn.len(), 100_000);
        drawn.sort_unstable();
        let n = drawn.len() as f64;
        // The CDF at a size: the inverse of the interpolation.
        let cdf = |s: f64| {
            let p = &sizes.points;
            let k = p.partition_point(|&(x, _)| x <= s);
            if k == p.len() {
                return 1.0;
            }
            let (s0, p0) = p[k - 1];
            let (s1, p1) = p[k];
            p0 + (p1 - p0) * (s - s0) / (s1 - s0)
        };
        let mut d: f64 = 0.0;
        for (i, &s) in drawn.iter().enumerate() {
            let f = cdf(s as f64);
            d = d
                .max((f - i as f64 / n).abs())
                .max((f - (i + 1) as f64 / n).abs());
        }
        // The KS critical value at the 1% level: 1.628 / sqrt(n).
        assert!(d < 1.628 / n.sqrt(), "KS distance {d}");
    }

    #[test]
    fn offered_load_is_the_target_and_arrivals_are_poisson() {
        let stop = Time::from_ms(20_000);
        let w = web(0.3, stop);
        let flows = w.flows(9, &line);
        // Over the 8 hosts' 350,000 flows the load's relative spread is
        // about 0.4% (web search sizes: coefficient of variation 2.3).
        let bytes: u64 = flows.iter().map(|f| f.size).sum();
        let load = bytes as f64 * 8.0 / (8.0 * 100e9) / stop.as_secs_f64();
        assert!((load - 0.3).abs() < 0.3 * 0.02, "load {load}");
        for h in 0..8 {
            let mine: Vec<&FlowArrival> = flows.iter().filter(|f| f.src == h).collect();
            // Counts in 1 ms windows: a Poisson count's variance is its mean.
            let mut counts = vec![0u32; 20_000];
            for f in &mine {
                counts[(f.start.0 / Time::from_ms(1).0) as usize] += 1;
            }
            let m = counts.iter().map(|&c| c as f64).sum::<f64>() / counts.len() as f64;
            let v = counts.iter().map(|&c| (c as f64 - m).powi(2)).sum::<f64>()
                / (counts.len() - 1) as f64;
            // Dispersion index: (n - 1) v / m is chi-squared with n - 1
            // degrees of freedom; its 0.1% and 99.9% points for n = 20,000.
            let chi = (counts.len() - 1) as f64 * v / m;
            assert!((19_032.0..20_983.0).contains(&chi), "host {h}: {chi}");
            assert!(mine.iter().all(|f| f.dst != h && f.dst < 8));
        }
    }

    #[test]
    fn a_permutation_gives_each_host_one_other_destination() {
        let mut w = web(0.2, Time::from_ms(50));
        if let Arrivals::Poisson { to, .. } = &mut w.arrivals {
            *to = Destinations::Permutation;
        }
        let flows = w.flows(5, &line);
        let mut dst = [None; 8];
        for f in &flows {
            assert_ne!(f.src, f.dst);
            assert_eq!(*dst[f.src].get_or_insert(f.dst), f.dst);
        }
        let mut seen: Vec<usize> = dst.iter().map(|d| d.unwrap()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn incasts_start_when_configured_with_distinct_senders() {
        let w = WorkloadSpec {
            name: "incast".into(),
            transport: Transport::Roce,
            frame: 1058,
            priority: 3,
            arrivals: Arrivals::Incast {
                hosts: (0..16).collect(),
                to: Some(4),
                fan_in: 10,
                bytes: 500_000,
                events: IncastEvents::At(vec![Time::from_us(250), Time::from_us(100)]),
            },
        };
        let flows = w.flows(1, &line);
        assert_eq!(flows.len(), 20);
        for (k, t) in [(0, Time::from_us(100)), (10, Time::from_us(250))] {
            let event = &flows[k..k + 10];
            assert!(event
                .iter()
                .all(|f| f.start == t && f.dst == 4 && f.size == 500_000));
            let mut senders: Vec<usize> = event.iter().map(|f| f.src).collect();
            senders.sort_unstable();
            senders.dedup();
            assert_eq!(senders.len(), 10);
            assert!(!senders.contains(&4));
        }
        assert!(flows.iter().all(|f| f.priority == 3));
    }

    #[test]
    fn the_same_seed_gives_the_same_flows_and_another_seed_others() {
        let w = web(0.3, Time::from_ms(5));
        assert_eq!(w.flows(1, &line), w.flows(1, &line));
        assert_ne!(w.flows(1, &line), w.flows(2, &line));
    }
}
