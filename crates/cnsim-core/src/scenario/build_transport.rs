//! The `[tcp]` and `[roce]` sections: the parameters shared by every source
//! with `transport = "tcp"` or `"roce"` (each source's payload per segment
//! is its frame size less the header).

use super::build::Builder;
use super::error::{FieldPath, ScenarioError};
use super::schema::{RawRoce, RawTcp, TcpEcnKind};
use crate::transport::roce::RoceParams;
use crate::transport::tcp::{DelayedAck, TcpEcn, TcpParams};
use crate::units::Time;

impl Builder<'_> {
    pub(super) fn tcp(&self, raw: &RawTcp) -> Result<TcpParams, ScenarioError> {
        let tp = FieldPath::root().key("tcp");
        let d = TcpParams::default();
        let time = |v: &Option<String>, key: &str, default: Time| match v {
            Some(s) => self.time(s, &tp.key(key)),
            None => Ok(default),
        };
        let header = match &raw.header {
            Some(s) => self.size(s, &tp.key("header"))?,
            None => d.header as u64,
        };
        if header > 1024 {
            return Err(self.err(
                &tp.key("header"),
                format!("expected a header of at most 1024 B, found {header} B"),
            ));
        }
        let ack_bytes = match &raw.ack {
            Some(s) => self.frame_size(s, &tp.key("ack"))?,
            None => d.ack_bytes,
        };
        let initial_window = raw.initial_window.unwrap_or(d.initial_window);
        if initial_window == 0 {
            return Err(self.err(
                &tp.key("initial_window"),
                "expected at least one segment, found 0",
            ));
        }
        let initial_ssthresh = match raw.initial_ssthresh.as_deref() {
            None => d.initial_ssthresh,
            Some("unlimited") => u64::MAX,
            Some(s) => self.size(s, &tp.key("initial_ssthresh"))?,
        };
        let rwnd = match &raw.rwnd {
            Some(s) => self.size(s, &tp.key("rwnd"))?,
            None => d.rwnd,
        };
        let min_rto = time(&raw.min_rto, "min_rto", d.min_rto)?;
        let max_rto = time(&raw.max_rto, "max_rto", d.max_rto)?;
        let initial_rto = time(&raw.initial_rto, "initial_rto", d.initial_rto)?;
        if min_rto == Time::ZERO {
            return Err(self.err(&tp.key("min_rto"), "expected a time above zero, found 0"));
        }
        if max_rto < min_rto {
            return Err(self.err(
                &tp.key("max_rto"),
                format!("expected at least min_rto ({min_rto}), found {max_rto}"),
            ));
        }
        let delayed_ack = if raw.delayed_ack.unwrap_or(d.delayed_ack.is_some()) {
            let dd = d.delayed_ack.unwrap_or(DelayedAck {
                segments: 2,
                timeout: Time::from_ms(40),
            });
            let segments = raw.delayed_ack_segments.unwrap_or(dd.segments);
            if segments == 0 {
                return Err(self.err(
                    &tp.key("delayed_ack_segments"),
                    "expected at least one segment, found 0",
                ));
            }
            let timeout = time(&raw.delayed_ack_timeout, "delayed_ack_timeout", dd.timeout)?;
            Some(DelayedAck { segments, timeout })
        } else {
            for (key, given) in [
                ("delayed_ack_segments", raw.delayed_ack_segments.is_some()),
                ("delayed_ack_timeout", raw.delayed_ack_timeout.is_some()),
            ] {
                if given {
                    return Err(self.err(
                        &tp.key(key),
                        format!("'{key}' applies only with delayed_ack = true"),
                    ));
                }
            }
            None
        };
        let dupack_threshold = raw.dupack_threshold.unwrap_or(d.dupack_threshold);
        if dupack_threshold == 0 {
            return Err(self.err(
                &tp.key("dupack_threshold"),
                "expected at least one duplicate ACK, found 0",
            ));
        }
        let ecn = match raw.ecn.unwrap_or(TcpEcnKind::Off) {
            TcpEcnKind::Off | TcpEcnKind::Classic => {
                for (key, given) in [
                    ("dctcp_g", raw.dctcp_g.is_some()),
                    ("dctcp_alpha", raw.dctcp_alpha.is_some()),
                ] {
                    if given {
                        return Err(self.err(
                            &tp.key(key),
                            format!("'{key}' applies only with ecn = \"dctcp\""),
                        ));
                    }
                }
                if raw.ecn == Some(TcpEcnKind::Classic) {
                    TcpEcn::Classic
                } else {
                    TcpEcn::Off
                }
            }
            TcpEcnKind::Dctcp => {
                let TcpEcn::Dctcp { g, initial_alpha } = TcpEcn::DCTCP else {
                    unreachable!("the defaults are DCTCP's")
                };
                let g = raw.dctcp_g.unwrap_or(g);
                if !(g > 0.0 && g <= 1.0) {
                    return Err(self.err(
                        &tp.key("dctcp_g"),
                        format!("expected a gain in (0, 1], found {g}"),
                    ));
                }
                let initial_alpha = raw.dctcp_alpha.unwrap_or(initial_alpha);
                if !(0.0..=1.0).contains(&initial_alpha) {
                    return Err(self.err(
                        &tp.key("dctcp_alpha"),
                        format!("expected a fraction in [0, 1], found {initial_alpha}"),
                    ));
                }
                TcpEcn::Dctcp { g, initial_alpha }
            }
        };
        Ok(TcpParams {
            header: header as u32,
            ack_bytes,
            initial_window,
            initial_ssthresh,
            rwnd,
            min_rto,
            max_rto,
            initial_rto,
            granularity: time(&raw.granularity, "granularity", d.granularity)?,
            delayed_ack,
            dupack_threshold,
            ecn,
            ..d
        })
    }

    /// The `[roce]` section.
    pub(super) fn roce(&self, raw: &RawRoce) -> Result<RoceParams, ScenarioError> {
        let rp = FieldPath::root().key("roce");
        let d = RoceParams::default();
        let header = match &raw.header {
            Some(s) => self.size(s, &rp.key("header"))?,
            None => d.header as u64,
        };
        if header > 1024 {
            return Err(self.err(
                &rp.key("header"),
                format!("expected a header of at most 1024 B, found {header} B"),
            ));
        }
        let positive_time = |v: &Option<String>, key: &str, default: Time| {
            let t = match v {
                Some(s) => self.time(s, &rp.key(key))?,
                None => default,
            };
            if t == Time::ZERO {
                return Err(self.err(&rp.key(key), "expected a time above zero, found 0"));
            }
            Ok(t)
        };
        let ack_every = raw.ack_every.unwrap_or(d.ack_every);
        if ack_every == 0 {
            return Err(self.err(
                &rp.key("ack_every"),
                "expected at least one segment, found 0",
            ));
        }
        let window = match raw.window.as_deref() {
            None | Some("unlimited") => d.window,
            Some(s) => match self.size(s, &rp.key("window"))? {
                0 => {
                    return Err(
                        self.err(&rp.key("window"), "expected a window above zero, found 0 B")
                    )
                }
                w => w,
            },
        };
        Ok(RoceParams {
            mtu: d.mtu,
            header: header as u32,
            ack_bytes: match &raw.ack {
                Some(s) => self.frame_size(s, &rp.key("ack"))?,
                None => d.ack_bytes,
            },
            ack_every,
            ack_timeout: positive_time(&raw.ack_timeout, "ack_timeout", d.ack_timeout)?,
            rto: positive_time(&raw.rto, "rto", d.rto)?,
            nak_interval: positive_time(&raw.nak_interval, "nak_interval", d.nak_interval)?,
            window,
        })
    }
}
