//! Random streams: every random consumer owns its own generator, seeded from
//! (run seed, component key). The key is a stable hash of the component's
//! name, so adding a component never shifts another component's stream.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

pub type Stream = Xoshiro256PlusPlus;

/// SplitMix64 finaliser: a bijective mixer with good avalanche.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a component name: stable across platforms and releases.
pub fn component_key(kind: &str, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes().chain([0u8]).chain(name.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

pub fn stream(run_seed: u64, component: u64) -> Stream {
    Stream::seed_from_u64(mix64(mix64(run_seed) ^ component))
}

/// The 53 random bits behind a uniform draw.
#[inline]
fn draw53(rng: &mut Stream) -> u64 {
    use rand::RngExt;
    rng.random::<u64>() >> 11
}

/// The uniform in (0, 1] that `bits` (53 random bits) stands for: never
/// zero, so its logarithm is finite.
#[inline]
fn open0(bits: u64) -> f64 {
    (bits as f64 + 1.0) * (1.0 / (1u64 << 53) as f64)
}

/// A uniform draw in (0, 1].
pub fn unit_open0(rng: &mut Stream) -> f64 {
    open0(draw53(rng))
}

/// Gap lengths with a precomputed boundary: beyond this many, a draw takes
/// the logarithm.
const TABLE: usize = 16;

/// Number of failed Bernoulli(p) trials before the first success.
///
/// Defined as the inverse transform `floor(ln u / ln(1 - p))` with
/// `libm::log` (a pure-Rust libm) rather than the platform's, so the draws
/// are bit-identical on every machine. The logarithm is the cost of a draw,
/// so the boundaries in `bits` between gap k and gap k + 1 are found once
/// for k < 16, by bisection on that same formula; a draw then compares
/// its bits with them and takes the logarithm only past the table. The
/// result is the formula's, draw for draw. Clones share the table (sources
/// with equal loads share one; see `sim`).
#[derive(Clone, Debug)]
pub struct Geometric {
    p: f64,
    ln_fail: f64,
    /// `at_least[k]`: the smallest bits whose gap is at most k (gaps only
    /// shrink as the bits grow). `u64::MAX` (never reached) when p is not in
    /// (0, 1).
    at_least: std::sync::Arc<[u64; TABLE]>,
}

impl Geometric {
    pub fn new(p: f64) -> Geometric {
        let mut g = Geometric {
            p,
            ln_fail: libm::log1p(-p),
            at_least: std::sync::Arc::new([u64::MAX; TABLE]),
        };
        if p > 0.0 && p < 1.0 {
            let table = std::array::from_fn(|k| g.boundary(k as u64));
            g.at_least = std::sync::Arc::new(table);
        }
        g
    }

    /// The formula, for one draw of 53 bits.
    #[inline]
    fn gap_of(&self, bits: u64) -> u64 {
        let k = libm::floor(libm::log(open0(bits)) / self.ln_fail);
        if k >= u64::MAX as f64 {
            u64::MAX
        } else {
            k as u64
        }
    }

    /// The smallest bits whose gap is at most k. The top draw (u = 1) has
    /// gap 0, so it exists. Starts from the real-number answer,
    /// u > (1 - p)^(k + 1), and widens a bracket around it before bisecting.
    fn boundary(&self, k: u64) -> u64 {
        const TOP: u64 = (1 << 53) - 1;
        let guess = (libm::exp((k + 1) as f64 * self.ln_fail) * (1u64 << 53) as f64) as u64;
        let guess = guess.min(TOP);
        let (mut lo, mut hi); // gap_of(lo) > k (or lo is below 0), gap_of(hi) <= k
        let mut step = 64u64;
        if self.gap_of(guess) <= k {
            hi = guess;
            loop {
                let below = hi.saturating_sub(step);
                if below == hi {
                    return 0;
                }
                if self.gap_of(below) > k {
                    lo = below;
                    break;
                }
                hi = below;
                step = step.saturating_mul(2);
            }
        } else {
            lo = guess;
            loop {
                let above = lo.saturating_add(step).min(TOP);
                if self.gap_of(above) <= k {
                    hi = above;
                    break;
                }
                lo = above;
                step = step.saturating_mul(2);
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.gap_of(mid) <= k {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    #[inline]
    pub fn sample(&self, rng: &mut Stream) -> u64 {
        if self.p >= 1.0 {
            return 0;
        }
        let bits = draw53(rng);
        for (k, &b) in self.at_least.iter().enumerate() {
            if bits >= b {
                return k as u64;
            }
        }
        self.gap_of(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_seed_and_component_and_repeat_exactly() {
        use rand::RngExt;
        let a: u64 = stream(1, component_key("source", "C1")).random();
        let b: u64 = stream(1, component_key("source", "C1")).random();
        let c: u64 = stream(2, component_key("source", "C1")).random();
        let d: u64 = stream(1, component_key("source", "C2")).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn geometric_mean_matches_its_parameter() {
        let mut rng = stream(7, 0);
        let p = 0.48;
        let n = 200_000;
        let g = Geometric::new(p);
        let total: u64 = (0..n).map(|_| g.sample(&mut rng)).sum();
        let mean = total as f64 / n as f64;
        let expected = (1.0 - p) / p; // 1.0833
        assert!((mean - expected).abs() < 0.02, "mean {mean} vs {expected}");
    }

    /// The table gives the formula's gap for every draw: random draws, and
    /// every draw within 2,000 of each boundary (where a difference would
    /// show), for loads from tiny to almost one.
    #[test]
    fn table_draws_equal_the_logarithm_formula() {
        use rand::RngExt;
        let mut rng = stream(11, 0);
        for p in [
            1e-6, 0.01, 0.1, 0.2, 0.4, 0.48, 0.5, 0.75, 0.9, 0.999, 0.999_999,
        ] {
            let g = Geometric::new(p);
            for _ in 0..200_000 {
                let bits: u64 = rng.random::<u64>() >> 11;
                let table = g.at_least.iter().position(|&b| bits >= b);
                let want = g.gap_of(bits);
                assert_eq!(table.map_or(want, |k| k as u64), want, "p {p} bits {bits}");
            }
            for (k, &b) in g.at_least.iter().enumerate() {
                assert!(g.gap_of(b) <= k as u64, "p {p}: boundary {k}");
                let lo = b.saturating_sub(2_000);
                let hi = (b + 2_000).min((1 << 53) - 1);
                for bits in lo..=hi {
                    assert_eq!(
                        bits >= b,
                        g.gap_of(bits) <= k as u64,
                        "p {p} k {k} bits {bits}"
                    );
                }
            }
        }
    }

    #[test]
    fn loads_outside_zero_one_keep_the_formula() {
        let mut rng = stream(3, 0);
        assert_eq!(Geometric::new(1.0).sample(&mut rng), 0);
        let g = Geometric::new(0.0);
        assert!(g.at_least.iter().all(|&b| b == u64::MAX));
    }
}
