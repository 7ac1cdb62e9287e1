//! Units: time in integer picoseconds, sizes in bytes, rates in bit/s.
//!
//! Parsing is exact decimal arithmetic ("0.5us" is exactly 500,000 ps, "4.8Gbps"
//! exactly 4,800,000,000 bit/s); floats never enter time.

use std::fmt;

/// Simulated time or duration, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

impl std::ops::Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}

impl std::ops::Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps % 1_000_000_000 == 0 {
            write!(f, "{}ms", ps / 1_000_000_000)
        } else if ps % 1_000_000 == 0 {
            write!(f, "{}us", ps / 1_000_000)
        } else if ps % 1_000 == 0 {
            write!(f, "{}ns", ps / 1_000)
        } else {
            write!(f, "{}ps", ps)
        }
    }
}

/// A link or sending rate in bit/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    /// Time to put `bytes` on the wire at this rate, rounded up to the next picosecond.
    pub fn tx_time(self, bytes: u64) -> Time {
        let num = bytes as u128 * 8 * Time::PS_PER_S as u128;
        Time(num.div_ceil(self.0 as u128) as u64)
    }
    /// Time for `bits` bit times at this rate (PAUSE quanta are 512 bit times).
    pub fn bit_times(self, bits: u64) -> Time {
        let num = bits as u128 * Time::PS_PER_S as u128;
        Time(num.div_ceil(self.0 as u128) as u64)
    }
    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else {
            write!(f, "{}bps", b)
        }
    }
}

/// A size in bytes: a threshold, a buffer, a sampling interval. Frames
/// keep their size as a plain `u32` (it is their own field, and per-frame
/// arithmetic stays in integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

/// A bit rate in bit/s held as a float, for schemes whose rate arithmetic
/// is in floating point (QCN's reaction point).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, serde::Serialize)]
#[serde(transparent)]
pub struct RateF64(pub f64);

impl From<Rate> for RateF64 {
    fn from(r: Rate) -> RateF64 {
        RateF64(r.0 as f64)
    }
}

/// Why a unit string was rejected; the caller adds the field and location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    pub expected: &'static str,
    pub found: String,
    pub detail: Option<String>,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, found '{}'", self.expected, self.found)?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

/// Split "4.8Gbps" into ("4.8", "Gbps"); the number may not be signed but
/// may have a decimal exponent ("1e3Gbps", "1.5e-3s").
fn split_number(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut end = b
        .iter()
        .position(|c| !(c.is_ascii_digit() || *c == b'.'))
        .unwrap_or(b.len());
    if end == 0 {
        return None;
    }
    // An exponent only when digits follow, so that a unit may still start with 'e'.
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let digits = b[end + 1 + sign..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            end += 1 + sign + digits;
        }
    }
    Some((&s[..end], s[end..].trim()))
}

/// Why a number was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberError {
    NotANumber,
    NotWhole,
    /// Above the largest value the unit's type holds.
    OutOfRange,
}

