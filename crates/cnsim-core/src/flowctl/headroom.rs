//! The headroom a lossless (ingress port, priority) needs above its XOFF
//! threshold: what can still arrive after it decides to send XOFF, before
//! the upstream stops (IEEE 802.1Qbb; for 802.3x PAUSE, the one-class
//! case, see docs/model.md, PAUSE).
//!
//! After the decision, in order:
//!
//! 1. the XOFF frame waits behind a frame already leaving on the reverse
//!    direction (one MTU), and takes its own 64 B;
//! 2. it propagates upstream (`t_prop · C`);
//! 3. the upstream finishes the frame it is sending (one MTU) and takes its
//!    response time to act (`t_resp · C`);
//! 4. what was already on the wire toward us still arrives (`t_prop · C`).
//!
//! So headroom = 2·t_prop·C + 2·MTU + 64 B + t_resp·C.
//!
//! cnsim admits a frame one switch latency after its last bit, which
//! lengthens the loop as the response time does: docs/model.md counts it,
//! and a caller that wants it passes `response + latency` as the response.

use std::fmt;

use super::pfc::PFC_FRAME_BYTES;
use crate::units::{Bytes, Rate, Time};

/// Propagation delay per metre of cable: signals travel at about two
/// thirds of the speed of light in fibre and copper, 2·10⁸ m/s, so 5 ns
/// per metre (100 m is the 0.5 µs of the 802.1Qau studies' links).
pub const CABLE_DELAY_PER_METRE: Time = Time::from_ns(5);

/// The one-way delay of `metres` of cable, at 5 ns per metre.
pub const fn cable_delay(metres: u64) -> Time {
    Time(metres * CABLE_DELAY_PER_METRE.0)
}

/// The bytes `rate` puts on the wire in `t`, rounded up.
fn bytes_in(t: Time, rate: Rate) -> Bytes {
    let bits = t.0 as u128 * rate.0 as u128;
    Bytes(bits.div_ceil(8 * Time::PS_PER_S as u128) as u64)
}

/// The inputs of the headroom rule and its terms in bytes. Each term is
/// rounded up on its own, so the total is their sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomTerms {
    pub rate: Rate,
    /// One-way propagation delay of the link.
    pub cable_delay: Time,
    /// The upstream's time from receiving XOFF to stopping.
    pub response_time: Time,
    /// The largest frame, in bytes.
    pub mtu: u32,
    /// `cable_delay · rate`: one direction's bytes on the wire.
    pub propagation: Bytes,
    /// `response_time · rate`.
    pub response: Bytes,
    /// The frame that finds the threshold passed (`after_admission`).
    pub trigger: Bytes,
}

impl HeadroomTerms {
    pub fn new(rate: Rate, cable_delay: Time, response: Time, mtu: u32) -> HeadroomTerms {
        HeadroomTerms {
            rate,
            cable_delay,
            response_time: response,
            mtu,
            propagation: bytes_in(cable_delay, rate),
            response: bytes_in(response, rate),
            trigger: Bytes(0),
        }
    }

    /// The terms for a switch that decides XOFF after admitting a frame, as
    /// a shared-buffer MMU does: a frame that finds its queue over the
    /// threshold (a dynamic threshold can fall between two of its frames,
    /// and a static one is passed by a frame's last bytes) goes into
    /// headroom before XOFF is decided, so headroom holds it too: one more
    /// MTU.
    pub fn after_admission(self) -> HeadroomTerms {
        HeadroomTerms {
            trigger: Bytes(self.mtu as u64),
            ..self
        }
    }

    /// 2·propagation + 2·MTU + the XOFF frame + response (+ the trigger frame).
    pub fn total(&self) -> Bytes {
        Bytes(
            2 * self.propagation.0
                + 2 * self.mtu as u64
                + PFC_FRAME_BYTES
                + self.response.0
                + self.trigger.0,
        )
    }

    /// `given` bytes suffice, or what they fall short of.
    pub fn check(self, given: Bytes) -> Result<(), HeadroomShort> {
        let required = self.total();
        if given >= required {
            Ok(())
        } else {
            Err(HeadroomShort {
                given,
                required,
                terms: self,
            })
        }
    }
}

/// The headroom (bytes) a lossless (port, priority) on a link of `rate`
/// needs so that nothing is lost after it sends XOFF.
pub fn required_headroom(rate: Rate, cable_delay: Time, response: Time, mtu: u32) -> Bytes {
    HeadroomTerms::new(rate, cable_delay, response, mtu).total()
}

/// `given` bytes of headroom suffice for the link, or what they fall short of.
pub fn check_headroom(
    given: Bytes,
    rate: Rate,
    cable_delay: Time,
    response: Time,
    mtu: u32,
) -> Result<(), HeadroomShort> {
    HeadroomTerms::new(rate, cable_delay, response, mtu).check(given)
}