/// Exact value of decimal `num` (with an optional exponent) times `scale`,
/// if it is a whole number that fits in a u64.
fn exact_decimal(num: &str, scale: u128) -> Result<u64, NumberError> {
    let (mantissa, exponent) = match num.find(['e', 'E']) {
        Some(i) => (
            &num[..i],
            num[i + 1..]
                .parse::<i64>()
                .map_err(|_| NumberError::OutOfRange)?,
        ),
        None => (num, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(NumberError::NotANumber);
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    // value = digits * scale * 10^shift
    let shift = exponent.saturating_sub(frac.len() as i64);
    if digits.is_empty() {
        return Ok(0);
    }
    let (digits, shift) = {
        // Trailing zeros of the digits only make the shift smaller.
        let trimmed = digits.trim_end_matches('0');
        (
            trimmed,
            shift.saturating_add((digits.len() - trimmed.len()) as i64),
        )
    };
    // A u64 has 20 digits: more significant digits, or a shift beyond
    // that, cannot fit (and a negative shift beyond it cannot be whole).
    if digits.len() > 40 || shift > 40 {
        return Err(NumberError::OutOfRange);
    }
    if shift < -40 {
        return Err(NumberError::NotWhole);
    }
    let mantissa: u128 = digits.parse().map_err(|_| NumberError::OutOfRange)?;
    let value = mantissa.checked_mul(scale).ok_or(NumberError::OutOfRange)?;
    let value = if shift >= 0 {
        10u128
            .checked_pow(shift as u32)
            .and_then(|p| value.checked_mul(p))
            .ok_or(NumberError::OutOfRange)?
    } else {
        // A power of ten beyond a u128 is more than any non-zero value.
        match 10u128.checked_pow((-shift) as u32) {
            Some(denom) if value % denom == 0 => value / denom,
            _ => return Err(NumberError::NotWhole),
        }
    };
    u64::try_from(value).map_err(|_| NumberError::OutOfRange)
}

/// The message for a number that was not accepted; `largest` is the
/// largest value of the unit's type, as written in the file.
fn number_err(expected: &'static str, found: &str, e: NumberError, largest: &str) -> UnitError {
    let detail = match e {
        NumberError::NotANumber => "not a number".to_string(),
        NumberError::NotWhole => "not a whole number of the base unit".to_string(),
        NumberError::OutOfRange => format!("out of range: at most {largest}"),
    };
    UnitError {
        expected,
        found: found.to_string(),
        detail: Some(detail),
    }
}

fn unit_err(expected: &'static str, found: &str, detail: Option<&str>) -> UnitError {
    UnitError {
        expected,
        found: found.to_string(),
        detail: detail.map(str::to_string),
    }
}

const TIME_EXPECTED: &str = "a time like '0.5us', '5ms' or '100ns' (units ps, ns, us, ms, s)";
const RATE_EXPECTED: &str = "a rate like '10Gbps' or '500Mbps' (units bps, Kbps, Mbps, Gbps, Tbps)";
const SIZE_EXPECTED: &str =
    "a size like '1500B', '150KB', '150KiB' or '375pages' (units B, KB, MB, KiB, MiB, pages of 64 B)";

/// The largest values (u64::MAX of the base unit), as a file would write them.
const TIME_LARGEST: &str = "18446744.073709551615s";
const RATE_LARGEST: &str = "18446744073.709551615Gbps";
const SIZE_LARGEST: &str = "18446744073709551615B";

pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    let (num, unit) = split_number(s).ok_or_else(|| unit_err(TIME_EXPECTED, s, None))?;
    let scale: u128 = match unit {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        "" => return Err(unit_err(TIME_EXPECTED, s, Some("missing unit"))),
        _ => return Err(unit_err(TIME_EXPECTED, s, Some("unknown unit"))),
    };
    exact_decimal(num, scale)
        .map(Time)
        .map_err(|e| number_err(TIME_EXPECTED, s, e, TIME_LARGEST))
}

pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let compact: String = s.trim().replace("b/s", "bps");
    let (num, unit) = split_number(&compact).ok_or_else(|| unit_err(RATE_EXPECTED, s, None))?;
    let scale: u128 = match unit {
        "bps" => 1,
        "Kbps" | "kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        "Tbps" => 1_000_000_000_000,
        "" => return Err(unit_err(RATE_EXPECTED, s, Some("missing unit"))),
        _ => return Err(unit_err(RATE_EXPECTED, s, Some("unknown unit"))),
    };
    let v = exact_decimal(num, scale).map_err(|e| number_err(RATE_EXPECTED, s, e, RATE_LARGEST))?;
    if v == 0 {
        return Err(unit_err("a rate above zero", s, None));
    }
    Ok(Rate(v))
}