/// A headroom below what the round trip needs, with the terms that make it
/// up; the scenario layer adds where it was configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomShort {
    pub given: Bytes,
    pub required: Bytes,
    pub terms: HeadroomTerms,
}

impl fmt::Display for HeadroomShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.terms;
        write!(
            f,
            "headroom {} is below the {} the round trip needs: \
             2 × {} × {} = {} (cable, both ways) \
             + 2 × {} B = {} B (the frame ahead of the XOFF, the upstream's frame in flight) \
             + {} B (the XOFF frame) \
             + {} × {} = {} (response)",
            self.given,
            self.required,
            t.cable_delay,
            t.rate,
            Bytes(2 * t.propagation.0),
            t.mtu,
            2 * t.mtu as u64,
            PFC_FRAME_BYTES,
            t.response_time,
            t.rate,
            t.response,
        )?;
        if t.trigger.0 > 0 {
            write!(
                f,
                " + {} (the frame that finds the threshold passed)",
                t.trigger
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for HeadroomShort {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cable_delay_is_5_ns_per_metre() {
        assert_eq!(cable_delay(100), Time::from_ns(500));
        assert_eq!(cable_delay(0), Time::ZERO);
    }

    #[test]
    fn headroom_at_100_gbps_over_100_m_with_jumbo_frames() {
        // 500 ns × 100 Gb/s = 50,000 bits = 6,250 B each way: 12,500 B
        // 1 us × 100 Gb/s = 100,000 bits = 12,500 B of response
        // 2 × 9,216 B = 18,432 B, plus the 64 B XOFF frame
        // 12,500 + 18,432 + 64 + 12,500 = 43,496 B
        let t = HeadroomTerms::new(Rate::gbps(100), cable_delay(100), Time::from_us(1), 9216);
        assert_eq!((t.propagation, t.response), (Bytes(6_250), Bytes(12_500)));
        assert_eq!(
            required_headroom(Rate::gbps(100), cable_delay(100), Time::from_us(1), 9216),
            Bytes(43_496)
        );
    }

    #[test]
    fn headroom_of_study_a() {
        // 0.5 us × 10 Gb/s = 5,000 bits = 625 B each way: 1,250 B
        // 1 us × 10 Gb/s = 1,250 B of response
        // 2 × 1,500 B = 3,000 B, plus 64 B
        // 1,250 + 3,000 + 64 + 1,250 = 5,564 B
        let (r10, half_us) = (Rate::gbps(10), Time::from_ns(500));
        assert_eq!(
            required_headroom(r10, half_us, Time::from_us(1), 1500),
            Bytes(5_564)
        );
        // docs/model.md's 6,814 B adds the switch's 1 us latency (1,250 B)
        // to the response time. Study A leaves 153,600 − 136,192 = 17,408 B.
        assert_eq!(
            required_headroom(r10, half_us, Time::from_us(2), 1500),
            Bytes(6_814)
        );
        assert_eq!(
            check_headroom(Bytes(17_408), r10, half_us, Time::from_us(2), 1500),
            Ok(())
        );
    }

    #[test]
    fn terms_are_rounded_up() {
        // 1 ps at 10 Gb/s is 0.01 bit: one byte.
        let t = HeadroomTerms::new(Rate::gbps(10), Time(1), Time(1), 0);
        assert_eq!((t.propagation, t.response), (Bytes(1), Bytes(1)));
        assert_eq!(t.total(), Bytes(2 + 64 + 1));
    }

    #[test]
    fn too_little_headroom_lists_the_terms() {
        let (r, d, resp) = (Rate::gbps(100), cable_delay(100), Time::from_us(1));
        assert_eq!(check_headroom(Bytes(43_496), r, d, resp, 9216), Ok(()));
        let e = check_headroom(Bytes(20_000), r, d, resp, 9216).unwrap_err();
        assert_eq!((e.given, e.required), (Bytes(20_000), Bytes(43_496)));
        assert_eq!(e.terms.propagation, Bytes(6_250));
        assert_eq!(e.terms.response, Bytes(12_500));
        assert_eq!(e.terms.mtu, 9216);
        assert_eq!(
            e.to_string(),
            "headroom 20000 B is below the 43496 B the round trip needs: \
             2 × 500ns × 100Gbps = 12500 B (cable, both ways) \
             + 2 × 9216 B = 18432 B (the frame ahead of the XOFF, the upstream's frame in flight) \
             + 64 B (the XOFF frame) \
             + 1us × 100Gbps = 12500 B (response)"
        );
    }
}