/// Parse a size; `kilobyte` is what "KB" means in this scenario (1000 or 1024).
pub fn parse_size(s: &str, kilobyte: u64) -> Result<u64, UnitError> {
    let (num, unit) = split_number(s).ok_or_else(|| unit_err(SIZE_EXPECTED, s, None))?;
    let k = kilobyte as u128;
    let scale: u128 = match unit {
        "B" => 1,
        "KB" | "kB" => k,
        "MB" => k * k,
        "KiB" => 1024,
        "MiB" => 1024 * 1024,
        // Congestion-notification arithmetic counts 64-byte pages.
        "page" | "pages" => 64,
        "" => return Err(unit_err(SIZE_EXPECTED, s, Some("missing unit"))),
        _ => return Err(unit_err(SIZE_EXPECTED, s, Some("unknown unit"))),
    };
    exact_decimal(num, scale).map_err(|e| number_err(SIZE_EXPECTED, s, e, SIZE_LARGEST))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact() {
        assert_eq!(parse_time("0.5us").unwrap(), Time(500_000));
        assert_eq!(parse_time("5ms").unwrap(), Time(5_000_000_000));
        assert_eq!(parse_time("1.2 us").unwrap(), Time(1_200_000));
        assert_eq!(parse_time("100ns").unwrap(), Time(100_000));
        assert_eq!(parse_time("0s").unwrap(), Time(0));
        assert!(parse_time("0.0001ps").is_err());
        assert!(parse_time("5").is_err());
        assert!(parse_time("5 min").is_err());
        assert!(parse_time("-1ms").is_err());
    }

    #[test]
    fn rates_and_sizes_are_exact() {
        assert_eq!(parse_rate("10Gbps").unwrap(), Rate(10_000_000_000));
        assert_eq!(parse_rate("4.8Gbps").unwrap(), Rate(4_800_000_000));
        assert_eq!(parse_rate("500 Mb/s").unwrap(), Rate(500_000_000));
        assert!(parse_rate("10 Gbs").is_err());
        assert!(parse_rate("0Gbps").is_err());
        assert_eq!(parse_size("150KB", 1024).unwrap(), 153_600);
        assert_eq!(parse_size("375pages", 1000).unwrap(), 24_000);
        assert_eq!(parse_size("150KB", 1000).unwrap(), 150_000);
        assert_eq!(parse_size("136192B", 1000).unwrap(), 136_192);
        assert_eq!(parse_size("112.5KB", 1000).unwrap(), 112_500);
        assert_eq!(parse_size("1.5KiB", 1000).unwrap(), 1536);
        assert!(parse_size("1.5B", 1000).is_err());
    }

    #[test]
    fn exponents_are_exact_and_the_range_is_that_of_a_u64() {
        assert_eq!(parse_rate("1e1Gbps").unwrap(), Rate::gbps(10));
        assert_eq!(parse_rate("2.5E3Mbps").unwrap(), Rate(2_500_000_000));
        assert_eq!(parse_time("1.5e-3s").unwrap(), Time::from_us(1500));
        assert_eq!(parse_time("18446744.073709551615s").unwrap(), Time::MAX);
        assert_eq!(parse_size("0e999B", 1000).unwrap(), 0);
        for bad in [
            "18446744.073709551616s",
            "1e9s",
            "99999999999999999999999999999999999999999ps",
            "1e99999999999999999999s",
        ] {
            let e = parse_time(bad).unwrap_err().to_string();
            assert!(
                e.contains("out of range: at most 18446744.073709551615s"),
                "{e}"
            );
        }
        assert!(parse_time("1e-13s")
            .unwrap_err()
            .to_string()
            .contains("not a whole number"));
        assert!(parse_time("1e-99999s")
            .unwrap_err()
            .to_string()
            .contains("not a whole number"));
        assert!(parse_size("1e30MB", 1000)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(parse_rate("1e30Gbps")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        // Not an exponent: no digits after the 'e'.
        assert!(parse_time("5e")
            .unwrap_err()
            .to_string()
            .contains("unknown unit"));
    }

    #[test]
    fn serialization_time_of_a_1500_byte_frame_at_10g_is_1_2_us() {
        assert_eq!(Rate::gbps(10).tx_time(1500), Time(1_200_000));
        assert_eq!(Rate::gbps(10).bit_times(512 * 0xFFFF), Time(3_355_392_000));
        // Rounded up, never down: 1 byte at 3 bit/s is 8/3 s.
        assert_eq!(Rate(3).tx_time(1), Time(2_666_666_666_667));
    }
}
